import { defineConfig } from 'vitest/config';

/**
 * The security core's unit and integration tests alone, with the integration tier's light
 * global setup (DynamoDB Local only, no gateway): what `npm run mutation` runs for every
 * mutant (stryker.config.mjs). `npm test` runs these files too, in the `unit` and
 * `integration` projects of vitest.config.ts.
 */
export default defineConfig({
  test: {
    // the tests of the modules npm run mutation mutates (auth, crypto, ratelimit, http,
    // sharing access, the SSRF guard and device signatures)
    include: [
      'test/{unit,integration}/{auth,crypto,http,ratelimit,sharing,events}-*.test.ts',
      'test/{unit,integration}/crypto.test.ts',
      'test/unit/webhooks-ssrf.test.ts',
      'test/unit/agents-signature.test.ts',
    ],
    globalSetup: ['test/setup/dynamodb.ts'],
    testTimeout: 30_000,
    env: { POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true' },
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
