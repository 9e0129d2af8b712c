import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order the suite's files start in, longest first, so that the run does not end on one
 * long file while a core sits idle. vitest's own order runs unknown files first, then larger
 * files first; on a fresh clone (CI) it knows no durations, and a file's size says little:
 * route-matrix.test.ts is small and took 77 s, the last to start, and the run's last 145 s
 * kept less than one of two workers busy (`npm test` of 2026-11-28, timeline from its JSON
 * report).
 *
 * - within a group (sequence.groupOrder), the source project's files first: its runtime listens
 *   within seconds, while the artifact's builds, synthesizes and imports every function for
 *   minutes, and the source files used to wait behind the artifact's to the end;
 * - within a project, the expected duration first: what vitest's cache recorded on this
 *   machine, else test/setup/durations.json (seconds per file of 5 s or more, per project,
 *   from whole runs' timelines: `npx tsx scripts/bench/durations.ts TIMELINE...`), else 0; then
 *   the larger file first.
 * The order decides nothing else: every file still waits for its runtime (test/setup/ready.ts).
 */
const recorded: Record<string, number> = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));

/** Projects that run first within their group. */
const FIRST_PROJECTS = ['source'];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const path = (s: TestSpecification) => relative(root, s.moduleId).split('\\').join('/');
    const expected = (s: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${s.project.name}:${path(s)}`)?.duration ?? (recorded[`${s.project.name}:${path(s)}`] ?? 0) * 1000;
    const size = (s: TestSpecification) => this.ctx.cache.getFileStats(`${s.project.name}:${path(s)}`)?.size ?? 0;
    const rank = (s: TestSpecification) => (FIRST_PROJECTS.includes(s.project.name) ? 0 : 1);
    return [...files].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        rank(a) - rank(b) ||
        (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : 0) ||
        expected(b) - expected(a) ||
        size(b) - size(a),
    );
  }
}
