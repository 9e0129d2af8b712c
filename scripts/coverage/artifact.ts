/**
 * Coverage of the artifact runtime's function processes, mapped to the TypeScript sources.
 *
 * `npm run coverage -- --project artifact` measures the HTTP suite through the bundles (`npm
 * test` measures it on the source runtime, README, "Testing"). The functions run the built
 * bundles, so their coverage comes from there:
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
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
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
export async function artifactCoverage(
  dir: string,
  root: string,
  folders: readonly string[],
  threads = Math.min(4, availableParallelism()),
): Promise<ArtifactCoverage> {
  const map = libCoverage.createCoverageMap({});
  const v8Dir = join(dir, 'v8');
  if (!existsSync(v8Dir)) return { map, processes: 0, bundles: 0, unmapped: [], incomplete: [] };
  // Each bundle's processes are merged and converted on their own (about 0.5 s of parsing and
  // converting a bundle, and reading its processes' files), so the bundles are shared out among
  // worker threads: the scripts' URLs are found in each file's text without parsing it.
  const files = new Map<string, string[]>(); // bundle -> the coverage files of processes that ran it
  const bytes = new Map<string, number>();
  for (const name of readdirSync(v8Dir)) {
    if (!/^coverage-.*\.json$/.test(name)) continue;
    const text = readFileSync(join(v8Dir, name), 'utf8');
    const ran = new Set([...text.matchAll(/"url":"(file:[^"]+\.mjs)"/g)].map((m) => bundleOf(m[1]!)).filter((b) => b !== undefined));
    // a file with no bundle's script still goes to a thread, which says whether it is whole
    for (const bundle of ran.size > 0 ? ran : ['']) {
      files.set(bundle, [...(files.get(bundle) ?? []), name]);
      bytes.set(bundle, (bytes.get(bundle) ?? 0) + text.length);
    }
  }
  // the largest first, each to the least loaded share
  const shares = Array.from({ length: Math.max(1, Math.min(threads, files.size)) }, () => ({ bytes: 0, groups: [] as [string, string[]][] }));
  for (const bundle of [...files.keys()].sort((a, b) => bytes.get(b)! - bytes.get(a)!)) {
    const share = shares.reduce((least, s) => (s.bytes < least.bytes ? s : least));
    share.groups.push([bundle, files.get(bundle)!]);
    share.bytes += bytes.get(bundle)!;
  }
  const job = (groups: [string, string[]][]): BundleJob => ({ dir, root, folders: [...folders], groups });
  const results =
    shares.length === 1
      ? [await convertBundles(job(shares[0]!.groups))]
      : await Promise.all(shares.map((s) => inThread(job(s.groups))));
  const processes = new Set<string>();
  const unmapped = new Set<string>();
  const incomplete = new Set<string>();
  let bundles = 0;
  for (const r of results) {
    map.merge(r.data);
    for (const f of r.processes) processes.add(f);
    for (const b of r.unmapped) unmapped.add(b);
    for (const f of r.incomplete) incomplete.add(f);
    bundles += r.bundles;
  }
  return { map, processes: processes.size, bundles, unmapped: [...unmapped], incomplete: [...incomplete] };
}

/** A share of the bundles: each with the coverage files of the processes that ran it. */
export interface BundleJob {
  readonly dir: string;
  readonly root: string;
  readonly folders: string[];
  readonly groups: [string, string[]][];
}

/** What a share gives back: istanbul data of the wanted files, and what it counted or left out. */
export interface BundleResult {
  readonly data: libCoverage.CoverageMapData;
  /** Coverage files with a script of a converted bundle. */
  readonly processes: string[];
  readonly bundles: number;
  readonly unmapped: string[];
  readonly incomplete: string[];
}

/** Runs `convertBundles` in a worker thread (scripts/coverage/artifact-thread.mjs). */
function inThread(job: BundleJob): Promise<BundleResult> {
  return new Promise((resolvePromise, reject) => {
    const thread = new Worker(new URL('./artifact-thread.mjs', import.meta.url), { workerData: job });
    thread.once('message', (result: BundleResult) => resolvePromise(result));
    thread.once('error', reject);
    thread.once('exit', (code) => {
      if (code !== 0) reject(new Error(`a coverage conversion thread exited with code ${code}`));
    });
  });
}

/** Merges the processes' coverage of each bundle of the share and converts it through the bundle's map. */
export async function convertBundles(job: BundleJob): Promise<BundleResult> {
  const map = libCoverage.createCoverageMap({});
  const isWanted = (path: string) => job.folders.some((f) => path.startsWith(`${resolve(job.root, f)}/`));
  const processes = new Set<string>();
  const unmapped: string[] = [];
  const incomplete = new Set<string>();
  let bundles = 0;
  for (const [bundle, names] of job.groups) {
    const prep = bundle ? await prepare(join(job.dir, 'bundles', bundle), isWanted) : undefined;
    if (bundle && !prep) unmapped.push(bundle);
    const covs: ProcessCov[] = [];
    for (const name of names) {
      let raw: ProcessCov;
      try {
        raw = JSON.parse(readFileSync(join(job.dir, 'v8', name), 'utf8')) as ProcessCov;
      } catch {
        // cut short: its process was killed while V8 wrote it (host.ts retires with a grace, then SIGKILL)
        incomplete.add(name);
        continue;
      }
      if (!prep) continue;
      for (const script of raw.result) {
        if (bundleOf(script.url) !== bundle) continue;
        // only the functions around the wanted code: the rest of the bundle is not converted
        const functions = script.functions.filter((f) => prep.overlaps(f.ranges[0]!.startOffset, f.ranges[0]!.endOffset));
        covs.push({ result: [{ scriptId: '0', url: bundle, functions } satisfies ScriptCov] });
        processes.add(name);
      }
    }
    if (!prep || covs.length === 0) continue;
    bundles++;
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
  // plain data (a FileCoverage does not survive the thread's structured clone)
  return { data: JSON.parse(JSON.stringify(map)), processes: [...processes], bundles, unmapped, incomplete: [...incomplete] };
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
