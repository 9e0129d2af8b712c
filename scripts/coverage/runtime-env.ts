import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * First global setup of scripts/coverage/vitest.config.ts: the processes the suite's setup
 * starts next inherit NODE_V8_COVERAGE (RUNTIME_COVERAGE_DIR) and write raw V8 coverage when
 * they exit. Its teardown runs after the suite's, which stops the runtime: it waits until
 * the runtime's coverage file is written and no longer grows.
 */
export default function setup() {
  const dir = process.env.RUNTIME_COVERAGE_DIR;
  if (!dir) throw new Error('RUNTIME_COVERAGE_DIR is not set: run npm run coverage');
  process.env.NODE_V8_COVERAGE = dir;
  return async () => {
    const sizes = () => readdirSync(dir).filter((f) => f.startsWith('coverage-')).map((f) => statSync(join(dir, f)).size).join(',');
    const until = Date.now() + 30_000;
    let last = '';
    while (Date.now() < until) {
      const now = sizes();
      if (now !== '' && now === last) return;
      last = now;
      await new Promise((r) => setTimeout(r, 500));
    }
    process.stderr.write(`\nthe runtime process wrote no V8 coverage into ${dir} within 30 s of the end of the suite\n`);
  };
}
