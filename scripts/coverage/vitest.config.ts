import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * `npm test` / `npm run coverage` (scripts/coverage/run.ts): the suite's own configuration
 * (both projects) plus V8 coverage of the test workers. The source runtime that the
 * `source` project's setup starts writes its own raw V8 coverage (test/setup/runtime.ts sets
 * NODE_V8_COVERAGE from RUNTIME_COVERAGE_DIR for that process only).
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
