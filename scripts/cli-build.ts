import { chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/**
 * Bundles the command-line client (cli/) into one plain JavaScript file, bin/secrets.cjs:
 * the `bin` of package.json, committed so that `npm i -g <repository>` installs a working
 * command without building (npm links a local folder and runs no build for it). Node
 * built-ins only at run time: commander and the typed client (client/) are inside.
 * test/integration/cli-build.test.ts fails when the committed file is not what this builds.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_BUNDLE = join(ROOT, 'bin', 'secrets.cjs');

/**
 * The CLI prints its version from package.json (cli/main.ts): only the version goes into the
 * bundle. The whole file went in before, so the shipped command carried the project's scripts
 * and dependency list, and a new devDependency changed it.
 */
const versionOnly: Plugin = {
  name: 'package-version-only',
  setup(b) {
    const manifest = join(ROOT, 'package.json');
    b.onLoad({ filter: /[\\/]package\.json$/ }, (args) =>
      args.path === manifest ? { contents: JSON.stringify({ version: JSON.parse(readFileSync(manifest, 'utf8')).version }), loader: 'json' } : undefined,
    );
  },
};

export const cliBuildOptions = (): BuildOptions => ({
  absWorkingDir: ROOT,
  entryPoints: ['cli/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [versionOnly],
});

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({ ...cliBuildOptions(), outfile: CLI_BUNDLE });
  chmodSync(CLI_BUNDLE, 0o755);
  process.stdout.write(`wrote ${CLI_BUNDLE}\n`);
}
