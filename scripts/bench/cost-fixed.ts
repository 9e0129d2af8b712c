/**
 * The fixed monthly cost of each documented variant (docs/deployment.md "Variants"), from its
 * synthesized templates (test/infra/synth.ts, offline): every resource with a monthly price is
 * counted, priced at the us-east-1 list prices of PRICES.date, and what the deployment
 * references but does not create (the CloudHSM cluster, the WAF web ACL) is priced from the
 * context that names it. Used by `npm run bench:cost` (scripts/bench/cost.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Synthesized, synthesize } from '../../test/infra/synth.js';

/** Monthly list prices (USD, us-east-1, 730 hours a month), read on scripts/bench/cost.ts PRICES.date. */
export const MONTHLY = {
  kmsKey: 1,
  alarm: 0.1,
  /** Beyond the 3 free dashboards of an account. */
  dashboard: 3,
  /** A custom metric (EMF) an alarm or the dashboard reads: first 10,000 metrics. */
  customMetric: 0.3,
  secret: 0.4,
  /** Interface VPC endpoint, per AZ: $0.01 per hour. */
  vpcEndpointPerAz: 7.3,
  /** CloudHSM hsm2m.medium at $1.45 per HSM-hour; a cluster for production runs 2 HSMs (AWS's recommendation: 2 AZs). */
  hsmHour: 1.45,
  hsmsPerCluster: 2,
  /** WAF: a web ACL and one rule (group) in it; requests are $0.60 per million on top. */
  wafWebAcl: 5,
  wafRule: 1,
  wafPerMillionRequests: 0.6,
} as const;

const HOURS = 730;

interface Variant {
  readonly name: string;
  readonly context: Record<string, string>;
}

/** A stand-in layer file, in a directory removed when the process ends (it was left in /tmp). */
function layerFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hsm-layer-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cloudhsm-layer.zip');
  writeFileSync(file, 'stand-in for the CloudHSM layer');
  return file;
}

export const VARIANTS: readonly Variant[] = [
  { name: 'default', context: {} },
  { name: 'WAF', context: { wafWebAclArn: 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/api/0c8a7f3e-0000-4000-8000-000000000000' } },
  {
    name: 'CloudHSM',
    context: {
      hsmClusterId: 'cluster-abc',
      hsmVpcId: 'vpc-123',
      hsmSubnetIds: 'subnet-1,subnet-2',
      hsmSecurityGroupId: 'sg-123',
      hsmPinSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hsm-pin-AbCdEf',
      requireHsm: 'true',
    },
  },
];

export interface FixedCost {
  readonly variant: string;
  readonly lines: readonly { readonly what: string; readonly count: number; readonly monthly: number }[];
  readonly total: number;
  readonly functions: number;
}

const ofType = (s: Synthesized, type: string) => s.templates.flatMap((t) => Object.values(t.resources).filter((r) => r.Type === type));

/** The custom metrics (not AWS/*) alarms read: each is billed per month once published. */
function customMetrics(s: Synthesized): number {
  const seen = new Set<string>();
  for (const a of ofType(s, 'AWS::CloudWatch::Alarm')) {
    const p = a.Properties ?? {};
    const metrics = p.Metrics ? (p.Metrics as any[]).map((m) => m.MetricStat?.Metric).filter(Boolean) : [{ Namespace: p.Namespace, MetricName: p.MetricName, Dimensions: p.Dimensions }];
    for (const m of metrics) if (typeof m.Namespace === 'string' && !m.Namespace.startsWith('AWS/')) seen.add(JSON.stringify(m));
  }
  return seen.size;
}

export function fixedCosts(): FixedCost[] {
  return VARIANTS.map((v) => {
    const context = v.name === 'CloudHSM' ? { ...v.context, hsmLayerPath: layerFile() } : v.context;
    const s = synthesize({ context });
    const lines: { what: string; count: number; monthly: number }[] = [];
    const add = (what: string, count: number, each: number) => count > 0 && lines.push({ what, count, monthly: count * each });
    add('KMS keys (AWS::KMS::Key)', ofType(s, 'AWS::KMS::Key').length, MONTHLY.kmsKey);
    add('CloudWatch alarms', ofType(s, 'AWS::CloudWatch::Alarm').length, MONTHLY.alarm);
    add('CloudWatch dashboards', ofType(s, 'AWS::CloudWatch::Dashboard').length, MONTHLY.dashboard);
    add('custom metrics read by alarms (EMF)', customMetrics(s), MONTHLY.customMetric);
    add('Secrets Manager secrets', ofType(s, 'AWS::SecretsManager::Secret').length, MONTHLY.secret);
    const endpoints = ofType(s, 'AWS::EC2::VPCEndpoint').filter((e) => e.Properties?.VpcEndpointType === 'Interface');
    add('interface VPC endpoints (per AZ)', endpoints.reduce((n, e) => n + ((e.Properties?.SubnetIds as unknown[] | undefined)?.length ?? 2), 0), MONTHLY.vpcEndpointPerAz);
    if (ofType(s, 'AWS::WAFv2::WebACLAssociation').length > 0) add('WAF web ACL + 1 rule (referenced; + $0.60 per million requests)', 1, MONTHLY.wafWebAcl + MONTHLY.wafRule);
    if (context.hsmClusterId) add(`CloudHSM cluster (referenced): ${MONTHLY.hsmsPerCluster} HSMs × ${HOURS} h`, MONTHLY.hsmsPerCluster, MONTHLY.hsmHour * HOURS);
    const pin = context.hsmPinSecretArn ? 1 : 0;
    add('Secrets Manager secret (referenced: the HSM PIN)', pin, MONTHLY.secret);
    const total = lines.reduce((n, l) => n + l.monthly, 0);
    return { variant: v.name, lines, total, functions: ofType(s, 'AWS::Lambda::Function').length };
  });
}

export function printFixed(costs: readonly FixedCost[]): string {
  const out = ['Fixed monthly cost per variant (USD, us-east-1 list prices; synthesized templates):', '', '| variant | item | count | USD/month |', '|---|---|---:|---:|'];
  for (const c of costs) {
    for (const l of c.lines) out.push(`| ${c.variant} | ${l.what} | ${l.count} | ${l.monthly.toFixed(2)} |`);
    out.push(`| **${c.variant}** | **total** (${c.functions} functions, no idle charge) | | **${c.total.toFixed(2)}** |`);
  }
  return out.join('\n');
}
