/**
 * `npm run build [-- <outDir>] [--source-maps]`: bundles every handler module into its own
 * code asset (infra/bundle.ts, which the CDK app also runs before a synth).
 */
import { relative } from 'node:path';
import { buildFunctions } from '../infra/bundle.js';

const args = process.argv.slice(2);
const result = await buildFunctions({ outDir: args.find((a) => !a.startsWith('--')), sourceMaps: args.includes('--source-maps') });
const bytes = Object.values(result.manifest.assets).reduce((n, a) => n + a.bytes, 0);
process.stdout.write(
  `built ${result.modules.length} handler modules, one code asset each, into ${relative(process.cwd(), result.outDir) || '.'} ` +
    `(${(bytes / 1024 / 1024).toFixed(1)} MiB${result.manifest.sourceMaps ? ' without source maps' : ''}) in ${(result.milliseconds / 1000).toFixed(1)} s\n`,
);
