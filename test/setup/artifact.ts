import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { LOCAL_CLUSTER_ID } from '../../scripts/local/artifact/cloudhsm-control-plane.js';
import { type ArtifactReport, readReport } from '../../scripts/local/artifact/runtime.js';
import { ARTIFACT_CONTEXT } from '../helpers/artifact.js';
import { launchRuntime } from './runtime.js';

/**
 * What the artifact project proves beyond each test's own assertions, from the runtime's
 * report (scripts/local/artifact/runtime.ts), after the suite:
 * - no function failed to initialise and none crashed, timed out or returned a malformed
 *   result (each would be a 5xx in AWS that a test might have tolerated);
 * - the CloudHSM API (stood in) received nothing but DescribeClusters for the configured
 *   cluster, exactly as lib/signing/cloudhsm.ts sends it;
 * - on a whole run (ARTIFACT_FULL_RUN=1, set by npm run test:artifact): every built route answered at
 *   least one 2xx through its bundle, so no handler module is only ever seen failing, and
 *   the signing functions did look their cluster up.
 * - the IAM evaluation tier (docs/architecture.md, "The IAM evaluation tier"): every AWS call
 *   a function made is allowed by the synthesized policies of the role that signed it, and
 *   every signed request was one the evaluation could read;
 * A module that fails at import stops the runtime before the suite, naming the module.
 */
export function reportProblems(report: ArtifactReport, fullRun: boolean): string[] {
  const problems: string[] = [];
  for (const f of report.initFailures) problems.push(`function ${f.functionName} (${f.handler}) failed to initialise: ${f.error}`);
  for (const f of report.failures) problems.push(`${f.method}: the function failed (${f.errorType}): ${f.errorMessage}`);
  problems.push(...iamProblems(report));
  const expected = JSON.stringify({ Filters: { clusterIds: [LOCAL_CLUSTER_ID] } });
  for (const r of report.cloudhsmRequests) {
    if (r.target !== 'BaldrApiService.DescribeClusters' || JSON.stringify(r.body) !== expected) {
      problems.push(`unexpected CloudHSM API request ${r.target} ${JSON.stringify(r.body)} (expected DescribeClusters ${expected})`);
    }
  }
  if (fullRun) {
    if (report.cloudhsmRequests.length === 0) problems.push('no signing function looked its CloudHSM cluster up (DescribeClusters) during the run');
    const answered2xx = (m: ArtifactReport['methods'][number]) => Object.keys(m.statuses).some((s) => Number(s) >= 200 && Number(s) < 300);
    // the OPTIONS methods all integrate the one preflight function: it must answer, not each path
    const preflights = report.methods.filter((m) => m.method.startsWith('OPTIONS '));
    if (preflights.length > 0 && !preflights.some(answered2xx)) problems.push('no CORS preflight answered 2xx through the built preflight function');
    const silent = report.methods.filter(
      (m) => m.handler && !m.handler.startsWith('not-implemented.') && !m.method.startsWith('OPTIONS ') && !answered2xx(m),
    );
    for (const m of silent) problems.push(`${m.method} (${m.handler}) never answered 2xx through the built bundle`);
  }
  return problems;
}

/** The IAM evaluation's denials, one line per route, action and reason (the same denial of many items is one line). */
export function iamProblems(report: ArtifactReport, max = 40): string[] {
  const iam = report.iam;
  if (!iam) return ['the artifact report has no IAM evaluation (scripts/local/artifact/iam.ts)'];
  // every run's functions call AWS (the first request reads a credential): none recorded means the recorder is broken
  if (iam.requests === 0)
    return ['the IAM evaluation recorded no AWS request of any function: the recorder (scripts/local/artifact/bootstrap.mjs) saw nothing'];
  const lines = new Map<string, string>();
  for (const d of iam.denied) {
    const call = d.call as { action: string; resource: string; context: unknown; principal: { kind: string } };
    const key = `${d.caller} ${call.action} ${call.principal.kind} ${d.reason.replace(/"value":"[^"]*"/g, '')}`;
    if (!lines.has(key)) {
      lines.set(
        key,
        `IAM denies ${d.caller}: ${call.action} on ${call.resource} as the ${call.principal.kind === 'session' ? 'tenant session' : 'execution role'} with ${JSON.stringify(call.context)}: ${d.reason}`,
      );
    }
  }
  for (const u of iam.undecoded)
    lines.set(`undecoded ${u.caller} ${u.error}`, `IAM evaluation could not read an AWS request of ${u.caller}: ${u.error}`);
  const all = [...lines.values()];
  return all.length > max ? [...all.slice(0, max), `... and ${all.length - max} more IAM problems (the artifact report lists them all)`] : all;
}

/** Launched, not waited for: each test file waits for it (test/setup/ready.ts). */
export default async (project: TestProject) =>
  (
    await launchRuntime(project, {
      artifact: true,
      // the CloudHSM context is always on (the runtime's local cluster); CORS on top
      env: { ARTIFACT_CONTEXT: JSON.stringify(ARTIFACT_CONTEXT) },
      checks: (dataDir) => {
        const file = join(dataDir, 'artifact-report.json');
        if (!existsSync(file)) return [`the artifact runtime wrote no report to ${file}`];
        const report = readReport(file);
        // what the run cost in function processes (each a Node 22 start and, under `npm run coverage`, a coverage file)
        process.stderr.write(
          `artifact runtime: ${report.coldStarts} function environments started, ${report.evictions} retired for room (at most ${report.peakEnvironments} alive, ceiling ${report.maxEnvironments}; ${report.modules.length} modules import-checked, ${report.methods.length} methods); ${report.shutdowns.terminated} ended by SIGTERM (an extension registered), ${report.shutdowns.overBudget} of them not exiting within 500 ms\n`,
        );
        return reportProblems(report, process.env.ARTIFACT_FULL_RUN === '1');
      },
    })
  ).stop;
