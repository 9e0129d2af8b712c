import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { BACKGROUND_JOBS } from '../../infra/background.js';
import { readManifest } from '../../infra/code.js';
import { assetId, handlerModules, lambdaEntry } from '../../infra/handlers.js';
import { ROUTES, type Route } from '../../lib/routes.js';
import { BUILD_FILE } from '../../scripts/local/artifact/deployment.js';

/**
 * infra/bundle.ts over the whole route table, checked on the build the artifact runtime serves
 * (its functions run these bundles as the synthesized templates wire them): every handler
 * module bundled into its own code asset, which the CDK app deploys as the code of that
 * module's functions. The builder's own checks, on fixtures, are test/infra/build.test.ts; this
 * build is the one the artifact tier made, not a second one.
 */
describe('the bundle of every handler module', () => {
  const outDir = (JSON.parse(readFileSync(join(inject('dataDir'), BUILD_FILE), 'utf8')) as { lambda: string }).lambda;
  const manifest = readManifest(outDir)!;

  it('emits one asset directory per module named by the route table or a background job, holding that one self-contained ES module', () => {
    const jobs = BACKGROUND_JOBS.map((j) => ({ key: j.id, handler: j.handler }) as Route);
    const modules = handlerModules([...ROUTES, ...jobs]);
    expect(Object.keys(manifest.assets).sort()).toEqual(modules);
    expect(manifest.sourceMaps).toBe(false);
    // the renderer's WebAssembly travels with the page route's bundle alone
    expect(Object.entries(manifest.assets).filter(([, a]) => a.runtimeFiles)).toEqual([
      ['documents/pages', expect.objectContaining({ runtimeFiles: ['documents/mupdf-wasm.wasm'] })],
    ]);
    // nothing but the asset directories and the manifest: no shared chunks
    expect(readdirSync(outDir).sort()).toEqual([...modules.map(assetId), 'build-manifest.json'].sort());
    for (const route of [...ROUTES, ...jobs, { key: 'unbuilt', handler: null } as Route]) {
      const { module, exportName } = lambdaEntry(route);
      const asset = manifest.assets[module]!;
      expect(asset.dir).toBe(assetId(module));
      // the module, and only the run-time files its bundled packages need (infra/bundle.ts RUNTIME_FILES)
      const present = readdirSync(join(outDir, asset.dir), { recursive: true }).filter((f) => String(f).includes('.'));
      expect(present.map(String).sort(), module).toEqual([`${module}.mjs`, ...(asset.runtimeFiles ?? [])].sort());
      expect(asset.exports, route.key).toContain(exportName);
    }
  });

  it('imports nothing relative: each module stands alone in its asset (no chunk it could load in the wrong order)', () => {
    for (const module of handlerModules(ROUTES)) {
      const text = readFileSync(join(outDir, assetId(module), `${module}.mjs`), 'utf8');
      expect(text.match(/(?:from|import\()\s*["']\.{1,2}\//g), module).toBeNull();
    }
  });

  it('bundles the AWS SDK (pinned by the lockfile) and leaves nothing to the runtime but Node built-ins and the native addon', () => {
    const paths = new Set(manifest.externals.map((e) => e.replace(/ \(.*\)$/, '')));
    expect(paths.size).toBeGreaterThan(0);
    // optional dependencies that libraries require() inside try/catch, never at load
    // (aws-crt: the CloudHSM client's user agent probe, skipped in ES modules)
    const optional = new Set(['pg-native', 'cardinal', 'aws-crt']);
    for (const path of paths)
      expect(path.startsWith('node:') || builtinModules.includes(path) || path === 'pkcs11js' || optional.has(path), path).toBe(true);
    for (const e of manifest.externals) {
      const [path] = e.split(' ');
      if (optional.has(path!)) expect(e, 'optional dependencies stay lazy').toBe(`${path} (require-call)`);
      if (path === 'pkcs11js') expect(e, 'the native addon stays lazy').toBe('pkcs11js (dynamic-import)');
    }
  });

  it('runs: the built public module answers through the same handler stack as the local gateway', async () => {
    process.env.KEY_PROVIDER ??= 'kms';
    process.env.KMS_KEY_ID ??= 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
    const mod = (await import(pathToFileURL(join(outDir, 'public.health', 'public', 'health.mjs')).href)) as Record<
      string,
      (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string; headers: Record<string, string> }>
    >;
    const res = await mod.health!(
      {
        httpMethod: 'GET',
        resource: '/health',
        path: '/health',
        headers: {},
        requestContext: { requestId: 'build-test', identity: { sourceIp: '192.0.2.1' } },
      },
      { awsRequestId: 'build-test', getRemainingTimeInMillis: () => 10_000 },
    );
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ success: true, data: { status: 'ok' } });
    expect(res.headers['X-Request-Id']).toBe('build-test');
  });
});
