/**
 * `npx tsx scripts/bench/durations.ts REPORT`: writes test/setup/durations.json, the seconds
 * each test file of 5 s or more took in a whole run, from that run's vitest JSON report
 * (`npm test -- --reporter=default --reporter=json --outputFile.json=REPORT`). The suite's
 * sequencer (test/setup/sequencer.ts) starts the longest files first with it when vitest's own
 * cache has no durations (a fresh clone). A file run by two projects keeps its longer time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const report = process.argv[2];
if (!report) {
  process.stderr.write('usage: npx tsx scripts/bench/durations.ts REPORT (a vitest JSON report of a whole run)\n');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as { testResults: { name: string; startTime: number; endTime: number }[] };
const seconds: Record<string, number> = {};
for (const file of testResults) {
  const s = Math.round((file.endTime - file.startTime) / 1000);
  const path = relative(process.cwd(), file.name).split('\\').join('/');
  if (s >= 5) seconds[path] = Math.max(seconds[path] ?? 0, s);
}
const sorted = Object.entries(seconds).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
writeFileSync('test/setup/durations.json', `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
process.stdout.write(`test/setup/durations.json: ${sorted.length} files of 5 s or more (longest: ${sorted[0]?.join(', ')} s)\n`);
