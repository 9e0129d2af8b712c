import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { artifactCoverage } from '../../scripts/coverage/artifact.js';
import { keepBundleMaps } from '../../scripts/local/artifact/bundle-maps.js';

/**
 * The coverage of the artifact's function processes (`npm run coverage -- --project artifact`, scripts/coverage/artifact.ts): a
 * minified bundle with a dependency beside our code, its map kept out of the asset, run in
 * two processes (as two environments of one function), read back onto the TypeScript source.
 */
const root = mkdtempSync(join(tmpdir(), 'coverage-artifact-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function bundle(sourcemap: 'external' | false, outdir: string) {
  await build({
    absWorkingDir: root,
    entryPoints: [{ in: join(root, 'functions/h.ts'), out: 'fn.h/fn/h' }],
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    minify: true,
    sourcemap,
    sourcesContent: false,
    logLevel: 'silent',
  });
}

describe('coverage of the built bundles, mapped to the sources', () => {
  it('counts what the processes ran in lib/ and functions/, not the dependency; the asset keeps the bytes of a build without maps', async () => {
    mkdirSync(join(root, 'lib'), { recursive: true });
    mkdirSync(join(root, 'functions'), { recursive: true });
    mkdirSync(join(root, 'node_modules/dep'), { recursive: true });
    writeFileSync(join(root, 'node_modules/dep/package.json'), '{"name":"dep","main":"index.js"}');
    writeFileSync(join(root, 'node_modules/dep/index.js'), 'exports.twice = (x) => { if (x > 1) return x * 2; return x + x; };\n');
    writeFileSync(
      join(root, 'lib/calc.ts'),
      [
        "import { twice } from 'dep';",
        'export function used(n: number): number {',
        '  if (n > 10) {',
        '    return twice(n);',
        '  }',
        '  return n;',
        '}',
        'export function unused(n: number): number {',
        '  return n * 3;',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'functions/h.ts'),
      "import { unused, used } from '../lib/calc';\nexport const handler = (e: { n: number }) => (e.n < 0 ? unused(e.n) : used(e.n));\n",
    );
    await bundle(false, join(root, 'plain'));
    await bundle('external', join(root, 'lambda'));
    const dir = join(root, 'coverage');
    expect(keepBundleMaps(join(root, 'lambda'), dir)).toBe(1);
    // the asset: no map left in it, and the bundle's bytes are those of the build without maps
    expect(readdirSync(join(root, 'lambda/fn.h/fn'))).toEqual(['h.mjs']);
    expect(readFileSync(join(root, 'lambda/fn.h/fn/h.mjs'), 'utf8')).toBe(readFileSync(join(root, 'plain/fn.h/fn/h.mjs'), 'utf8'));

    // the synth copies the asset into cdk.out; two environments of the function run there
    const asset = join(root, 'cdk.out/asset.0123abcd');
    cpSync(join(root, 'lambda/fn.h'), asset, { recursive: true });
    for (const n of [5, 20]) {
      execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import('./fn/h.mjs'); m.handler({ n: ${n} });`], {
        cwd: asset,
        env: { ...process.env, NODE_V8_COVERAGE: join(dir, 'v8') },
      });
    }
    const result = await artifactCoverage(dir, root, ['lib', 'functions']);
    expect(result).toMatchObject({ processes: 2, bundles: 1, unmapped: [] });
    expect(result.map.files().sort()).toEqual([join(root, 'functions/h.ts'), join(root, 'lib/calc.ts')]);
    const calc = result.map.fileCoverageFor(join(root, 'lib/calc.ts'));
    // by source line (the bundle's names are minified): used (line 2) ran in both processes;
    // unused (line 8) was bundled (the handler references it) and never ran
    const fns = Object.fromEntries(Object.entries(calc.fnMap).map(([k, f]) => [f.decl.start.line, calc.f[k]]));
    expect(fns).toEqual({ 2: 2, 8: 0 });
    // minified, the if becomes one conditional expression: each of its two ways ran once
    // (n = 20 the `if` on lines 3-5, n = 5 `return n` on line 6); run.ts lays these onto vitest's map
    const branches = Object.entries(calc.branchMap).map(([k, b]) => ({ lines: b.locations.map((l) => l.start.line), counts: calc.b[k] }));
    expect(branches).toEqual([{ lines: [3, 6], counts: [1, 1] }]);
    // the dependency's code is not in the result, the module's top level ran in both processes
    expect(calc.getLineCoverage()).toMatchObject({ 1: 2, 9: 0 });
    expect(existsSync(join(dir, 'bundles/fn.h/fn/h.mjs.map'))).toBe(true);

    // a process killed while V8 wrote its file (a retirement's grace ran out) leaves it cut
    // short: it is left out and named, and the others still count
    const whole = readdirSync(join(dir, 'v8')).find((f) => f.startsWith('coverage-'))!;
    const text = readFileSync(join(dir, 'v8', whole), 'utf8');
    writeFileSync(join(dir, 'v8', 'coverage-cut-short.json'), text.slice(0, Math.floor(text.length / 2)));
    const again = await artifactCoverage(dir, root, ['lib', 'functions']);
    expect(again).toMatchObject({ processes: 2, bundles: 1, unmapped: [], incomplete: ['coverage-cut-short.json'] });

    // shared out among worker threads (npm test converts ~100 bundles so): the same figures.
    // A process that ran none of the bundles (only Node's own scripts) is a second share.
    writeFileSync(join(dir, 'v8', 'coverage-no-bundle.json'), JSON.stringify({ result: [{ scriptId: '1', url: 'node:internal/main', functions: [] }] }));
    const threaded = await artifactCoverage(dir, root, ['lib', 'functions'], 2);
    expect(threaded).toMatchObject({ processes: 2, bundles: 1, unmapped: [], incomplete: ['coverage-cut-short.json'] });
    expect(JSON.parse(JSON.stringify(threaded.map))).toEqual(JSON.parse(JSON.stringify(again.map)));
  });
});
