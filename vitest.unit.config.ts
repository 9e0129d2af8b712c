import { defineConfig } from 'vitest/config';

/**
 * The security core's unit tests alone, with a light global setup (DynamoDB Local only, no
 * gateway): what `npm run mutation` runs for every mutant (stryker.config.mjs), and a quick
 * loop while working (`npx vitest run -c vitest.unit.config.ts`). `npm test` runs these
 * files too, through vitest.config.ts and the full local runtime.
 */
export default defineConfig({
  test: {
    // the unit tests of the modules npm run mutation mutates (auth, crypto, ratelimit, http,
    // sharing access, the SSRF guard and device signatures); the other unit tests run in npm test
    include: [
      'test/unit/{auth,crypto,http,ratelimit,sharing,events}-*.test.ts',
      'test/unit/crypto.test.ts',
      'test/unit/webhooks-ssrf.test.ts',
      'test/unit/agents-signature.test.ts',
    ],
    globalSetup: ['test/unit/setup.ts'],
    testTimeout: 30_000,
    env: { POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true' },
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
