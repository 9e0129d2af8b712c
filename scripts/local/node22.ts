import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The major version of Node.js that Lambda's nodejs22.x runtime runs. */
export const LAMBDA_NODE_MAJOR = 22;

const require = createRequire(import.meta.url);

/**
 * A Node 22 binary to run the built bundles under, as Lambda would: this process's own when
 * it is 22, else the one the optional dependency `node-linux-<arch>` (npm ci) unpacked.
 */
export function node22(): string {
  if (Number(process.versions.node.split('.')[0]) === LAMBDA_NODE_MAJOR) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  let bin: string | undefined;
  try {
    bin = join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'node');
  } catch {
    bin = undefined;
  }
  if (!bin || !existsSync(bin)) {
    throw new Error(
      `no Node ${LAMBDA_NODE_MAJOR} binary: this is Node ${process.versions.node} and the optional dependency ${pkg} is not installed (run npm ci on linux x64/arm64, or use Node ${LAMBDA_NODE_MAJOR})`,
    );
  }
  const version = execFileSync(bin, ['-v'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${LAMBDA_NODE_MAJOR}.`)) throw new Error(`${bin} is ${version}, not Node ${LAMBDA_NODE_MAJOR}`);
  return bin;
}
