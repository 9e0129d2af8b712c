import { defineConfig } from 'vitest/config';

/**
 * Two projects, each with its own local runtime:
 * - `source`: every test, against the runtime over the TypeScript sources (`npm start`);
 * - `artifact`: the HTTP tests again, and test/artifact, against what `cdk deploy` ships:
 *   the built bundles wired as the synthesized templates wire them, each function in its own
 *   Node 22 process (`npm start -- --artifact`).
 * `npx vitest run --project artifact test/api/secrets.test.ts` runs one file on one of them.
 */
const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // library code run in-process prints no EMF metric lines (lib/http/metrics.ts) unless asked for
  env: { POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true' },
};

export default defineConfig({
  test: {
    pool: 'forks',
    // two machine cores
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'source',
          include: ['test/**/*.test.ts'],
          exclude: ['test/artifact/**', 'test/deploy/**'],
          globalSetup: ['test/setup/openapi.ts', 'test/setup/global.ts'],
          setupFiles: ['test/setup/responses.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'artifact',
          include: ['test/api/**/*.test.ts', 'test/artifact/**/*.test.ts'],
          globalSetup: ['test/setup/openapi.ts', 'test/setup/artifact.ts'],
          setupFiles: ['test/setup/responses.ts'],
          // the runtime builds and synthesizes first
        },
      },
    ],
  },
});
