import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * `npm test` / `npm run coverage` (scripts/coverage/run.ts): the suite's own configuration
 * plus V8 coverage of the test workers; run.ts selects the projects (LOCAL_PROJECTS of
 * vitest.config.ts unless told). The runtimes the setups start write their own raw V8
 * coverage (test/setup/runtime.ts, from RUNTIME_COVERAGE_DIR): the source runtime's process,
 * and, when the artifact project is named (`npm run coverage -- --project artifact`), each
 * function process of the artifact runtime (scripts/coverage/artifact.ts).
 */
export default mergeConfig(
  base,
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
