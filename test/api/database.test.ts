import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { mariadbServer, postgresServer, type Session, type TestServer } from '../helpers/databases.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { findLeaks, scanTable } from '../helpers/leaks.js';

/**
 * Database credential leases against the machine's real PostgreSQL and MariaDB: issue,
 * revoke, expiry (the sweeper, called directly in this process against the suite's
 * table), clean failure, admin password rotation, and SQL injection attempts.
 */
useRuntimeConfig();
process.env.DATABASE_ALLOW_LOOPBACK = '1';

const issuedPasswords: string[] = [];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface EngineCase {
  readonly engine: 'postgresql' | 'mariadb';
  start(adminPassword: string): Promise<TestServer>;
  /** Creation statements granting SELECT on items (Vault-style quoting on one engine, bare on the other). */
  creation(s: TestServer): string[];
  revocation(s: TestServer): string[] | undefined;
  /** A creation set whose last statement fails after the login was created. */
  failing(s: TestServer): string[];
}

const CASES: EngineCase[] = [
  {
    engine: 'postgresql',
    start: postgresServer,
    creation: () => [`CREATE ROLE "{{name}}" WITH LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`, 'GRANT SELECT ON items TO {{name}}'],
    revocation: () => ['REVOKE ALL ON items FROM {{name}}', 'DROP ROLE {{name}}'],
    failing: () => ['CREATE ROLE {{name}} WITH LOGIN PASSWORD {{password}} VALID UNTIL {{expiration}}', 'GRANT SELECT ON no_such_table TO {{name}}'],
  },
  {
    engine: 'mariadb',
    start: mariadbServer,
    creation: (s) => [`CREATE USER '{{name}}'@'%' IDENTIFIED BY '{{password}}'`, `GRANT SELECT ON \`${s.database}\`.items TO '{{name}}'@'%'`],
    revocation: () => undefined, // the default: DROP USER on every host of the login
    failing: (s) => [`CREATE USER {{name}}@'%' IDENTIFIED BY {{password}}`, `GRANT SELECT ON \`${s.database}\`.no_such_table TO {{name}}@'%'`],
  },
];

