/**
 * The CDK app (cdk.json: `npx tsx infra/app.ts`). `npm run synth` / `npm run deploy` run it
 * through the CDK CLI, which passes context (-c key=value) and the output directory.
 *
 * Unless context `assetDir` names a prebuilt bundle, it first bundles every handler with one
 * esbuild call (scripts/build.ts) into dist/lambda, so a synth never packages stale code.
 */
import { App } from 'aws-cdk-lib';
import { buildFunctions } from '../scripts/build.js';
import { readSettings } from './settings.js';
import { addStacks } from './stacks.js';

const app = new App();
const settings = readSettings(app.node);
const assetDir = settings.assetDir ?? (await buildFunctions()).outDir;
addStacks(app, { assetDir });
app.synth();
