import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:deploy`: the synthesized stacks deployed into moto's CloudFormation on
 * loopback (test/deploy). No local runtime: the test starts moto itself, and skips with the
 * reason where python3 has no moto. The syntheses go into a directory of the run's own,
 * removed when it ends (test/setup/synth-cache.ts): left to the worker's exit, one was left in
 * /tmp after every run.
 */
export default defineConfig({
  test: {
    include: ['test/deploy/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    env: { SYNTH_CACHE_DIR: process.env.SYNTH_CACHE_DIR ?? join(tmpdir(), `secrets-api-deploy-synth-${process.pid}`) },
    globalSetup: ['test/setup/synth-cache.ts'],
  },
});
