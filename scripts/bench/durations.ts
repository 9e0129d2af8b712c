/**
 * `npx tsx scripts/bench/durations.ts TIMELINE...`: writes test/setup/durations.json, the
 * seconds each test file of 5 s or more took, per project (`project:path`), from the timelines
 * of whole runs (scripts/bench/timeline.ts: `npm test -- --reporter=default
 * --reporter=./scripts/bench/timeline.ts`, and the same for `npm run test:artifact`). The
 * suite's sequencer (test/setup/sequencer.ts) starts the longest files first with it when
 * vitest's own cache has no durations (a fresh clone). A project the timelines do not hold
 * keeps its recorded durations.
 *
 * A file's time is from its hand-over to a worker to its end: its import, setup files, hooks
 * and tests. vitest's JSON report cannot stand in: it names no project, and its end time leaves
 * the hooks out (the authorization matrix's 30 s request sweep read as 0.3 s).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { TimelineRow } from './timeline.js';

const FILE = 'test/setup/durations.json';
const timelines = process.argv.slice(2);
if (timelines.length === 0) {
  process.stderr.write('usage: npx tsx scripts/bench/durations.ts TIMELINE... (scripts/bench/timeline.ts output of whole runs)\n');
  process.exit(2);
}
const rows = timelines.flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as TimelineRow[]);
const projects = new Set(rows.map((r) => r.project));
const kept = Object.entries(JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, number>).filter(([key]) => !projects.has(key.split(':')[0]!));
const seconds: Record<string, number> = Object.fromEntries(kept);
for (const r of rows) {
  const s = Math.round(r.ended - r.queued);
  const key = `${r.project}:${r.file}`;
  if (s >= 5) seconds[key] = Math.max(seconds[key] ?? 0, s);
}
const sorted = Object.entries(seconds).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
writeFileSync(FILE, `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
process.stdout.write(`${FILE}: ${sorted.length} files of 5 s or more (longest: ${sorted[0]?.join(', ')} s); from ${[...projects].join(', ')}\n`);
