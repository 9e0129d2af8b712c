import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ownItemsKey, ROUTES, tenancyOf, tenantCredentialOf } from '../../lib/routes.js';
import { MAX_SESSIONS, REFRESH_MARGIN_MS, TENANT_SESSION_SECONDS } from '../../lib/tenancy/credentials.js';
import { startSts } from '../local/artifact/sts.js';

/**
 * The cost of tenancy by IAM (lib/tenancy): the first table call of a tenant in a container
 * (AssumeRole, a new client, the call) beside a warm one (the cached session), in this
 * process against the bench's DynamoDB Local and the STS stand-in on loopback. In AWS the
 * first call adds STS's own round trip (typically tens of milliseconds) once per tenant per
 * container per session (an hour, renewed 6 minutes before expiry). Then the STS capacity
 * model of docs/capacity.md with the session lifetime the code keeps.
 */
export interface TenancyBench {
  readonly tenants: number;
  readonly firstP50Ms: number;
  readonly firstP99Ms: number;
  readonly warmP50Ms: number;
  readonly warmP99Ms: number;
  readonly ratio: number;
  readonly assumeRoles: number;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export async function tenancyBench(dynamoEndpoint: string, tenants = Number(process.env.BENCH_TENANTS ?? 200)): Promise<TenancyBench> {
  const role = 'arn:aws:iam::123456789012:role/bench-tenant-access';
  const sts = await startSts((arn) => arn === role);
  try {
    Object.assign(process.env, {
      TABLE_NAME: 'secrets',
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      TENANT_ROLE_ARN: role,
      STS_ENDPOINT: sts.endpoint,
      KEY_PROVIDER: 'local',
      LOCAL_MASTER_KEY_FILE: '/nonexistent/bench-does-not-seal',
      AWS_REGION: 'us-east-1',
    });
    const { withTenant } = await import('../../lib/tenancy/scope.js');
    const { db, tableName } = await import('../../lib/store/client.js');
    const call = (tid: string) => withTenant(tid, () => db().send(new GetCommand({ TableName: tableName(), Key: { pk: `T#${tid}`, sk: 'COUNTERS' } })));
    await call(randomUUID()); // the process's own warm-up (module load, connection pool)
    const first: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < tenants; i++) {
      const tid = randomUUID();
      let t = performance.now();
      await call(tid);
      first.push(performance.now() - t);
      t = performance.now();
      await call(tid);
      warm.push(performance.now() - t);
    }
    const r = {
      tenants,
      firstP50Ms: pct(first, 50),
      firstP99Ms: pct(first, 99),
      warmP50Ms: pct(warm, 50),
      warmP99Ms: pct(warm, 99),
      assumeRoles: sts.calls.length - 1,
    };
    return { ...r, ratio: r.firstP50Ms / r.warmP50Ms };
  } finally {
    await sts.close();
  }
}

/** STS's AssumeRole request quota per account and Region the model is held to (docs/capacity.md). */
export const STS_QUOTA_PER_SECOND = 600;

/**
 * AssumeRole calls per second (docs/capacity.md, "STS: AssumeRole within its quota"): one
 * per (tenant, function, container) per reuse window, the session's length less the margin
 * it is dropped before expiry; never more than one per request.
 */
export function stsCallsPerSecond(m: { tenants: number; functionsPerTenant: number; containersPerFunction: number; sessionSeconds?: number }): number {
  const reuse = (m.sessionSeconds ?? TENANT_SESSION_SECONDS) - REFRESH_MARGIN_MS / 1000;
  return (m.tenants * m.functionsPerTenant * m.containersPerFunction) / reuse;
}

/** The tenant-access roles of the templates: one per grant set, credential kind and own items of the tenant routes (infra/grants.ts). */
export const TENANT_ROLES = new Set(ROUTES.filter((r) => tenancyOf(r) === 'tenant').map((r) => `${[...r.grants].sort().join(' ')} ${tenantCredentialOf(r)}${ownItemsKey(r)}`)).size;

/**
 * With the sessions shared through the table (lib/authn/tenant-sessions.ts): one call per
 * tenant-access role and tenant per reuse window, whatever the functions and containers (a
 * tenant's functions use at most all TENANT_ROLES roles).
 */
export function sharedStsCallsPerSecond(m: { tenants: number; functionsPerTenant: number }): number {
  const reuse = TENANT_SESSION_SECONDS - REFRESH_MARGIN_MS / 1000;
  return (m.tenants * Math.min(m.functionsPerTenant, TENANT_ROLES)) / reuse;
}

export function printStsModel(): void {
  const rows = [
    [1_000, 100, 2],
    [10_000, 5, 2],
    [10_000, 10, 2],
    [10_000, 24, 2],
    [10_000, 100, 2],
  ] as const;
  let out = `\nSTS model (docs/capacity.md): AssumeRole/s = tenants x functions per tenant x containers per function / reuse window; quota ${STS_QUOTA_PER_SECOND}/s, a quarter ${STS_QUOTA_PER_SECOND / 4}/s; ${MAX_SESSIONS} sessions per container\n`;
  out += `tenants  functions  containers  900 s per container  3600 s per container  3600 s shared per role (${TENANT_ROLES} roles)\n`;
  for (const [tenants, functionsPerTenant, containersPerFunction] of rows) {
    const old = stsCallsPerSecond({ tenants, functionsPerTenant, containersPerFunction, sessionSeconds: 900 });
    const now = stsCallsPerSecond({ tenants, functionsPerTenant, containersPerFunction });
    const shared = sharedStsCallsPerSecond({ tenants, functionsPerTenant });
    out += `${String(tenants).padStart(7)}  ${String(functionsPerTenant).padStart(9)}  ${String(containersPerFunction).padStart(10)}  ${old.toFixed(0).padStart(17)}/s  ${now.toFixed(0).padStart(18)}/s  ${shared.toFixed(0).padStart(18)}/s\n`;
  }
  process.stdout.write(out);
}

export function printTenancyBench(b: TenancyBench): void {
  process.stdout.write(
    `\ntenancy (lib/tenancy): first table call of a tenant per container vs warm, ${b.tenants} tenants, STS stand-in on loopback\n` +
      `first  p50 ${b.firstP50Ms.toFixed(2)} ms  p99 ${b.firstP99Ms.toFixed(2)} ms  (AssumeRole + new client + GetItem; ${b.assumeRoles} AssumeRole calls)\n` +
      `warm   p50 ${b.warmP50Ms.toFixed(2)} ms  p99 ${b.warmP99Ms.toFixed(2)} ms  (cached session)\n` +
      `ratio first/warm (p50): ${b.ratio.toFixed(2)}   in AWS add one STS round trip to "first"\n`,
  );
  printStsModel();
}
