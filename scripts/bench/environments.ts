/**
 * `tsx scripts/bench/environments.ts TRACE [CAP...]`: how many cold starts the artifact
 * runtime's function environments would take at other caps, replayed from a whole run's
 * invocations (ARTIFACT_INVOCATION_TRACE=<file> npm test: a line per invocation, "ms function
 * cold|warm").
 *
 * For each cap it replays the sequence with one environment per function (the run's few
 * concurrent invocations of one function are left out) under two evictions: least recently used
 * (what scripts/local/artifact/host.ts does) and the offline optimum (Belady: retire the function
 * whose next call is furthest ahead), which no eviction can beat. The first line is what the run
 * itself recorded.
 */
import { readFileSync } from 'node:fs';

const [file, ...capArgs] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx scripts/bench/environments.ts TRACE [CAP...]\n');
  process.exit(2);
}
const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const calls = lines.map((l) => l.split(' ')[1]!);
const recorded = lines.filter((l) => l.endsWith(' cold')).length;
const distinct = new Set(calls).size;
const caps = capArgs.length ? capArgs.map(Number) : [64, 100, 150, 200, 250, distinct];

function lru(cap: number): number {
  const live = new Map<string, true>(); // insertion order = recency
  let cold = 0;
  for (const fn of calls) {
    if (live.has(fn)) live.delete(fn);
    else {
      cold++;
      if (live.size >= cap) live.delete(live.keys().next().value!);
    }
    live.set(fn, true);
  }
  return cold;
}

function belady(cap: number): number {
  // next[i]: the index of the next call of calls[i]'s function after i
  const next = new Array<number>(calls.length);
  const seen = new Map<string, number>();
  for (let i = calls.length - 1; i >= 0; i--) {
    next[i] = seen.get(calls[i]!) ?? Number.POSITIVE_INFINITY;
    seen.set(calls[i]!, i);
  }
  const live = new Map<string, number>(); // function -> its next call
  let cold = 0;
  for (let i = 0; i < calls.length; i++) {
    const fn = calls[i]!;
    if (!live.has(fn)) {
      cold++;
      if (live.size >= cap) {
        let victim = '';
        let furthest = -1;
        for (const [f, n] of live) if (n > furthest) [victim, furthest] = [f, n];
        live.delete(victim);
      }
    }
    live.set(fn, next[i]!);
  }
  return cold;
}

process.stdout.write(`${calls.length} invocations of ${distinct} functions; the run recorded ${recorded} cold starts\n`);
process.stdout.write('cap    LRU cold starts    optimum (Belady)\n');
for (const cap of caps) process.stdout.write(`${String(cap).padEnd(6)} ${String(lru(cap)).padStart(15)} ${String(belady(cap)).padStart(19)}\n`);
