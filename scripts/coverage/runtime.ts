/**
 * The runtime process's coverage as Istanbul data. The suite's global setup spawns the local
 * runtime (`node --import tsx scripts/local/start.ts`); with NODE_V8_COVERAGE set it writes
 * raw V8 coverage when it exits, whose offsets refer to the JavaScript tsx generated, not to
 * the .ts files. That JavaScript is regenerated here by the same tsx (capture-register.mjs),
 * checked line by line against the line lengths V8 recorded, and converted with
 * ast-v8-to-istanbul through tsx's source maps: the converter and the source positions
 * vitest's own V8 provider uses, so both sides merge statement by statement.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import astV8ToIstanbul from 'ast-v8-to-istanbul';
import libCoverage from 'istanbul-lib-coverage';
import { parseAstAsync } from 'vitest/node';

interface FunctionCoverage {
  functionName: string;
  isBlockCoverage: boolean;
  ranges: { startOffset: number; endOffset: number; count: number }[];
}
interface ScriptCoverage {
  url: string;
  functions: FunctionCoverage[];
}
interface RawFile {
  result: ScriptCoverage[];
  'source-map-cache'?: Record<string, { lineLengths: number[]; data: Record<string, unknown> | null }>;
}

export interface RuntimeCoverage {
  readonly map: libCoverage.CoverageMap;
  /** Raw files that held coverage of the wanted sources (one per process that ran them). */
  readonly processes: number;
  /** Sources whose regenerated JavaScript did not match what the process ran (left out). */
  readonly mismatched: string[];
}

/** Which executed scripts count: TypeScript sources under the given folders of the project. */
const wanted = (root: string, folders: readonly string[]) => (url: string) => {
  if (!url.startsWith('file:') || !/\.ts$/.test(url)) return false;
  const path = fileURLToPath(url);
  return folders.some((f) => path.startsWith(resolve(root, f) + '/'));
};

/** The JavaScript tsx generates for each module, without running any of them. */
function regenerate(root: string, urls: readonly string[]): Map<string, string> {
  if (urls.length === 0) return new Map();
  const work = mkdtempSync(join(tmpdir(), 'coverage-capture-'));
  try {
    const out = join(work, 'sources.jsonl');
    const script = `for (const u of ${JSON.stringify(urls)}) await import(u);`;
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--import', pathToFileURL(resolve(root, 'scripts/coverage/capture-register.mjs')).href, '--input-type=module', '-e', script],
      // NODE_V8_COVERAGE as in the runtime: tsx then embeds the sources in its source maps
      { cwd: root, env: { ...process.env, CAPTURE_OUT: out, NODE_V8_COVERAGE: join(work, 'v8') }, encoding: 'utf8' },
    );
    if (run.status !== 0) throw new Error(`regenerating tsx output failed:\n${run.stderr}`);
    const sources = new Map<string, string>();
    for (const line of readFileSync(out, 'utf8').split('\n')) {
      if (!line) continue;
      const { url, source } = JSON.parse(line) as { url: string; source: string };
      sources.set(url, source);
    }
    return sources;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Istanbul coverage of every wanted source the processes that wrote into `dir` ran. */
export async function runtimeCoverage(dir: string, root: string, folders: readonly string[]): Promise<RuntimeCoverage> {
  const isWanted = wanted(root, folders);
  const files: RawFile[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^coverage-.*\.json$/.test(name)) continue;
    const raw = JSON.parse(readFileSync(join(dir, name), 'utf8')) as RawFile;
    const result = raw.result.filter((s) => isWanted(s.url));
    if (result.length > 0) files.push({ result, 'source-map-cache': raw['source-map-cache'] });
  }
  const urls = [...new Set(files.flatMap((f) => f.result.map((s) => s.url)))];
  const sources = regenerate(root, urls);
  const map = libCoverage.createCoverageMap({});
  const mismatched = new Set<string>();
  for (const file of files) {
    for (const script of file.result) {
      const code = sources.get(script.url);
      const cached = file['source-map-cache']?.[script.url];
      const lengths = code?.split('\n').map((l) => l.length);
      if (!code || !cached?.data || JSON.stringify(lengths) !== JSON.stringify(cached.lineLengths)) {
        mismatched.add(script.url);
        continue;
      }
      const ast = await parseAstAsync(code);
      const converted = await astV8ToIstanbul({
        code,
        sourceMap: cached.data as never,
        ast,
        coverage: { functions: script.functions, url: script.url },
        wrapperLength: 0,
      });
      map.merge(converted);
    }
  }
  return { map, processes: files.length, mismatched: [...mismatched] };
}

type Loc = { start: { line?: number; column?: number | null }; end: { line?: number; column?: number | null } };
type FileData = libCoverage.FileCoverageData;

