// @ts-check
/**
 * Mutation testing of the security core (`npm run mutation`; not part of npm test).
 * Each mutant is judged by the unit and integration tests of the core alone
 * (vitest.mutation.config.ts: DynamoDB Local, no gateway), only those that cover it (perTest). Surviving mutants that
 * no test can kill because the program behaves the same are listed, with the reason, in
 * stryker.equivalent.md beside this file. Reports: coverage/mutation/.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  mutate: [
    'lib/auth/**/*.ts',
    'lib/crypto/**/*.ts',
    'lib/ratelimit/**/*.ts',
    'lib/http/**/*.ts',
    'lib/core/**/*.ts',
    'lib/authn/**/*.ts',
    'lib/agents/device-signature.ts',
    'lib/sharing/access.ts',
    'lib/events/ssrf.ts',
  ],
  coverageAnalysis: 'perTest',
  // reuse results of unchanged code and tests between runs (coverage/mutation/incremental.json)
  incremental: true,
  incrementalFile: 'coverage/mutation/incremental.json',
  concurrency: 2,
  timeoutMS: 20_000,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'coverage/mutation/index.html' },
  jsonReporter: { fileName: 'coverage/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  thresholds: { high: 90, low: 85, break: null },
  // the sandbox copies the project: not its build outputs, reports or local data
  ignorePatterns: ['dist', 'cdk.out', 'coverage', '.data', '.test-data', 'reports'],
  tempDirName: 'coverage/.stryker-tmp',
  cleanTempDir: 'always',
};
