/**
 * Coverage of the artifact runtime's function processes, mapped to the TypeScript sources.
 *
 * Under `npm test` the HTTP suite runs once, on the artifact runtime (README, "Testing"). Its
 * functions run the built bundles, so their coverage comes from there:
 *
 * - the synth builds the bundles with external source maps (infra/bundle.ts, `sourceMaps:
 *   'external'`: the same bytes as a build without maps, no sourceMappingURL comment) and
 *   `keepBundleMaps` (scripts/local/artifact/bundle-maps.ts) moves each map out of its code asset before the synth, with a copy of
 *   the bundle it maps, into `<dir>/bundles/`: the assets the functions run are those that ship;
 * - each function process (not the import check's) writes raw V8 coverage (NODE_V8_COVERAGE,
 *   scripts/local/artifact/host.ts) into `<dir>/v8/` when its environment is retired;
 * - `artifactCoverage` merges the processes' coverage of each bundle (@bcoe/v8-coverage, as
 *   c8 does), keeps only the code that maps to the wanted folders (the rest of a bundle is
 *   blanked out before it is parsed: a bundle is mostly the AWS SDK), and converts it with the
 *   converter vitest uses (ast-v8-to-istanbul) through the bundle's source map.
 *
 * scripts/coverage/run.ts lays the result onto vitest's own map of each file (`project`), as
 * it does the source runtime's.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeProcessCovs, type ProcessCov, type ScriptCov } from '@bcoe/v8-coverage';
import { decode, encode, type SourceMapSegment } from '@jridgewell/sourcemap-codec';
import astV8ToIstanbul from 'ast-v8-to-istanbul';
import libCoverage from 'istanbul-lib-coverage';
import { parseAstAsync } from 'vitest/node';

import type { RawMap } from '../local/artifact/bundle-maps.js';

/** The bundle (relative to `<dir>/bundles`) a function process ran, from its script URL in the code asset. */
const bundleOf = (url: string): string | undefined => {
  if (!url.startsWith('file:') || !url.endsWith('.mjs')) return undefined;
  const path = fileURLToPath(url);
  const inAsset = /\/asset\.[^/]+\/(.+)\.mjs$/.exec(path);
  if (!inAsset) return undefined;
  const module = inAsset[1]!;
  return join(module.split('/').join('.'), `${module}.mjs`);
};

export interface ArtifactCoverage {
  readonly map: libCoverage.CoverageMap;
  /** Function processes that wrote coverage of a kept bundle. */
  readonly processes: number;
  /** Distinct bundles converted. */
  readonly bundles: number;
  /** Bundles a process ran that have no kept map (left out). */
  readonly unmapped: string[];
  /** Coverage files that are not whole JSON (left out, named). */
  readonly incomplete: string[];
}

