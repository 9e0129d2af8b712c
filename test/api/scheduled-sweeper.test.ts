import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RELAY_WAIT_MS, until } from '../helpers/timeouts.js';
import { api, canary, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { postgresServer, type TestServer } from '../helpers/databases.js';
import { useOwnConfig } from '../helpers/in-process.js';
import { partitionItems } from '../helpers/leaks.js';

/**
 * functions/database/sweeper.sweep invoked as Lambda invokes it on its EventBridge
 * schedule: the export called with the scheduled event and a context whose
 * getRemainingTimeInMillis the test controls, in this process against the suite's table
 * and the machine's PostgreSQL. A lease is issued through the API with a 1 s lifetime.
 *
 * The sweep is global, as in AWS (every account's expired leases); the local runtime's own
 * sweeper timer may also pass, so the assertions are on this lease's state and the login.
 */
// the sweeper runs here in-process too, against the databases on 127.0.0.1
afterAll(useOwnConfig({ DATABASE_ALLOW_LOOPBACK: '1' }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SCHEDULED = { version: '0', id: 'e1', 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString(), detail: {} };

let server: TestServer;
let acct: TestAccount;
let roleId: string;
let sweep: typeof import('../../functions/database/sweeper.js').sweep;

beforeAll(async () => {
  ({ sweep } = await import('../../functions/database/sweeper.js'));
  server = await postgresServer(canary('sweeper-admin'));
  acct = await newAccount('sweeper');
  const conn = await api('POST', '/api/v1/integrations', {
    key: acct.adminKey,
    body: { name: unique('db'), provider: 'postgresql', host: server.host, port: server.port, database: server.database, username: server.admin, password: server.adminPassword, tls_mode: 'disable' },
  });
  expect(conn.status, conn.text).toBe(201);
  const role = await api('POST', '/api/v1/service-config', {
    key: acct.adminKey,
    body: {
      name: `${server.rolePrefix}sw`,
      kind: 'database-role',
      connection_id: conn.body.data.integration.id,
      default_ttl_seconds: 600,
      max_ttl_seconds: 3600,
      creation_statements: [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`],
    },
  });
  expect(role.status, role.text).toBe(201);
  roleId = role.body.data.service_config.id;
});

afterAll(async () => {
  await server?.cleanup();
});


async function leaseItem(leaseId: string) {
  const items = await partitionItems(inject('dynamoEndpoint'), inject('tableName'), `T#${acct.tenantId}`, `LEASE#${leaseId}`);
  return items.find((i) => i.sk === `LEASE#${leaseId}`);
}

/**
 * Whether the stream relay listed the lease for the sweeper. The sweep is global: another
 * file's sweep (database.test.ts) or the runtime's own timer may find the listed lease first,
 * revoke it and unlist it between two looks, and a lease the sweeper revoked was listed (the
 * sweeper finds leases only through the listing).
 */
async function listed(leaseId: string): Promise<boolean> {
  const item = await leaseItem(leaseId);
  return item?.platpk !== undefined || item?.revoked_by === 'sweeper';
}

/** What a failed wait for the listing says: the lease's status and listing keys, never its login (the relay's log lines are in build/test-logs). */
async function listingOf(leaseId: string): Promise<string> {
  const item = await leaseItem(leaseId);
  const { status, revoked_by, expires_at, platpk, platsk, updated_at } = item ?? {};
  return `the stream relay did not list lease ${leaseId}: ${item ? JSON.stringify({ status, revoked_by, expires_at, platpk, platsk, updated_at }) : 'no such item'}`;
}

describe('the lease sweeper function (scheduled)', () => {
  it('starts no revocation within 10 s of its deadline; with time left it revokes the expired lease and drops the login', async () => {
    const issued = await api('POST', `/api/v1/database/roles/${roleId}/credentials`, { key: await acct.key(['database:issue']), body: { ttl_seconds: 1 } });
    expect(issued.status, issued.text).toBe(201);
    const lease = issued.body.data;
    expect(await server.exists(lease.username)).toBe(true);
    await sleep(1_500);
    // the stream relay lists it for the sweeper (lib/events/platform-listings.ts)
    expect(await until(() => listed(lease.lease_id), RELAY_WAIT_MS), await listingOf(lease.lease_id)).toBe(true);

    // 10 s left: the deadline is now, nothing is started
    const late = await sweep(SCHEDULED, { getRemainingTimeInMillis: () => 10_000 });
    expect(late).toMatchObject({ revoked: 0, cleaned: 0, failed: [] });

    const report = await sweep(SCHEDULED, { getRemainingTimeInMillis: () => 60_000 });
    expect(report.examined).toBeGreaterThanOrEqual(report.revoked);
    expect(report.failed.filter((f) => f.tenant_id === acct.tenantId)).toEqual([]);
    expect(await leaseItem(lease.lease_id)).toMatchObject({ status: 'revoked', revoked_by: 'sweeper' });
    expect(await server.exists(lease.username)).toBe(false);
    // swept leases leave the expiry index: the next run does not examine them again
    expect(await until(async () => (await leaseItem(lease.lease_id))!.platpk === undefined, RELAY_WAIT_MS)).toBe(true);
  });

  it('without a context (a manual invocation) it sweeps without a deadline', async () => {
    const issued = await api('POST', `/api/v1/database/roles/${roleId}/credentials`, { key: await acct.key(['database:issue']), body: { ttl_seconds: 1 } });
    expect(issued.status, issued.text).toBe(201);
    await sleep(1_500);
    expect(await until(() => listed(issued.body.data.lease_id), RELAY_WAIT_MS), await listingOf(issued.body.data.lease_id)).toBe(true);
    const report = await sweep();
    expect(report.failed.filter((f) => f.tenant_id === acct.tenantId)).toEqual([]);
    expect(await leaseItem(issued.body.data.lease_id)).toMatchObject({ status: 'revoked', revoked_by: 'sweeper' });
    expect(await server.exists(issued.body.data.username)).toBe(false);
  });
});
