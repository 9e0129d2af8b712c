import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

/**
 * The unit tier starts no process (README, "Tiers"): every way of starting one throws,
 * naming where the test belongs. A test that needs a tool (openssl, a server, a Node
 * process) is an integration test.
 */
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  Object.assign(childProcess, {
    [name]: () => {
      throw new Error(`the unit tier starts no process (child_process.${name}): move this test to test/integration/`);
    },
  });
}
syncBuiltinESMExports();
