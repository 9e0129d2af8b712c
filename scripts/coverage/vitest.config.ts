import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base, { projects } from '../../vitest.config.js';

/**
 * `npm test` / `npm run coverage` (scripts/coverage/run.ts): the suite's own configuration
 * with the HTTP suite once, on the artifact runtime (`projects(true)`), plus V8 coverage of the
 * test workers. The runtimes the setups start write their own raw V8 coverage
 * (test/setup/runtime.ts, from RUNTIME_COVERAGE_DIR): the source runtime's process, and each
 * function process of the artifact runtime (scripts/coverage/artifact.ts).
 */
export default mergeConfig(
  { ...base, test: { ...base.test, projects: projects(true) } },
  defineConfig({
    // the project, not this folder, as vitest.config.ts has it
    root: fileURLToPath(new URL('../..', import.meta.url)),
    test: {
      coverage: {
        enabled: true,
        provider: 'v8',
        include: ['lib/**/*.ts', 'functions/**/*.ts'],
        reporter: [['json', { file: 'coverage-final.json' }]],
        reportsDirectory: 'coverage/workers',
        // the figures are printed either way; run.ts still fails when the suite fails
        reportOnFailure: true,
      },
    },
  }),
);