async function createConnection(acct: TestAccount, s: TestServer, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await api('POST', '/api/v1/integrations', {
    key: acct.adminKey,
    body: {
      name: unique('db'),
      provider: s.engine,
      host: s.host,
      port: s.port,
      database: s.database,
      username: s.admin,
      password: s.adminPassword,
      tls_mode: 'disable',
      ...overrides,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.integration.id as string;
}

async function createRole(acct: TestAccount, connectionId: string, name: string, fields: Record<string, unknown>): Promise<string> {
  const res = await api('POST', '/api/v1/service-config', {
    key: acct.adminKey,
    body: { name, kind: 'database-role', connection_id: connectionId, default_ttl_seconds: 600, max_ttl_seconds: 3600, ...fields },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.service_config.id as string;
}

async function issue(key: string, roleId: string, body: unknown = { ttl_seconds: 600 }) {
  const res = await api('POST', `/api/v1/database/roles/${roleId}/credentials`, { key, body });
  if (res.status === 201) issuedPasswords.push(res.body.data.password);
  return res;
}

async function leaseItems(tenantId: string): Promise<Record<string, unknown>[]> {
  const items = await scanTable(inject('dynamoEndpoint'), inject('tableName'));
  return items.filter((i) => i.pk === `T#${tenantId}` && String(i.sk).startsWith('LEASE#'));
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

describe.each(CASES)('database leases on $engine', (c) => {
  let server: TestServer;
  let acct: TestAccount;
  let connectionId: string;
  let roleId: string;
  let issueKey: string;
  let revokeKey: string;

  beforeAll(async () => {
    server = await c.start(canary(`${c.engine}-admin`));
    acct = await newAccount(`db-${c.engine}`);
    connectionId = await createConnection(acct, server);
    roleId = await createRole(acct, connectionId, `${server.rolePrefix}ok`, {
      creation_statements: c.creation(server),
      ...(c.revocation(server) ? { revocation_statements: c.revocation(server) } : {}),
    });
    issueKey = await acct.key(['database:issue']);
    revokeKey = await acct.key(['database:revoke']);
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('issues a unique login that can run what the statements grant and nothing more; the password is not stored', async () => {
    const before = Date.now();
    const res = await issue(issueKey, roleId);
    expect(res.status, res.text).toBe(201);
    const lease = res.body.data;
    expect(Object.keys(lease).sort()).toEqual(['expires_at', 'lease_id', 'password', 'ttl_seconds', 'username']);
    expect(lease.lease_id).toMatch(UUID);
    expect(lease.username).toMatch(new RegExp(`^v_${server.rolePrefix}ok_[a-z2-7]{16}$`));
    expect(lease.password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(lease.ttl_seconds).toBe(600);
    const expires = Date.parse(lease.expires_at);
    expect(expires - before).toBeGreaterThanOrEqual(600_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(600_000);

    const second = await issue(issueKey, roleId);
    expect(second.status).toBe(201);
    expect(second.body.data.username).not.toBe(lease.username);
    expect(second.body.data.password).not.toBe(lease.password);

    const session = await server.login(lease.username, lease.password);
    try {
      expect((await session.query('SELECT label FROM items ORDER BY id')).map((r) => (r as { label: string }).label)).toEqual(['one', 'two']);
      await expect(session.query("INSERT INTO items VALUES (3, 'three')")).rejects.toThrow();
      await expect(session.query('SELECT * FROM sentinel')).rejects.toThrow();
    } finally {
      await session.close();
    }
    expect(await server.passwordIs(lease.username, lease.password)).toBe(true);
    expect(await server.passwordIs(lease.username, second.body.data.password)).toBe(false);
    if (c.engine === 'postgresql') {
      // the login carries the lease's expiry on the server (VALID UNTIL)
      const [row] = await server.su<{ v: Date }>('SELECT rolvaliduntil AS v FROM pg_roles WHERE rolname = $1', [lease.username]);
      expect(row!.v.toISOString()).toBe(new Date(expires).toISOString());
    }

    const [item] = (await leaseItems(acct.tenantId)).filter((i) => i.id === lease.lease_id);
    expect(item).toMatchObject({
      status: 'active',
      username: lease.username,
      role_id: roleId,
      connection_id: connectionId,
      expires_at: lease.expires_at,
      // the LEASES listing's shard of this lease (lib/store/keys.ts shardOf)
      gsi1pk: expect.stringMatching(/^LEASES#([0-9]|[12][0-9]|3[01])$/),
    });
    expect(typeof item!.ttl).toBe('number');
    expect(JSON.stringify(item)).not.toContain(lease.password);
    expect(Object.keys(item!)).not.toContain('password');
  });

  it('revocation ends the sessions and the login; a second call answers 200 with already_revoked', async () => {
    const res = await issue(issueKey, roleId);
    expect(res.status).toBe(201);
    const lease = res.body.data;
    const session: Session = await server.login(lease.username, lease.password);
    expect((await session.query('SELECT 1 AS one')).length).toBe(1);
    expect(await server.sessions(lease.username)).toBeGreaterThan(0);

    const revoked = await api('DELETE', `/api/v1/database/leases/${lease.lease_id}`, { key: revokeKey });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.data.lease).toMatchObject({ lease_id: lease.lease_id, username: lease.username, status: 'revoked', already_revoked: false });

    expect(await until(async () => (await server.sessions(lease.username)) === 0)).toBe(true);
    await expect(session.query('SELECT 1 AS one')).rejects.toThrow();
    await session.close();
    await expect(server.login(lease.username, lease.password)).rejects.toThrow();
    expect(await server.exists(lease.username)).toBe(false);

    const again = await api('DELETE', `/api/v1/database/leases/${lease.lease_id}`, { key: revokeKey });
    expect(again.status).toBe(200);
    expect(again.body.data.lease).toMatchObject({
      lease_id: lease.lease_id,
      status: 'revoked',
      already_revoked: true,
      revoked_at: revoked.body.data.lease.revoked_at,
    });

    const [item] = (await leaseItems(acct.tenantId)).filter((i) => i.id === lease.lease_id);
    expect(item).toMatchObject({ status: 'revoked' });
    expect(item!.gsi1pk).toBeUndefined(); // out of the expiry index
  });

  it('after expiry the sweeper revokes the lease', async () => {
    const res = await issue(issueKey, roleId, { ttl_seconds: 1 });
    expect(res.status).toBe(201);
    const lease = res.body.data;
    const session = await server.login(lease.username, lease.password);
    if (inject('runtime') === 'artifact') {
      // as deployed: the scheduled sweeper function (rate(1 minute), run every 500 ms by the
      // artifact runtime) revokes it, through its built bundle
      expect(await until(async () => (await leaseItems(acct.tenantId)).some((i) => i.id === lease.lease_id && i.status === 'revoked'), 15_000)).toBe(
        true,
      );
    } else {
      await sleep(1500);
      if (c.engine === 'mariadb') {
        // MariaDB has no per-login expiry: past expires_at the login still works until the sweep
        const late = await server.login(lease.username, lease.password);
        await late.close();
      } else {
        const [row] = await server.su<{ v: Date }>('SELECT rolvaliduntil AS v FROM pg_roles WHERE rolname = $1', [lease.username]);
        expect(row!.v.getTime()).toBeLessThan(Date.now()); // password authentication refuses it from here on
      }
      const { sweepExpiredLeases } = await import('../../lib/database/sweeper.js');
      const report = await sweepExpiredLeases({ tenantIds: [acct.tenantId] });
      expect(report.failed).toEqual([]);
    }

    expect(await server.exists(lease.username)).toBe(false);
    await expect(server.login(lease.username, lease.password)).rejects.toThrow();
    expect(await until(async () => (await server.sessions(lease.username)) === 0)).toBe(true);
    await expect(session.query('SELECT 1 AS one')).rejects.toThrow();
    await session.close();
    const [item] = (await leaseItems(acct.tenantId)).filter((i) => i.id === lease.lease_id);
    expect(item).toMatchObject({ status: 'revoked', revoked_by: 'sweeper' });
    const again = await api('DELETE', `/api/v1/database/leases/${lease.lease_id}`, { key: revokeKey });
    expect(again.body.data.lease.already_revoked).toBe(true);
  });

  it('a failing creation statement leaves no lease and no login', async () => {
    const failingRole = await createRole(acct, connectionId, `${server.rolePrefix}fl`, { creation_statements: c.failing(server) });
    const before = (await leaseItems(acct.tenantId)).length;
    const res = await issue(issueKey, failingRole);
    expect(res.status, res.text).toBe(503);
    expect(errorCode(res)).toBe('service_unavailable');
    expect(res.body.error).toMatch(/creation statement 2/);
    expect(await server.loginsLike(`v_${server.rolePrefix}fl`)).toEqual([]);
    const after = await leaseItems(acct.tenantId);
    expect(after.length).toBe(before);
    expect(after.filter((i) => i.role_id === failingRole)).toEqual([]);
  });

  it('rotation changes the admin password on the server and in the integration; leases keep working', async () => {
    const res = await issue(issueKey, roleId);
    expect(res.status).toBe(201);
    const lease = res.body.data;
    const session = await server.login(lease.username, lease.password);
    expect(await server.passwordIs(server.admin, server.adminPassword)).toBe(true);

    const rotateKey = await acct.key(['database:rotate']);
    const rotated = await api('POST', `/api/v1/database/roles/${roleId}/rotate`, { key: rotateKey, body: {} });
    expect(rotated.status, rotated.text).toBe(200);
    const r = rotated.body.data.rotation;
    expect(r).toMatchObject({ role_id: roleId, connection_id: connectionId, leases_revoked: false });
    expect(r.outstanding_leases).toBeGreaterThanOrEqual(1);
    expect(r.note).toMatch(/does not revoke leases/);

    const conn = await api('GET', `/api/v1/integrations/${connectionId}`, { key: acct.adminKey });
    const newPassword = conn.body.data.integration.password as string;
    expect(newPassword).not.toBe(server.adminPassword);
    expect(conn.body.data.integration.version).toBe(r.connection_version);
    expect(await server.passwordIs(server.admin, server.adminPassword)).toBe(false);
    expect(await server.passwordIs(server.admin, newPassword)).toBe(true);
    if (c.engine === 'mariadb') {
      await expect(server.login(server.admin, server.adminPassword)).rejects.toThrow();
      await (await server.login(server.admin, newPassword)).close();
    }

    // the outstanding lease is untouched: its session and fresh logins work
    expect((await session.query('SELECT label FROM items ORDER BY id')).length).toBe(2);
    await session.close();
    await (await server.login(lease.username, lease.password)).close();
    // and the service goes on with the new admin password
    const next = await issue(issueKey, roleId);
    expect(next.status, next.text).toBe(201);
    expect((await api('DELETE', `/api/v1/database/leases/${lease.lease_id}`, { key: revokeKey })).status).toBe(200);
    expect((await api('DELETE', `/api/v1/database/leases/${next.body.data.lease_id}`, { key: revokeKey })).status).toBe(200);
  });

  it('SQL injection through role names, templates and parameters does nothing but fail', async () => {
    const sentinel = async () => (await server.su<{ id: number }>('SELECT id FROM sentinel')).map((x) => Number(x.id));
    const loginsBefore = await server.loginsLike('v_');

    // a role name full of SQL: only its letters and digits reach the login name, which is quoted anyway
    const evilName = `${server.rolePrefix}x'"\`; DROP TABLE sentinel; -- ${c.engine === 'postgresql' ? '$$' : '#'}`;
    const evilRole = await createRole(acct, connectionId, evilName, { creation_statements: c.creation(server) });
    const res = await issue(issueKey, evilRole);
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.username).toMatch(new RegExp(`^v_${server.rolePrefix}xd_[a-z2-7]{16}$`));
    expect((await api('DELETE', `/api/v1/database/leases/${res.body.data.lease_id}`, { key: revokeKey })).status).toBe(200);

    // templates that would put a value outside the driver's quoting are refused when stored
    const refused = [
      { username_template: 'v_{{random}}"; DROP TABLE sentinel; --', creation_statements: c.creation(server) },
      { creation_statements: ["CREATE ROLE {{name}} LOGIN PASSWORD 'p{{password}}'"] },
      { creation_statements: ['CREATE USER {{name}} /* {{password}} */'] },
      { creation_statements: ['CREATE USER {{name}}', 'SELECT {{nonsense}}'] },
      { creation_statements: ['CREATE ROLE {{name}}'], revocation_statements: ['DROP ROLE {{name}} -- {{password}}'] },
    ];
    for (const fields of refused) {
      const bad = await api('POST', '/api/v1/service-config', {
        key: acct.adminKey,
        body: { name: `${server.rolePrefix}bd`, kind: 'database-role', connection_id: connectionId, ...fields },
      });
      expect(bad.status, JSON.stringify(fields)).toBe(400);
      expect(errorCode(bad)).toBe('validation_failed');
    }

    // stored anyway (bypassing the API's validation): the service still refuses to run it
    const { createResource } = await import('../../lib/store/resources.js');
    const ctx = {
      principal: {
        kind: 'api_key' as const,
        tenantId: acct.tenantId,
        tenant: { id: acct.tenantId } as never,
        id: 'test',
        user: null,
        scopes: ['admin:*'],
        operator: false,
      },
      requestId: 'test-injection',
      sourceIp: null,
      userAgent: null,
    };
    const sneaky = await createResource(
      ctx,
      {
        type: 'service_config',
        name: `${server.rolePrefix}sn`,
        meta: {
          description: '',
          tags: [],
          secret_fields: [],
          kind: 'database-role',
          connection_id: connectionId,
          creation_statements: [...c.creation(server), "SELECT '{{password}}x'"],
          username_template: 'v_{{random}}"; DROP TABLE sentinel; --',
          default_ttl_seconds: 600,
          max_ttl_seconds: 3600,
        },
      },
      (rec) => ({ action: 'test.create', resource: { type: rec.type, id: rec.id } }),
    );
    const blocked = await issue(issueKey, sneaky.id);
    expect(blocked.status).toBe(503);
    expect(blocked.body.error).toMatch(/misconfigured/);

    // parameters: only validated values reach the service
    for (const body of [{ ttl_seconds: '60; DROP TABLE sentinel' }, { ttl_seconds: 60, username: "x'; DROP TABLE sentinel; --" }]) {
      const r = await issue(issueKey, roleId, body);
      expect(r.status).toBe(400);
    }
    const pathInjection = await api('POST', `/api/v1/database/roles/${encodeURIComponent("1' OR '1'='1")}/credentials`, { key: issueKey, body: {} });
    expect(pathInjection.status).toBe(400);

    expect(await sentinel()).toEqual([42]);
    expect(
      (await server.loginsLike('v_')).filter(
        (l) => !loginsBefore.includes(l) && l.startsWith(`v_${server.rolePrefix}`) && !l.startsWith(`v_${server.rolePrefix}ok`),
      ),
    ).toEqual([]);
  });
});

describe('database lease errors', () => {
  let server: TestServer;
  let acct: TestAccount;
  let other: TestAccount;
  let connectionId: string;
  let roleId: string;

  beforeAll(async () => {
    server = await postgresServer(canary('pg-admin-errors'));
    [acct, other] = await Promise.all([newAccount('db-errors'), newAccount('db-other')]);
    connectionId = await createConnection(acct, server);
    roleId = await createRole(acct, connectionId, `${server.rolePrefix}er`, {
      creation_statements: CASES[0]!.creation(server),
      max_ttl_seconds: 900,
    });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('unknown, foreign and non-role ids are 404 with one body', async () => {
    const missing = await issue(acct.adminKey, '0190a1b2-0000-7000-8000-000000000001');
    expect(missing.status).toBe(404);
    const foreign = await issue(other.adminKey, roleId);
    expect(foreign.status).toBe(404);
    expect({ error: foreign.body.error, code: foreign.body.code }).toEqual({ error: missing.body.error, code: missing.body.code });
    const generic = await api('POST', '/api/v1/service-config', { key: acct.adminKey, body: { name: 'plain', kind: 'generic', service: 'mail' } });
    expect(generic.status, generic.text).toBe(201);
    expect((await issue(acct.adminKey, generic.body.data.service_config.id)).status).toBe(404);
    expect((await api('POST', `/api/v1/database/roles/${roleId}/rotate`, { key: other.adminKey, body: {} })).status).toBe(404);

    const lease = await issue(acct.adminKey, roleId);
    expect(lease.status).toBe(201);
    const foreignRevoke = await api('DELETE', `/api/v1/database/leases/${lease.body.data.lease_id}`, { key: other.adminKey });
    expect(foreignRevoke.status).toBe(404);
    const missingRevoke = await api('DELETE', '/api/v1/database/leases/0190a1b2-0000-7000-8000-000000000002', { key: other.adminKey });
    expect({ error: foreignRevoke.body.error, code: foreignRevoke.body.code }).toEqual({
      error: missingRevoke.body.error,
      code: missingRevoke.body.code,
    });
    // still active for its owner
    expect((await api('DELETE', `/api/v1/database/leases/${lease.body.data.lease_id}`, { key: acct.adminKey })).body.data.lease.already_revoked).toBe(
      false,
    );
  });

  it('400 for wrong types, unknown fields and a TTL above the role maximum', async () => {
    for (const body of [{ ttl_seconds: 'x' }, { ttl_seconds: 1.5 }, { ttl_seconds: 0 }, { extra: true }, []]) {
      const res = await issue(acct.adminKey, roleId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const tooLong = await issue(acct.adminKey, roleId, { ttl_seconds: 901 });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.details).toEqual([{ path: 'body.ttl_seconds', message: 'at most 900' }]);
    expect((await api('POST', `/api/v1/database/roles/${roleId}/rotate`, { key: acct.adminKey, body: { password: 'x' } })).status).toBe(400);
    expect((await api('DELETE', '/api/v1/database/leases/not-a-uuid', { key: acct.adminKey })).status).toBe(400);
  });

  it('503 with a clear error when the server is unreachable or the connection is gone; nothing is left behind', async () => {
    const closedPort = await createConnection(acct, server, { port: 1 });
    const unreachableRole = await createRole(acct, closedPort, `${server.rolePrefix}un`, { creation_statements: CASES[0]!.creation(server) });
    const res = await issue(acct.adminKey, unreachableRole);
    expect(res.status).toBe(503);
    expect(errorCode(res)).toBe('service_unavailable');
    expect(res.body.error).toMatch(/unreachable or refused the connection/);
    expect((await leaseItems(acct.tenantId)).filter((i) => i.role_id === unreachableRole)).toEqual([]);

    const wrongPassword = await createConnection(acct, server, { provider: 'postgresql', username: 'no_such_admin_login' });
    const refusedRole = await createRole(acct, wrongPassword, `${server.rolePrefix}rf`, { creation_statements: CASES[0]!.creation(server) });
    const refused = await issue(acct.adminKey, refusedRole);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/refused the stored admin credentials/);

    // the instance metadata address is never a database server
    const metadata = await createConnection(acct, server, { host: '169.254.169.254' });
    const metadataRole = await createRole(acct, metadata, `${server.rolePrefix}md`, { creation_statements: CASES[0]!.creation(server) });
    const blocked = await issue(acct.adminKey, metadataRole);
    expect(blocked.status).toBe(503);
    expect(blocked.body.error).toMatch(/does not connect to/);

    expect((await api('DELETE', `/api/v1/integrations/${closedPort}`, { key: acct.adminKey })).status).toBe(200);
    const gone = await issue(acct.adminKey, unreachableRole);
    expect(gone.status).toBe(503);
    expect(gone.body.error).toMatch(/is not configured/);
    expect(await server.loginsLike(`v_${server.rolePrefix}un`)).toEqual([]);
  });

  it('PostgreSQL logins get VALID UNTIL even when the statements omit it; statements that create no login fail', async () => {
    const plain = await createRole(acct, connectionId, `${server.rolePrefix}pl`, {
      creation_statements: ['CREATE ROLE {{name}} LOGIN PASSWORD {{password}}'],
    });
    const res = await issue(acct.adminKey, plain);
    expect(res.status, res.text).toBe(201);
    const [row] = await server.su<{ v: Date }>('SELECT rolvaliduntil AS v FROM pg_roles WHERE rolname = $1', [res.body.data.username]);
    expect(row!.v.toISOString()).toBe(res.body.data.expires_at);
    expect((await api('DELETE', `/api/v1/database/leases/${res.body.data.lease_id}`, { key: acct.adminKey })).status).toBe(200);

    const noLogin = await createRole(acct, connectionId, `${server.rolePrefix}nl`, { creation_statements: ['SELECT 1 AS {{name}}'] });
    const refused = await issue(acct.adminKey, noLogin);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/did not create the login/);
    expect((await leaseItems(acct.tenantId)).filter((i) => i.role_id === noLogin)).toEqual([]);
  });

  it('concurrent rotations of one connection: one at a time, and the stored password is the server password', async () => {
    const results = await Promise.all([1, 2, 3].map(() => api('POST', `/api/v1/database/roles/${roleId}/rotate`, { key: acct.adminKey, body: {} })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status, r.text).toBe(409);
      expect(errorCode(r)).toBe('rotation_in_progress');
    }
    const conn = await api('GET', `/api/v1/integrations/${connectionId}`, { key: acct.adminKey });
    expect(await server.passwordIs(server.admin, conn.body.data.integration.password)).toBe(true);
    expect(await server.passwordIs(server.admin, server.adminPassword)).toBe(false);
    expect((await issue(acct.adminKey, roleId)).status).toBe(201);
  });

  it('no issued password reaches the table or the server log', async () => {
    expect(issuedPasswords.length).toBeGreaterThan(5);
    await sleep(200);
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: issuedPasswords,
    });
    expect(leaks).toEqual([]);
  });
});
