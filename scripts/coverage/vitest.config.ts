import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * `npm run coverage`: the suite's own configuration, plus V8 coverage of the test workers
 * and NODE_V8_COVERAGE for the processes the global setup starts (the local runtime), and
 * only for them (runtime-env.ts sets it around the suite's setup; workers start without it).
 */
const setups = [base.test?.globalSetup ?? []].flat();
if (setups.length === 0) throw new Error('vitest.config.ts has no globalSetup: scripts/coverage/vitest.config.ts expects the runtime to be started there');

export default defineConfig({
  ...base,
  // the project, not this folder, as vitest.config.ts has it
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    ...base.test,
    globalSetup: ['scripts/coverage/runtime-env.ts', ...setups, 'scripts/coverage/runtime-env-off.ts'],
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
});
