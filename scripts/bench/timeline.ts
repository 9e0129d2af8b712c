/**
 * A vitest reporter that says how the run used its workers: when each test file was handed to
 * a worker and when it ended, by project, and how busy the workers were over the run.
 *
 *   npm test -- --reporter=default --reporter=./scripts/bench/timeline.ts
 *
 * It writes TIMELINE_FILE (default timeline.json in the working directory): one row per file
 * with its project, its seconds from the run's start, and vitest's own split of its time
 * (collect: importing the file; setup: the setup files; duration: its tests and hooks). The JSON
 * reporter cannot stand in: it does not name a file's project, and its end time leaves out the
 * hooks (the authorization matrix's 30 s request sweep showed as 0.3 s).
 * `npx tsx scripts/bench/durations.ts TIMELINE` turns it into the sequencer's durations.
 *
 * It measures; it asserts nothing.
 */
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One test file of the run, in seconds from the run's start. */
export interface TimelineRow {
  readonly project: string;
  readonly file: string;
  readonly queued: number;
  readonly ended: number;
  readonly collect: number;
  readonly setup: number;
  readonly duration: number;
  readonly state: string;
}

export default class Timeline implements Reporter {
  private started = Date.now();
  private readonly queued = new Map<string, number>();
  private readonly rows: TimelineRow[] = [];

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestModuleQueued(module: TestModule): void {
    this.queued.set(module.id, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const seconds = (ms: number) => Math.round(ms) / 1000;
    this.rows.push({
      project: module.project.name,
      file: relative(process.cwd(), module.moduleId).split('\\').join('/'),
      queued: seconds((this.queued.get(module.id) ?? this.started) - this.started),
      ended: seconds(Date.now() - this.started),
      collect: seconds(d.collectDuration),
      setup: seconds(d.setupDuration),
      duration: seconds(d.duration),
      state: module.state(),
    });
  }

  onTestRunEnd(): void {
    const out = process.env.TIMELINE_FILE ?? 'timeline.json';
    const rows = [...this.rows].sort((a, b) => a.queued - b.queued);
    writeFileSync(out, `${JSON.stringify(rows, null, 1)}\n`);
    const end = Math.max(0, ...rows.map((r) => r.ended));
    // files in flight per 20 s of the run: 2 is both workers busy
    const lines: string[] = [];
    for (let at = 0; at < end; at += 20) {
      const busy = rows.reduce((sum, r) => sum + Math.max(0, Math.min(r.ended, at + 20) - Math.max(r.queued, at)), 0) / 20;
      const projects = [...new Set(rows.filter((r) => r.queued < at + 20 && r.ended > at).map((r) => r.project))].join(' ');
      lines.push(`${String(at).padStart(5)} s  ${busy.toFixed(2)}  ${projects}`);
    }
    process.stdout.write(
      `[timeline] ${rows.length} files in ${end.toFixed(0)} s, written to ${out}; files in flight per 20 s:\n${lines.join('\n')}\n`,
    );
  }
}
