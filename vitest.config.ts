import { defineConfig } from 'vitest/config';

/**
 * The suite's tiers, each a project that starts exactly what its tests need, once:
 * - `unit` (test/unit): no process at all: library code in-process, AWS clients mocked.
 *   `npm run test:unit`; a test that needs a table or a server does not belong here;
 * - `integration` (test/integration): library code in-process against DynamoDB Local (and
 *   the PostgreSQL/MariaDB services where a test says so): test/setup/dynamodb.ts starts
 *   DynamoDB Local alone. `npm run test:integration`;
 * - `source`: the HTTP tests (test/api), test/runtime, test/docs and test/infra against the
 *   local runtime over the TypeScript sources (`npm start`);
 * - `artifact`: the HTTP tests again, and test/artifact, against what `cdk deploy` ships:
 *   the built bundles wired as the synthesized templates wire them, each function in its own
 *   Node 22 process (`npm start -- --artifact`).
 * `npx vitest run --project artifact test/api/secrets.test.ts` runs one file on one of them.
 */
const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // library code run in-process prints no EMF metric lines (lib/core/metrics.ts) unless asked for
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
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // one module graph per worker, not per file: the files share no state (checked by
          // running them so), and re-importing lib/ for each of them was most of the tier's time
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/setup/dynamodb.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'source',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', 'test/integration/**', 'test/artifact/**', 'test/deploy/**'],
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