const END_OF_LINE = 1e9;
const col = (c: number | null | undefined) => (c === null || c === undefined || !Number.isFinite(c) ? END_OF_LINE : c);
const known = (l: Loc) => typeof l.start.line === 'number' && typeof l.end.line === 'number';
const before = (a: { line: number; column: number }, b: { line: number; column: number }) =>
  a.line < b.line || (a.line === b.line && a.column <= b.column);
const locKey = (l: Loc) => `${l.start.line}:${col(l.start.column)}-${l.end.line}:${col(l.end.column)}`;

/**
 * The runtime's counts laid onto another structure of the same source (vitest's, from its
 * own transform): an item at the same place takes the runtime's count as it is; any other
 * takes the count of the innermost runtime item that contains its start (V8's own rule: a
 * position's count is that of the innermost range around it), or the module's when none
 * does. An `if` without `else` has a location with no position: its count is the if's
 * count less the consequent's.
 */
export function project(onto: FileData, from: FileData, moduleCount: number): FileData {
  const probes: { loc: Loc; count: number; size: number }[] = [];
  const add = (loc: Loc, count: number) => {
    if (!known(loc)) return;
    const size = (loc.end.line! - loc.start.line!) * END_OF_LINE + (col(loc.end.column) - col(loc.start.column));
    probes.push({ loc, count, size });
  };
  const exact = new Map<string, number>();
  for (const [k, loc] of Object.entries(from.statementMap)) {
    add(loc as Loc, from.s[k]!);
    exact.set(`s${locKey(loc as Loc)}`, from.s[k]!);
  }
  for (const [k, fn] of Object.entries(from.fnMap)) {
    add(fn.loc as Loc, from.f[k]!);
    exact.set(`f${locKey(fn.loc as Loc)}`, from.f[k]!);
  }
  const exactBranch = new Map<string, number[]>();
  for (const [k, br] of Object.entries(from.branchMap)) {
    br.locations.forEach((l, i) => add(l as Loc, from.b[k]![i]!));
    exactBranch.set(`${br.type}${br.locations.map((l) => locKey(l as Loc)).join('|')}`, from.b[k]!);
  }
  probes.sort((a, b) => a.size - b.size);
  const countAt = (loc: Loc): number => {
    if (!known(loc)) return 0;
    const p = { line: loc.start.line!, column: col(loc.start.column) };
    for (const probe of probes) {
      const s = { line: probe.loc.start.line!, column: col(probe.loc.start.column) };
      const e = { line: probe.loc.end.line!, column: col(probe.loc.end.column) };
      if (before(s, p) && before(p, e) && !(p.line === e.line && p.column === e.column && e.column !== END_OF_LINE)) return probe.count;
    }
    return moduleCount;
  };
  const s: Record<string, number> = {};
  for (const [k, loc] of Object.entries(onto.statementMap)) s[k] = exact.get(`s${locKey(loc as Loc)}`) ?? countAt(loc as Loc);
  const f: Record<string, number> = {};
  const fns = Object.entries(from.fnMap).map(([k, fn]) => ({ loc: fn.loc as Loc, count: from.f[k]! }));
  for (const [k, fn] of Object.entries(onto.fnMap)) {
    const loc = fn.loc as Loc;
    const hit = exact.get(`f${locKey(loc)}`);
    if (hit !== undefined) {
      f[k] = hit;
      continue;
    }
    // the runtime's function that begins first inside this one's span is the same function
    const start = { line: loc.start.line!, column: col(loc.start.column) };
    const end = { line: loc.end.line!, column: col(loc.end.column) };
    const inside = fns
      .filter((c) => known(c.loc) && before(start, { line: c.loc.start.line!, column: col(c.loc.start.column) }) && before({ line: c.loc.start.line!, column: col(c.loc.start.column) }, end))
      .sort((a, b) => a.loc.start.line! - b.loc.start.line! || col(a.loc.start.column) - col(b.loc.start.column));
    f[k] = inside[0]?.count ?? countAt(loc);
  }
  const b: Record<string, number[]> = {};
  for (const [k, br] of Object.entries(onto.branchMap)) {
    const same = exactBranch.get(`${br.type}${br.locations.map((l) => locKey(l as Loc)).join('|')}`);
    if (same && same.length === br.locations.length) {
      b[k] = [...same];
      continue;
    }
    const counts = br.locations.map((l) => countAt(l as Loc));
    br.locations.forEach((l, i) => {
      if (!known(l as Loc)) counts[i] = Math.max(0, countAt(br.loc as Loc) - (counts[0] ?? 0));
    });
    b[k] = counts;
  }
  return { ...onto, s, f, b };
}
