/**
 * Bundles every Lambda handler module with ONE esbuild call (`npm run build`; `npm run synth`
 * runs it too). Entry points: each module named by the handler column of lib/routes.ts, the
 * background functions of infra/background.ts, and functions/not-implemented.ts. Output
 * (default dist/lambda, or the first argument):
 *
 *   <folder>/<module>.mjs (+ .map)   one ES module per handler module, same layout as functions/
 *   chunks/*.mjs                     code shared between modules (lib/, zod, the AWS SDK, ...)
 *   build-manifest.json              modules, their exports and sizes (for inspection and tests)
 *
 * Every function uses this one directory as its code asset (Code.fromAsset in infra/),
 * so it is uploaded once; code splitting keeps shared code in chunks instead of copying it
 * into every module, and a function loads only its own module and the chunks it imports.
 *
 * Decisions:
 * - ESM (.mjs), platform node, target node20 (runs on the nodejs22.x runtime), minified,
 *   tree-shaken, with linked source maps (functions run with NODE_OPTIONS=--enable-source-maps).
 * - A banner defines `require` (createRequire) so that CommonJS dependencies bundled into ESM
 *   can still require Node built-ins.
 * - @aws-sdk/* is BUNDLED, not taken from the runtime: the versions that run in Lambda are the
 *   ones the lockfile pins and the tests exercise (the runtime's copy changes under us), and a
 *   tree-shaken, bundled client loads faster than the runtime's unbundled node_modules.
 * - pkcs11js is a native addon: external here, delivered with the CloudHSM PKCS#11 library by
 *   the HSM layer (/opt/nodejs/node_modules/pkcs11js, see README "Deploying to AWS"). No
 *   handler module may import it statically: functions without the layer (every route
 *   without the `hsm` grant, and signing routes deployed without the HSM context) would fail
 *   at load with ERR_MODULE_NOT_FOUND instead of answering. Load it lazily (`await
 *   import('pkcs11js')` where the backend connects); the build checks this and fails.
 * - Every handler export named in lib/routes.ts must exist in its built module (checked from
 *   esbuild's metafile), so a typo in the route table fails the build, not a deployment.
 */
import { build, type Metafile } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES, type Route } from '../lib/routes.js';
import { BACKGROUND_JOBS, type BackgroundJob } from '../infra/background.js';
import { handlerModules, lambdaEntry } from '../infra/handlers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(ROOT, 'dist', 'lambda');

/** Not bundled, with the reason. */
export const EXTERNAL: Readonly<Record<string, string>> = {
  pkcs11js: 'native addon; shipped in the HSM layer next to the CloudHSM PKCS#11 library',
  'pg-native': "optional native binding of pg, which falls back to pure JS when it is missing",
};

/** The externals that are native addons (delivered by a layer, absent elsewhere). */
const NATIVE = ['pkcs11js'];

export interface BuildResult {
  readonly outDir: string;
  readonly modules: readonly string[];
  readonly milliseconds: number;
  readonly bytes: number;
}

export interface BuildOptions {
  readonly outDir?: string;
  readonly routes?: readonly Route[];
  /** Where handler modules live (default functions/; tests point it at fixtures). */
  readonly functionsDir?: string;
  /** Background functions (infra/background.ts) built alongside the routes. */
  readonly jobs?: readonly BackgroundJob[];
}

/** A background job as a pseudo-route, so the same checks apply to it. */
const jobRoute = (job: BackgroundJob): Route =>
  ({ key: `job ${job.id}`, handler: job.handler, grants: job.grants, method: 'POST', path: `/${job.slug}` }) as unknown as Route;

export async function buildFunctions(options: BuildOptions = {}): Promise<BuildResult> {
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const routes = [...(options.routes ?? ROUTES), ...(options.jobs ?? BACKGROUND_JOBS).map(jobRoute)];
  const functionsDir = resolve(options.functionsDir ?? join(ROOT, 'functions'));
  const modules = handlerModules(routes);
  const started = Date.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(modules.map((m) => [m, join(functionsDir, `${m}.ts`)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // ESM builds first: smaller after tree-shaking (the AWS SDK ships both)
    mainFields: ['module', 'main'],
    minify: true,
    treeShaking: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    external: Object.keys(EXTERNAL),
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
  });

  checkExports(result.metafile, outDir, routes);
  checkNativeImports(result.metafile, outDir, routes);

  let bytes = 0;
  const externals = new Set<string>();
  for (const out of Object.values(result.metafile.outputs)) {
    bytes += out.bytes;
    for (const imp of out.imports) if (imp.external) externals.add(`${imp.path} (${imp.kind})`);
  }
  const manifest = {
    modules: Object.fromEntries(
      modules.map((m) => {
        const out = result.metafile.outputs[outputKey(outDir, m)]!;
        return [m, { file: `${m}.mjs`, exports: out.exports, bytes: out.bytes }];
      }),
    ),
    totalBytes: bytes,
    /** Imports left to the runtime: Node built-ins and the native addon. */
    externals: [...externals].sort(),
  };
  writeFileSync(join(outDir, 'build-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { outDir, modules, milliseconds: Date.now() - started, bytes };
}

/** The metafile's key of a module's output (paths relative to the working directory). */
function outputKey(outDir: string, module: string): string {
  return relative(ROOT, join(outDir, `${module}.mjs`)).split('\\').join('/');
}

function checkExports(meta: Metafile, outDir: string, routes: readonly Route[]): void {
  const problems: string[] = [];
  for (const route of [...routes, { key: 'not implemented', handler: null } as Route]) {
    const { module, exportName } = lambdaEntry(route);
    const out = meta.outputs[outputKey(outDir, module)];
    if (!out) problems.push(`${route.key}: no output for functions/${module}.ts`);
    else if (!out.exports.includes(exportName)) problems.push(`${route.key}: functions/${module}.ts has no export "${exportName}"`);
  }
  if (problems.length) throw new Error(`build: the route table names missing handlers:\n  ${problems.join('\n  ')}`);
}

/** No handler module may statically import a native addon (see the header). */
function checkNativeImports(meta: Metafile, outDir: string, routes: readonly Route[]): void {
  const staticExternals = (file: string, seen = new Set<string>()): string[] => {
    if (seen.has(file)) return [];
    seen.add(file);
    const found: string[] = [];
    for (const imp of meta.outputs[file]?.imports ?? []) {
      if (imp.kind !== 'import-statement') continue;
      if (imp.external) {
        if (imp.path in EXTERNAL) found.push(imp.path);
      } else found.push(...staticExternals(imp.path, seen));
    }
    return found;
  };
  const problems: string[] = [];
  for (const module of handlerModules(routes)) {
    const natives = staticExternals(outputKey(outDir, module)).filter((p) => NATIVE.includes(p));
    if (natives.length) {
      const served = routes.filter((r) => lambdaEntry(r).module === module).map((r) => r.key);
      problems.push(
        `functions/${module}.ts statically imports the native addon ${natives[0]}, so its functions (${served.join(', ')}) ` +
          `cannot even load without the HSM layer; import it lazily (await import('${natives[0]}')) where it is first needed`,
      );
    }
  }
  if (problems.length) throw new Error(`build:\n  ${problems.join('\n  ')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await buildFunctions({ outDir: process.argv[2] });
  process.stdout.write(
    `built ${result.modules.length} handler modules into ${relative(process.cwd(), result.outDir) || '.'} ` +
      `(${(result.bytes / 1024 / 1024).toFixed(1)} MiB with chunks and source maps) in ${(result.milliseconds / 1000).toFixed(1)} s\n`,
  );
}
