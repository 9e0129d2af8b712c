/**
 * The CDK app (cdk.json: `npx tsx infra/app.ts`). `npm run synth` / `npm run deploy` run it
 * through the CDK CLI, which passes context (-c key=value) and the output directory.
 *
 * Unless context `assetDir` names a prebuilt bundle, it first bundles every handler module
 * into its own code asset (infra/bundle.ts) under dist/lambda, so a synth never packages
 * stale code. Context `sourceMaps=true` ships source maps too.
 */
import { App } from 'aws-cdk-lib';
import { buildFunctions } from './bundle.js';
import { readSettings } from './settings.js';
import { addStacks } from './stacks.js';

const app = new App();
const settings = readSettings(app.node);
const assetDir = settings.assetDir ?? (await buildFunctions({ sourceMaps: settings.sourceMaps })).outDir;
addStacks(app, { assetDir });
app.synth();
