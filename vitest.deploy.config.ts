import { defineConfig } from 'vitest/config';

/**
 * `npm run test:deploy`: the synthesized stacks deployed into moto's CloudFormation on
 * loopback (test/deploy). No local runtime: the test starts moto itself, and skips with the
 * reason where python3 has no moto.
 */
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
