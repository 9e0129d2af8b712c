import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROUTES, type Route } from '../../lib/routes.js';
import { buildFunctions } from '../../infra/bundle.js';

/**
 * infra/bundle.ts's own checks, on fixtures and one family. The build of the whole route table
 * is checked where it runs, on the artifact runtime's own build (test/artifact/bundles.test.ts):
 * building it here too cost a second whole build beside the artifact's in every run.
 */

const made: string[] = [];
const tmp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('source maps', () => {
  it('writes linked source maps only when asked', async () => {
    const out = await buildFunctions({ outDir: tmp('secrets-api-maps-'), routes: ROUTES.filter((r) => r.family === 'public'), jobs: [], sourceMaps: true });
    expect(out.manifest.sourceMaps).toBe(true);
    expect(existsSync(join(out.outDir, 'public.health', 'public', 'health.mjs.map'))).toBe(true);
    expect(readFileSync(join(out.outDir, 'public.health', 'public', 'health.mjs'), 'utf8')).toMatch(/\/\/# sourceMappingURL=health\.mjs\.map\s*$/);
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
