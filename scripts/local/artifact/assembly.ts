/**
 * The cloud assembly as `cdk deploy` would receive it: the handler bundles built by
 * infra/bundle.ts, the app synthesized by infra/stacks.ts into a cdk.out directory, and a
 * reader for its templates (the two stacks and every nested stack) with their asset files.
 *
 * Nothing here knows the app's construct tree: everything the artifact runtime serves is
 * read back from the synthesized JSON, the way CloudFormation and the CDK CLI read it.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildFunctions } from '../../../infra/bundle.js';
import { addStacks, synthWithoutTemplateValidation } from '../../../infra/stacks.js';
import { keepBundleMaps } from './bundle-maps.js';

/** A CloudFormation resource as synthesized. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly Metadata?: Record<string, any>;
}

export interface Template {
  /** The stack's name (`secrets-api-api`, or `<parent>/<logical id>` for a nested stack). */
  readonly name: string;
  readonly file: string;
  readonly resources: Readonly<Record<string, CfnResource>>;
  readonly outputs: Readonly<Record<string, { Value: unknown; Export?: { Name: unknown } }>>;
  /** For a nested stack: its parent template and the parameter values the parent passes. */
  readonly parent?: { readonly template: Template; readonly passed: Readonly<Record<string, unknown>> };
}

export interface Assembly {
  readonly dir: string;
  readonly templates: readonly Template[];
  /** The directory (or file) an asset path in the templates' metadata names. */
  assetPath(resource: CfnResource, what: string): string;
}

/**
 * Builds every handler bundle and synthesizes the app into `<workDir>/cdk.out`, as `cdk synth`
 * does. With `coverageDir` (`npm run coverage -- --project artifact`), the bundles get source maps that are moved out of the
 * assets into that directory before the synth (scripts/coverage/artifact.ts): the assets stay
 * byte for byte what a build without maps ships.
 */
export async function synthesizeArtifact(
  workDir: string,
  context: Record<string, unknown>,
  log: NodeJS.WritableStream = process.stdout,
  coverageDir?: string,
): Promise<string> {
  const assetDir = (await buildFunctions({ outDir: join(workDir, 'lambda'), ...(coverageDir ? { sourceMaps: 'external' as const } : {}) })).outDir;
  if (coverageDir) keepBundleMaps(assetDir, coverageDir);
  log.write('[start] synthesizing the app (cdk synth)\n'); // a step of its own (scripts/local/start.ts)
  const outdir = join(workDir, 'cdk.out');
  mkdirSync(outdir, { recursive: true });
  // As the CLI does: asset metadata names each asset's and nested template's file.
  const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true, ...context } });
  addStacks(app, { assetDir });
  // the templates are validated by the suite's infra tier; here they are only served
  synthWithoutTemplateValidation(app);
  return outdir;
}

/** Reads a synthesized cloud assembly: its stacks (manifest.json) and their nested stacks. */
export function readAssembly(dir: string): Assembly {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string }; displayName?: string }>;
  };
  const templates: Template[] = [];
  const load = (name: string, file: string, parent?: Template['parent']): void => {
    const json = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { Resources?: Template['resources']; Outputs?: Template['outputs'] };
    const template: Template = { name, file, resources: json.Resources ?? {}, outputs: json.Outputs ?? {}, ...(parent ? { parent } : {}) };
    templates.push(template);
    for (const [id, r] of Object.entries(template.resources)) {
      if (r.Type !== 'AWS::CloudFormation::Stack') continue;
      const nested = r.Metadata?.['aws:asset:path'] as string | undefined;
      if (!nested) throw new Error(`${name}/${id}: nested stack without aws:asset:path metadata`);
      load(`${name}/${id}`, nested, { template, passed: (r.Properties?.Parameters ?? {}) as Record<string, unknown> });
    }
  };
  for (const [id, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile) load(id, artifact.properties.templateFile);
  }
  if (templates.length === 0) throw new Error(`${dir}: no CloudFormation stacks in manifest.json`);
  return {
    dir,
    templates,
    assetPath(resource, what) {
      const path = resource.Metadata?.['aws:asset:path'] as string | undefined;
      if (!path) throw new Error(`${what}: no aws:asset:path metadata (synthesize with aws:cdk:enable-asset-metadata)`);
      const full = resolve(dir, path);
      if (!existsSync(full)) throw new Error(`${what}: asset ${path} is missing from ${dir}`);
      return full;
    },
  };
}
