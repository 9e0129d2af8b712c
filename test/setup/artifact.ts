import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type ArtifactReport, readReport } from '../../scripts/local/artifact/runtime.js';
import { startRuntime } from './runtime.js';

/**
 * What the artifact project proves beyond each test's own assertions, from the runtime's
 * report (scripts/local/artifact/runtime.ts), after the suite:
 * - no function failed to initialise and none crashed, timed out or returned a malformed
 *   result (each would be a 5xx in AWS that a test might have tolerated);
 * - on a whole run (ARTIFACT_FULL_RUN=1, set by npm test): every built route answered at
 *   least one 2xx through its bundle, so no handler module is only ever seen failing.
 * A module that fails at import stops the runtime before the suite, naming the module.
 */
export function reportProblems(report: ArtifactReport, fullRun: boolean): string[] {
  const problems: string[] = [];
  for (const f of report.initFailures) problems.push(`function ${f.functionName} (${f.handler}) failed to initialise: ${f.error}`);
  for (const f of report.failures) problems.push(`${f.method}: the function failed (${f.errorType}): ${f.errorMessage}`);
  if (fullRun) {
    const silent = report.methods.filter(
      (m) => m.handler && !m.handler.startsWith('not-implemented.') && !Object.keys(m.statuses).some((s) => Number(s) >= 200 && Number(s) < 300),
    );
    for (const m of silent) problems.push(`${m.method} (${m.handler}) never answered 2xx through the built bundle`);
  }
  return problems;
}

export default (project: TestProject) =>
  startRuntime(project, {
    artifact: true,
    checks: (dataDir) => {
      const file = join(dataDir, 'artifact-report.json');
      if (!existsSync(file)) return [`the artifact runtime wrote no report to ${file}`];
      return reportProblems(readReport(file), process.env.ARTIFACT_FULL_RUN === '1');
    },
  });
