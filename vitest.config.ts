import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirst from './test/setup/sequencer.js';

/**
 * The suite's tiers, each a project that starts exactly what its tests need, once:
 * - `unit` (test/unit): no process at all: library code in-process, AWS clients mocked.
 *   `npm run test:unit`; a test that needs a table or a server does not belong here;
 * - `integration` (test/integration): library code in-process against DynamoDB Local (and
 *   the PostgreSQL/MariaDB services where a test says so): test/setup/dynamodb.ts starts
 *   DynamoDB Local alone. `npm run test:integration`;
 * - `infra` (test/infra, test/docs but the served page): the synthesized templates, the IAM
 *   evaluation and the generated documents, in-process; no process. `npm run test:infra`;
 * - `source`: the HTTP tests (test/api), test/runtime and the served docs page against the
 *   local runtime over the TypeScript sources (`npm start`);
 * - `artifact`: the HTTP tests again, and test/artifact, against what `cdk deploy` ships:
 *   the built bundles wired as the synthesized templates wire them, each function in its own
 *   Node 22 process (`npm start -- --artifact`).
 * `npm test` runs the first four (LOCAL_PROJECTS) with merged coverage; `npm run
 * test:artifact` runs the artifact project; CI (.ci/run) runs both, so nothing lands that
 * fails through the bundles. `npx vitest run --project artifact test/api/secrets.test.ts` runs
 * one file on one of them.
 */
/** The projects `npm test` runs: everything but the artifact tier (README, "Tiers"). */
export const LOCAL_PROJECTS = ['unit', 'integration', 'infra', 'source'] as const;

/**
 * test/api files the artifact project leaves out: the authorization matrix (4,449 requests of
 * 54 kinds of caller over every route). On a quiet 2-core machine its requests take 35 s on
 * the source runtime and 322 s on the artifact runtime (a Node process per function; 329/329
 * passed there too, 0 IAM denials); at load 15-42 they did not finish in 600 s on the artifact
 * runtime. The decisions it checks are the same modules in both (lib/http, lib/auth); what the
 * bundles add is checked per route by route-matrix.test.ts (401, 403 and never 501 through every
 * bundle) and by the rest of test/api on the artifact runtime.
 */
export const ARTIFACT_SKIPPED_API_FILES = ['test/api/authz-matrix.test.ts'];

/** test/docs files that need the running source runtime (the served docs page, the README walk-through); the rest of test/docs is the infra tier. */
export const RUNTIME_DOCS_FILES = ['test/docs/docs-served.test.ts', 'test/docs/readme-walkthrough.test.ts'];

/**
 * How much longer than on a quiet machine a test and a hook may take: TEST_TIMEOUT_SCALE when
 * set (a positive number), else the machine's load per core when the run starts, between 1
 * and 5. A hook that synthesizes the app takes 30 s on two idle cores and several minutes
 * beside two CPU-bound processes; the same budget for both either hides a hang or fails a
 * busy machine. The runtime's start steps have budgets of their own (test/setup/runtime.ts).
 */
export function timeoutScale(env: NodeJS.ProcessEnv = process.env, load = loadavg()[0]!, cores = availableParallelism()): number {
  const set = Number(env.TEST_TIMEOUT_SCALE);
  if (env.TEST_TIMEOUT_SCALE && Number.isFinite(set) && set > 0) return set;
  return Math.min(5, Math.max(1, Math.ceil(load / cores)));
}
const scale = timeoutScale();

const shared = {
  testTimeout: Math.round(60_000 * scale),
  hookTimeout: Math.round(120_000 * scale),
  env: {
    // library code run in-process prints no EMF metric lines (lib/core/metrics.ts) unless asked for
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    // the workers' own limits scale alike (test/helpers/timeouts.ts)
    TEST_TIMEOUT_SCALE: String(scale),
    // whole-table syntheses kept for this run (test/infra/synth.ts); removed by test/setup/synth-cache.ts
    SYNTH_CACHE_DIR: process.env.SYNTH_CACHE_DIR ?? join(tmpdir(), `secrets-api-synth-${process.pid}`),
  },
};

