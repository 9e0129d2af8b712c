/**
 * `npm run lint:openapi`: writes the OpenAPI document (build/openapi.json) and lints it with
 * Redocly (`recommended`, redocly.yaml) and Spectral (`spectral:oas`, .spectral.yaml). Any
 * error or warning fails: a rule is either met or turned off in its config with a reason.
 */
import { spawnSync } from 'node:child_process';
import { DEFAULT_OUTPUT, writeOpenApi } from './openapi.js';

await writeOpenApi([DEFAULT_OUTPUT]);
const run = (args: string[]) => spawnSync('npx', ['--no-install', ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

const redocly = run(['redocly', 'lint', DEFAULT_OUTPUT, '--format=json']);
let problems = 0;
try {
  const report = JSON.parse(redocly.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location?: { pointer?: string }[] }[] };
  for (const p of report.problems) process.stdout.write(`redocly ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? ''})\n`);
  problems += report.totals.errors + report.totals.warnings;
  process.stdout.write(`redocly (recommended): ${report.totals.errors} errors, ${report.totals.warnings} warnings\n`);
} catch {
  process.stdout.write(`redocly failed to run (status ${redocly.status}):\n${redocly.stdout}${redocly.stderr}\n`);
  problems++;
}

// --fail-severity=warn: warnings fail too
const spectral = run(['spectral', 'lint', DEFAULT_OUTPUT, '--ruleset', '.spectral.yaml', '--fail-severity=warn', '-f', 'text']);
process.stdout.write(spectral.stdout);
if (spectral.status !== 0) {
  process.stdout.write(`spectral (spectral:oas): failed (status ${spectral.status})\n${spectral.stderr}`);
  problems++;
} else process.stdout.write('spectral (spectral:oas): 0 errors, 0 warnings\n');

process.exit(problems === 0 ? 0 : 1);
