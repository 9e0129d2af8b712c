import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type Route } from '../../lib/routes.js';
import { BACKGROUND_JOBS } from '../../infra/background.js';
import { assetId, handlerModules, lambdaEntry } from '../../infra/handlers.js';
import { buildFunctions, type BuildResult } from '../../infra/bundle.js';

/**
 * infra/bundle.ts: every handler module of the route table bundled into its own code asset.
 * The CDK app deploys each asset as the code of the functions of that module, so what is
 * checked here is what runs (test/artifact runs it as the templates wire it).
 */

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

describe('the bundle of every handler module', () => {
  let result: BuildResult;
  beforeAll(async () => {
    result = await buildFunctions({ outDir: tmp('secrets-api-bundle-') });
  });

  it('emits one asset directory per module named by the route table or a background job, holding that one self-contained ES module', () => {
    const manifest = JSON.parse(readFileSync(join(result.outDir, 'build-manifest.json'), 'utf8')) as {
      sourceMaps: boolean;
      assets: Record<string, { dir: string; file: string; exports: string[]; runtimeFiles?: string[] }>;
    };
    const jobs = BACKGROUND_JOBS.map((j) => ({ key: j.id, handler: j.handler }) as Route);
    const modules = handlerModules([...ROUTES, ...jobs]);
    expect(Object.keys(manifest.assets).sort()).toEqual(modules);
    expect(manifest.sourceMaps).toBe(false);
    // the renderer's WebAssembly travels with the page route's bundle alone
    expect(Object.entries(manifest.assets).filter(([, a]) => a.runtimeFiles)).toEqual([
      ['documents/pages', expect.objectContaining({ runtimeFiles: ['documents/mupdf-wasm.wasm'] })],
    ]);
    // nothing but the asset directories and the manifest: no shared chunks
    expect(readdirSync(result.outDir).sort()).toEqual([...modules.map(assetId), 'build-manifest.json'].sort());
    for (const route of [...ROUTES, ...jobs, { key: 'unbuilt', handler: null } as Route]) {
      const { module, exportName } = lambdaEntry(route);
      const asset = manifest.assets[module]!;
      expect(asset.dir).toBe(assetId(module));
      // the module, and only the run-time files its bundled packages need (infra/bundle.ts RUNTIME_FILES)
      const present = readdirSync(join(result.outDir, asset.dir), { recursive: true }).filter((f) => String(f).includes('.'));
      expect(present.map(String).sort(), module).toEqual([`${module}.mjs`, ...(asset.runtimeFiles ?? [])].sort());
      expect(asset.exports, route.key).toContain(exportName);
    }
  });

  it('imports nothing relative: each module stands alone in its asset (no chunk it could load in the wrong order)', () => {
    for (const module of handlerModules(ROUTES)) {
      const text = readFileSync(join(result.outDir, assetId(module), `${module}.mjs`), 'utf8');
      expect(text.match(/(?:from|import\()\s*["']\.{1,2}\//g), module).toBeNull();
    }
  });

  it('writes linked source maps only when asked', async () => {
    const out = await buildFunctions({ outDir: tmp('secrets-api-maps-'), routes: ROUTES.filter((r) => r.family === 'public'), jobs: [], sourceMaps: true });
    expect(out.manifest.sourceMaps).toBe(true);
    expect(existsSync(join(out.outDir, 'public.health', 'public', 'health.mjs.map'))).toBe(true);
    expect(readFileSync(join(out.outDir, 'public.health', 'public', 'health.mjs'), 'utf8')).toMatch(/\/\/# sourceMappingURL=health\.mjs\.map\s*$/);
  });

  it('bundles the AWS SDK (pinned by the lockfile) and leaves nothing to the runtime but Node built-ins and the native addon', () => {
    const { manifest } = result;
    const paths = new Set(manifest.externals.map((e) => e.replace(/ \(.*\)$/, '')));
    expect(paths.size).toBeGreaterThan(0);
    // optional dependencies that libraries require() inside try/catch, never at load
    // (aws-crt: the CloudHSM client's user agent probe, skipped in ES modules)
    const optional = new Set(['pg-native', 'cardinal', 'aws-crt']);
    for (const path of paths) expect(path.startsWith('node:') || builtinModules.includes(path) || path === 'pkcs11js' || optional.has(path), path).toBe(true);
    for (const e of manifest.externals) {
      const [path] = e.split(' ');
      if (optional.has(path!)) expect(e, 'optional dependencies stay lazy').toBe(`${path} (require-call)`);
      if (path === 'pkcs11js') expect(e, 'the native addon stays lazy').toBe('pkcs11js (dynamic-import)');
    }
  });

  it('runs: the built public module answers through the same handler stack as the local gateway', async () => {
    process.env.KEY_PROVIDER ??= 'kms';
    process.env.KMS_KEY_ID ??= 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
    const mod = (await import(pathToFileURL(join(result.outDir, 'public.health', 'public', 'health.mjs')).href)) as Record<string, Function>;
    const res = await mod.health!(
      { httpMethod: 'GET', resource: '/health', path: '/health', headers: {}, requestContext: { requestId: 'build-test', identity: { sourceIp: '192.0.2.1' } } },
      { awsRequestId: 'build-test', getRemainingTimeInMillis: () => 10_000 },
    );
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ success: true, data: { status: 'ok' } });
    expect(res.headers['X-Request-Id']).toBe('build-test');
  });
});

describe('the build\'s checks', () => {
  const fixtures = resolve('test/infra/fixtures/functions');
  const route = (handler: string): Route => ({
    key: `GET /fixture/${handler}`,
    method: 'GET',
    path: `/fixture/${handler}`,
    auth: 'public',
    scopes: [],
    handlerScopes: false,
    family: 'fixture',
    handler,
    grants: [],
    maxBodyBytes: 1024,
  });

  it('accepts a module that loads the native addon lazily', async () => {
    const out = await buildFunctions({ outDir: tmp('bundle-lazy-'), functionsDir: fixtures, routes: [route('native/lazy.status')], jobs: [] });
    expect(out.modules).toEqual(['native/lazy', 'not-implemented', 'public/cors']);
    expect(readFileSync(join(out.outDir, 'native.lazy', 'native', 'lazy.mjs'), 'utf8')).toMatch(/import\(\s*["']pkcs11js["']\s*\)/);
  });

  it('refuses a module that imports the native addon statically (its function could not load without the HSM layer)', async () => {
    await expect(buildFunctions({ outDir: tmp('bundle-eager-'), functionsDir: fixtures, routes: [route('native/eager.status')], jobs: [] })).rejects.toThrow(
      /functions\/native\/eager\.ts statically imports the native addon pkcs11js/,
    );
  });

  it('refuses a route whose handler export does not exist', async () => {
    await expect(buildFunctions({ outDir: tmp('bundle-missing-'), functionsDir: fixtures, routes: [route('native/lazy.nope')], jobs: [] })).rejects.toThrow(
      /GET \/fixture\/native\/lazy\.nope: functions\/native\/lazy\.ts has no export "nope"/,
    );
  });
});