/** The five projects; `npm test` selects LOCAL_PROJECTS of them, `npm run test:artifact` the artifact. */
const projects = () => {
  // group 0 needs no runtime and runs while the runtimes build and start (their global setups
  // return at once, test/setup/runtime.ts); the source (1) and artifact (2) files wait for theirs
  const noRuntime = { sequence: { groupOrder: 0 } };
  const withRuntime = { sequence: { groupOrder: 1 }, setupFiles: ['test/setup/ready.ts', 'test/setup/responses.ts'] };
  return [
    {
      test: {
        ...shared,
        ...noRuntime,
        name: 'unit',
        include: ['test/unit/**/*.test.ts'],
        setupFiles: ['test/setup/no-process.ts'],
        // one module graph per worker, not per file: the files share no state (checked by
        // running them so), and re-importing lib/ for each of them was most of the tier's time
        isolate: false,
      },
    },
    {
      test: {
        ...shared,
        ...noRuntime,
        name: 'integration',
        include: ['test/integration/**/*.test.ts'],
        globalSetup: ['test/setup/dynamodb.ts'],
      },
    },
    {
      test: {
        ...shared,
        ...noRuntime,
        name: 'infra',
        // the synthesized templates and the documents generated from them: no process
        include: ['test/infra/**/*.test.ts', 'test/docs/**/*.test.ts'],
        exclude: RUNTIME_DOCS_FILES,
        globalSetup: ['test/setup/synth-cache.ts'],
        // one module graph per worker, as the unit tier: each of the 12 files imported aws-cdk-lib
        // and the app afresh; shared, the tier took 60-65 CPU-s instead of 80-84 (two runs each,
        // `npx tsx scripts/bench/cpu-by-process.ts -- npx vitest run --project infra [--no-isolate]`).
        // The integration tier stays isolated: its files mock AWS clients and hold pools (without
        // isolation 93 integration tests failed)
        isolate: false,
      },
    },
    {
      test: {
        ...shared,
        ...withRuntime,
        name: 'source',
        // one module graph per worker, as the unit and infra tiers: a new process per file
        // started vitest's runtime and imported the helpers, the SDK and lib/ afresh 76 times. The
        // files that configure lib/ otherwise (a table of their own, a mocked queue) take their own
        // instances of it and restore the runtime's (useOwnConfig, test/helpers/in-process.ts).
        // The project alone, two workers: 257 s and 375 CPU-s, workers 89 (`npx tsx
        // scripts/bench/cpu-by-process.ts -- npx vitest run --project source`); README, "Testing"
        isolate: false,
        // four files at once on two cores: a file mostly waits for its requests, which the
        // runtime and DynamoDB Local answer. npm test with 2, 3 and 4 here (one run each, quiet
        // machine): 422 s and 680 CPU-s, 389 s and 687, 350 s and 582 (README, "Testing")
        maxWorkers: 4,
        include: ['test/api/**/*.test.ts', 'test/runtime/**/*.test.ts', ...RUNTIME_DOCS_FILES],
        globalSetup: ['test/setup/openapi.ts', 'test/setup/contract.ts', 'test/setup/global.ts'],
      },
    },
    {
      test: {
        ...shared,
        ...withRuntime,
        // a group of its own: vitest runs a group's projects with one worker count, and the
        // artifact's function environments keep both cores busy with two files
        sequence: { groupOrder: 2 },
        name: 'artifact',
        include: ['test/api/**/*.test.ts', 'test/artifact/**/*.test.ts'],
        exclude: ARTIFACT_SKIPPED_API_FILES,
        globalSetup: ['test/setup/openapi.ts', 'test/setup/contract.ts', 'test/setup/artifact.ts'],
      },
    },
  ];
};

export default defineConfig({
  test: {
    pool: 'forks',
    // two machine cores
    maxWorkers: 2,
    // the longest files first, the source runtime's before the artifact's (test/setup/sequencer.ts)
    sequence: { sequencer: LongestFirst },
    projects: projects(),
  },
});