/** Istanbul coverage of the wanted sources, from every function process that wrote into `<dir>/v8`. */
export async function artifactCoverage(dir: string, root: string, folders: readonly string[]): Promise<ArtifactCoverage> {
  const map = libCoverage.createCoverageMap({});
  const v8Dir = join(dir, 'v8');
  if (!existsSync(v8Dir)) return { map, processes: 0, bundles: 0, unmapped: [], incomplete: [] };
  const isWanted = (path: string) => folders.some((f) => path.startsWith(`${resolve(root, f)}/`));
  const prepared = new Map<string, Prepared | undefined>();
  const byBundle = new Map<string, ProcessCov[]>();
  const unmapped = new Set<string>();
  const incomplete: string[] = [];
  let processes = 0;
  for (const name of readdirSync(v8Dir)) {
    if (!/^coverage-.*\.json$/.test(name)) continue;
    let raw: ProcessCov;
    try {
      raw = JSON.parse(readFileSync(join(v8Dir, name), 'utf8')) as ProcessCov;
    } catch {
      // cut short: its process was killed while V8 wrote it (host.ts retires with a grace, then SIGKILL)
      incomplete.push(name);
      continue;
    }
    let counted = false;
    for (const script of raw.result) {
      const bundle = bundleOf(script.url);
      if (!bundle) continue;
      if (!prepared.has(bundle)) prepared.set(bundle, await prepare(join(dir, 'bundles', bundle), isWanted));
      const prep = prepared.get(bundle);
      if (!prep) {
        unmapped.add(bundle);
        continue;
      }
      // only the functions around the wanted code: the rest of the bundle is not converted
      const functions = script.functions.filter((f) => prep.overlaps(f.ranges[0]!.startOffset, f.ranges[0]!.endOffset));
      const one: ScriptCov = { scriptId: '0', url: bundle, functions };
      byBundle.set(bundle, [...(byBundle.get(bundle) ?? []), { result: [one] }]);
      counted = true;
    }
    if (counted) processes++;
  }
  for (const [bundle, covs] of byBundle) {
    const prep = prepared.get(bundle)!;
    const merged = mergeProcessCovs(covs).result[0]!;
    const converted = await astV8ToIstanbul({
      code: prep.code,
      sourceMap: prep.sourceMap,
      ast: parseAstAsync(prep.code),
      coverage: { functions: merged.functions, url: prep.url },
      wrapperLength: 0,
    });
    for (const [file, data] of Object.entries(converted)) if (isWanted(file)) map.merge({ [file]: data });
  }
  return { map, processes, bundles: byBundle.size, unmapped: [...unmapped], incomplete };
}

interface Prepared {
  /** The bundle with every top-level statement that holds no wanted code blanked out (offsets kept). */
  readonly code: string;
  /** The bundle's map, reduced to the wanted sources. */
  readonly sourceMap: RawMap;
  readonly url: string;
  /** Whether a generated range holds wanted code or begins the module. */
  overlaps(start: number, end: number): boolean;
}

async function prepare(file: string, isWanted: (path: string) => boolean): Promise<Prepared | undefined> {
  if (!existsSync(file) || !existsSync(`${file}.map`)) return undefined;
  const code = readFileSync(file, 'utf8');
  const raw = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as RawMap;
  const lineStarts = [0];
  for (let i = 0; i < code.length; i++) if (code.charCodeAt(i) === 10) lineStarts.push(i + 1);
  // the map reduced to the wanted sources, and the generated offsets that map into them
  const index = new Map<number, number>();
  const sources: string[] = [];
  raw.sources.forEach((s, i) => {
    if (isWanted(s)) {
      index.set(i, sources.length);
      sources.push(s);
    }
  });
  const offsets: number[] = [];
  const lines = decode(raw.mappings).map((segments, line) =>
    segments.flatMap((g): SourceMapSegment[] => {
      if (g.length < 4) return [];
      const [column, source, sourceLine, sourceColumn] = g as [number, number, number, number];
      const to = index.get(source);
      if (to === undefined) return [];
      offsets.push(lineStarts[line]! + column);
      return [(g.length === 5 ? [column, to, sourceLine, sourceColumn, g[4]] : [column, to, sourceLine, sourceColumn]) as SourceMapSegment];
    }),
  );
  offsets.sort((a, b) => a - b);
  const any = (start: number, end: number) => {
    let lo = 0;
    let hi = offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (offsets[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    return lo < offsets.length && offsets[lo]! < end;
  };
  // top-level statements without wanted code become spaces (newlines kept): offsets are unchanged
  const ast = (await parseAstAsync(code)) as unknown as { body: { start: number; end: number }[] };
  const chars = code.split('');
  for (const node of ast.body) {
    if (any(node.start, node.end)) continue;
    for (let i = node.start; i < node.end; i++) if (chars[i] !== '\n') chars[i] = ' ';
  }
  return {
    code: chars.join(''),
    sourceMap: { version: 3, sources, names: raw.names, mappings: encode(lines) },
    url: `file://${file}`,
    overlaps: (start, end) => start === 0 || any(start, end),
  };
}
