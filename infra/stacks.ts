import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from 'aws-cdk-lib';
import { readManifest } from './code.js';
import { addAwsSolutionsChecks } from './nag.js';
import { ROUTES, type Route } from '../lib/routes.js';
import { ApiStack } from './api-stack.js';
import { DataStack } from './data-stack.js';
import { readSettings, type Settings } from './settings.js';

const STRONG_REFS = '@aws-cdk/core:defaultCrossStackReferences';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface Deployment {
  readonly settings: Settings;
  readonly data: DataStack;
  readonly api: ApiStack;
}

/**
 * The whole deployment on an App: the stateful stack, the API stack with its nested stacks,
 * and cdk-nag's AwsSolutions pack over everything (findings are errors at synth; each
 * remaining one is suppressed next to its resource with a reason). Stacks are
 * environment-agnostic (no account or region at synth): synthesis needs no AWS account
 * and makes no lookups.
 */
export function addStacks(app: App, options: { assetDir: string; routes?: readonly Route[] }): Deployment {
  const settings = readSettings(app.node);
  if (settings.sourceMaps && readManifest(options.assetDir)?.sourceMaps === false) {
    throw new Error(`context sourceMaps=true, but the code assets in ${options.assetDir} were built without source maps (npm run build -- --source-maps)`);
  }
  // Cross-stack references (data stack -> API stack) as CloudFormation exports, which keep
  // the data stack from dropping a value the API still uses. Stated, not defaulted.
  if (app.node.tryGetContext(STRONG_REFS) === undefined) app.node.setContext(STRONG_REFS, 'strong');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const data = new DataStack(app, `${settings.name}-data`, {
    description: `${settings.name}: table, envelope key, queues (retained on delete)`,
    settings,
  });
  const api = new ApiStack(app, `${settings.name}-api`, {
    description: `${settings.name}: REST API, one Lambda function per route`,
    settings,
    data,
    routes: options.routes ?? ROUTES,
    assetDir: options.assetDir,
    serviceVersion: version,
  });
  addAwsSolutionsChecks(app);
  return { settings, data, api };
}

/**
 * Synthesizes `app` without CDK's built-in CloudFormation template validation
 * (@aws/cloudformation-validate, which aws-cdk-lib runs on every synth unless CDK_VALIDATION is
 * "false"): for the suite's repeated syntheses of templates one test already validates
 * (test/infra/app.test.ts) and for the local artifact runtime. Measured on the whole route
 * table: 5.7 of the synth's 12 CPU seconds. `cdk synth` and `cdk deploy` keep it; cdk-nag, a
 * plugin of our own (infra/nag.ts), runs either way.
 */
export function synthWithoutTemplateValidation(app: App): void {
  const before = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = 'false';
  try {
    app.synth();
  } finally {
    if (before === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = before;
  }
}
