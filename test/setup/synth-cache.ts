import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';

/** The infra tier's one piece of setup: it removes the run's kept syntheses (test/infra/synth.ts) after the run. */
export default (project: TestProject) => () => {
  const kept = project.config.env?.SYNTH_CACHE_DIR;
  if (kept) rmSync(kept, { recursive: true, force: true });
};
