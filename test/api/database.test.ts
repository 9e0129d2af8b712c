import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RELAY_WAIT_MS, until } from '../helpers/timeouts.js';
import { api, canary, errorCode, newAccount, rootKey, unique, type TestAccount } from '../helpers/api.js';
import { mariadbServer, postgresServer, type Session, type TestServer } from '../helpers/databases.js';
import { useOwnConfig } from '../helpers/in-process.js';
import { findLeaks, partitionItems } from '../helpers/leaks.js';

/**
 * Database credential leases against the machine's real PostgreSQL and MariaDB: issue,
 * revoke, expiry (the sweeper, called directly in this process against the suite's
 * table), clean failure, admin password rotation, and SQL injection attempts.
 */
// the sweeper runs here in-process too, against the databases on 127.0.0.1
afterAll(useOwnConfig({ DATABASE_ALLOW_LOOPBACK: '1' }));

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
  return partitionItems(inject('dynamoEndpoint'), inject('tableName'), `T#${tenantId}`, 'LEASE#');
}

/** A CallContext for library calls made in this test's process (the suite's table, as the runtime's). */
function libCtx(a: TestAccount, requestId: string) {
  return {
    principal: {
      kind: 'api_key' as const,
      tenantId: a.tenantId,
      tenant: { id: a.tenantId } as never,
      id: 'test',
      user: null,
      scopes: ['admin:*'],
      operator: false,
    },
    requestId,
    sourceIp: null,
    userAgent: null,
  };
}

/**
 * Hooks on this process's table client (lib/store/client.ts), for library calls made here:
 * `leaseCommit` sees the transaction that commits an issued lease (its lease put, and `send`
 * to let it go); `getItem` sees each GetItem start and end by sort key.
 */
interface LeasePut {
  ConditionExpression?: string;
}
const hooks: {
  leaseCommit?: (put: LeasePut, send: () => Promise<unknown>) => Promise<unknown>;
  getItem?: (sk: string, phase: 'start' | 'end') => void;
} = {};
const text = (v: unknown): string => (typeof v === 'string' ? v : String((v as { S?: string } | undefined)?.S ?? ''));

async function hookTableClient(): Promise<void> {
  const { onDocumentClient } = await import('../../lib/store/client.js');
  onDocumentClient((client) =>
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: { sk?: unknown }; TransactItems?: Array<{ Put?: LeasePut & { Item?: { sk?: unknown } } }> };
        if (context.commandName === 'GetItemCommand' && hooks.getItem) {
          const sk = text(input.Key?.sk);
          hooks.getItem(sk, 'start');
          const out = await next(args);
          hooks.getItem?.(sk, 'end');
          return out;
        }
        const put = input.TransactItems?.find((t) => text(t.Put?.Item?.sk).startsWith('LEASE#'))?.Put;
        if (context.commandName === 'TransactWriteItemsCommand' && put && hooks.leaseCommit)
          return (await hooks.leaseCommit(put, () => next(args))) as Awaited<ReturnType<typeof next>>;
        return next(args);
      },
      { step: 'initialize', name: 'leaseTestHooks' },
    ),
  );
}

async function auditItems(tenantId: string): Promise<Record<string, unknown>[]> {
  return partitionItems(inject('dynamoEndpoint'), inject('tableName'), `T#${tenantId}`, 'AUDIT#');
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
    });
    // the stream relay lists it for the sweeper, at the LEASES listing's shard of this lease
    // (lib/events/platform-listings.ts; no tenant session may name the listing's attributes)
    const listed = async () => (await leaseItems(acct.tenantId)).find((i) => i.id === lease.lease_id);
    expect(await until(async () => /^LEASES#([0-9]|[12][0-9]|3[01])$/.test(String((await listed())?.platpk)), RELAY_WAIT_MS)).toBe(true);
    expect((await listed())!.platsk).toBe(`${lease.expires_at}#${acct.tenantId}#${lease.lease_id}`);
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
    // out of the expiry listing (the relay removes it)
    expect(await until(async () => (await leaseItems(acct.tenantId)).find((i) => i.id === lease.lease_id)?.platpk === undefined, RELAY_WAIT_MS)).toBe(
      true,
    );
  });

  it('after expiry the sweeper revokes the lease', async () => {
    const res = await issue(issueKey, roleId, { ttl_seconds: 1 });
    expect(res.status).toBe(201);
    const lease = res.body.data;
    const session = await server.login(lease.username, lease.password);
    if (inject('runtime') === 'artifact') {
      // as deployed: the scheduled sweeper function (rate(1 minute), run every 5 s by the
      // artifact runtime) revokes it, through its built bundle
      expect(
        await until(async () => (await leaseItems(acct.tenantId)).some((i) => i.id === lease.lease_id && i.status === 'revoked'), RELAY_WAIT_MS),
      ).toBe(true);
    } else {
      await sleep(1500);
      const item = async () => (await leaseItems(acct.tenantId)).find((i) => i.id === lease.lease_id);
      // listed by the stream relay before the sweep reads the listing; the runtime's own sweep
      // (every LEASE_SWEEP_INTERVAL_SECONDS) may have come first and revoked it, and the relay
      // then took it out of the listing: the end state below holds either way
      expect(
        await until(async () => {
          const now = await item();
          return now?.platpk !== undefined || now?.status === 'revoked';
        }, RELAY_WAIT_MS),
      ).toBe(true);
      if (c.engine === 'mariadb') {
        // MariaDB has no per-login expiry: past expires_at the login still works until the sweep
        const late = await server.login(lease.username, lease.password).catch(async (error: unknown) => {
          if ((await item())?.status !== 'revoked') throw error;
        });
        await late?.close();
      } else {
        const [row] = await server.su<{ v: Date }>('SELECT rolvaliduntil AS v FROM pg_roles WHERE rolname = $1', [lease.username]);
        // password authentication refuses it from here on; on a busy machine the runtime's own sweep
        // (every LEASE_SWEEP_INTERVAL_SECONDS) may have dropped the role already: the end state below holds either way
        if (row) expect(row.v.getTime()).toBeLessThan(Date.now());
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

  it('a failing creation statement leaves no login and no usable lease, and is audited', async () => {
    const failingRole = await createRole(acct, connectionId, `${server.rolePrefix}fl`, { creation_statements: c.failing(server) });
    const res = await issue(issueKey, failingRole);
    expect(res.status, res.text).toBe(503);
    expect(errorCode(res)).toBe('service_unavailable');
    expect(res.body.error).toMatch(/creation statement 2/);
    expect(await server.loginsLike(`v_${server.rolePrefix}fl`)).toEqual([]);
    const leases = (await leaseItems(acct.tenantId)).filter((i) => i.role_id === failingRole);
    const failures = (await auditItems(acct.tenantId)).filter(
      (i) => i.action === 'database.lease_issue' && i.outcome === 'failure' && (i.resource as { id: string }).id === failingRole,
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]!.detail).toMatchObject({ phase: 'create', cleaned_up: true });
    if (c.engine === 'postgresql') {
      // the statements ran in a transaction before anything was recorded: nothing is
      expect(leases).toEqual([]);
    } else {
      // DDL commits at once, so the lease was committed first: it is compensated, never usable
      expect(leases).toHaveLength(1);
      expect(leases[0]).toMatchObject({ status: 'revoked', revoked_reason: expect.stringMatching(/^issuance failed \(create, /) });
      expect(
        await until(async () => (await leaseItems(acct.tenantId)).find((i) => i.id === leases[0]!.id)?.platpk === undefined, RELAY_WAIT_MS),
      ).toBe(true);
      expect(failures[0]!.detail).toMatchObject({ lease_id: leases[0]!.id });
      const revoked = await api('DELETE', `/api/v1/database/leases/${leases[0]!.id}`, { key: revokeKey });
      expect(revoked.body.data.lease).toMatchObject({ status: 'revoked', already_revoked: true });
    }
  });

  it('concurrent issuances of one role all succeed, each with its own login', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => issue(issueKey, roleId)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const names = results.map((r) => r.body.data.username as string);
    expect(new Set(names).size).toBe(8);
    for (const n of names) expect(await server.exists(n)).toBe(true);
    for (const r of results) expect((await api('DELETE', `/api/v1/database/leases/${r.body.data.lease_id}`, { key: revokeKey })).status).toBe(200);
  });

  it('a role moved to another connection: the next lease is made on the new one', async () => {
    const other = await c.start(canary(`${c.engine}-admin-2`));
    try {
      const moved = await createRole(acct, connectionId, `${server.rolePrefix}mv`, { creation_statements: c.creation(server) });
      const first = await issue(issueKey, moved); // this container now expects the role's connection
      expect(first.status, first.text).toBe(201);
      const otherConnection = await createConnection(acct, other);
      const put = await api('PUT', `/api/v1/service-config/${moved}`, {
        key: acct.adminKey,
        headers: { 'if-match': '*' }, // the whole representation, whatever version is there
        body: {
          name: `${server.rolePrefix}mv`,
          kind: 'database-role',
          connection_id: otherConnection,
          default_ttl_seconds: 600,
          max_ttl_seconds: 3600,
          creation_statements: c.creation(other),
        },
      });
      expect(put.status, put.text).toBe(200);
      const second = await issue(issueKey, moved);
      expect(second.status, second.text).toBe(201);
      const [item] = (await leaseItems(acct.tenantId)).filter((i) => i.id === second.body.data.lease_id);
      expect(item).toMatchObject({ connection_id: otherConnection, status: 'active' });
      // made by the other server's statements: it reads the other database's table
      const session = await other.login(second.body.data.username, second.body.data.password);
      try {
        expect((await session.query('SELECT label FROM items ORDER BY id')).length).toBe(2);
      } finally {
        await session.close();
      }
      for (const l of [first, second])
        expect((await api('DELETE', `/api/v1/database/leases/${l.body.data.lease_id}`, { key: revokeKey })).status).toBe(200);
      expect(await server.exists(second.body.data.username)).toBe(false);
    } finally {
      await other.cleanup();
    }
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
    const { createResource } = await import('../../lib/resources/store.js');
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
    await hookTableClient();
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
    const who = `POST /api/v1/database/roles/{id}/credentials as the account admin's key, connection host 169.254.169.254: got ${blocked.status} ${blocked.body?.error ?? ''}`;
    expect(blocked.status, who).toBe(503);
    expect(blocked.body.error, who).toMatch(/does not connect to/);

    expect((await api('DELETE', `/api/v1/integrations/${closedPort}`, { key: acct.adminKey })).status).toBe(200);
    const gone = await issue(acct.adminKey, unreachableRole);
    expect(gone.status).toBe(503);
    expect(gone.body.error).toMatch(/is not configured/);
    expect(await server.loginsLike(`v_${server.rolePrefix}un`)).toEqual([]);
  });

  it('a private, carrier-grade NAT or unique-local host is refused by default, in any spelling; no account admin can open one', async () => {
    const hosts = ['10.0.0.5', '172.16.0.5', '192.168.0.5', '100.64.0.5', '012.0.0.5', '0xc0a80005', 'fd00::5', '::ffff:10.0.0.5'];
    for (const [i, host] of hosts.entries()) {
      const conn = await createConnection(acct, server, { host });
      const role = await createRole(acct, conn, `${server.rolePrefix}p${i}`, { creation_statements: CASES[0]!.creation(server) });
      const res = await issue(acct.adminKey, role);
      const who = `POST /api/v1/database/roles/{id}/credentials as the account admin's key, connection host ${host}: got ${res.status} ${res.body?.error ?? ''}`;
      expect(res.status, who).toBe(503);
      expect(res.body.error, who).toMatch(
        /resolves to a (private|carrier-grade NAT|private \(unique local\)) address, which the service does not connect to/,
      );
    }
    // the private networks a database may sit on are the platform operator's deployment setting: no account setting, no operator route
    const setting = await api('PUT', '/api/v1/settings', { key: acct.adminKey, body: { database_private_networks: ['10.0.0.0/8'] } });
    expect([setting.status, errorCode(setting)]).toEqual([400, 'validation_failed']);
    const quota = await api('PUT', `/api/v1/admin/tenants/${acct.tenantId}/quota`, { key: acct.adminKey, body: { requests_per_minute: 10 } });
    expect(quota.status).toBe(403);
  });

  it('a request refused at admission never reaches the database server, though its run started beside the account read', async () => {
    let reached = 0;
    const fake = createServer((socket) => {
      reached++;
      socket.destroy();
    });
    await new Promise<void>((ok) => fake.listen(0, '127.0.0.1', ok));
    try {
      const account = await newAccount('db-admission');
      const conn = await createConnection(account, server, { port: (fake.address() as AddressInfo).port });
      const role = await createRole(account, conn, `${server.rolePrefix}ad`, { creation_statements: CASES[0]!.creation(server) });
      const key = await account.key(['database:issue']);
      const admitted = await issue(key, role);
      expect(admitted.status, admitted.text).toBe(503); // reached the "server", which hung up
      expect(reached).toBe(1);
      expect((await api('PATCH', `/api/v1/admin/tenants/${account.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
      const refused = await issue(key, role);
      expect(refused.status).toBe(403);
      expect(errorCode(refused)).toBe('tenant_suspended');
      expect(reached).toBe(1); // the answer waits for the run: it ended before connecting
    } finally {
      fake.close();
    }
  });

  it('issuances of one role take turns on PostgreSQL: the next waits for the open one instead of failing on its GRANT', async () => {
    const role = await createRole(acct, connectionId, `${server.rolePrefix}tt`, { creation_statements: CASES[0]!.creation(server) });
    const { issueLease } = await import('../../lib/database/leases.js');
    let second: Promise<{ username: string }> | undefined;
    let queued = false;
    hooks.leaseCommit = async (_put, send) => {
      if (!second) {
        // the first issuance's transaction is open (its GRANT made): a second one starts now
        second = issueLease(libCtx(acct, 'turns-2'), role);
        queued = await until(async () => {
          const [row] = await server.su<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event = 'advisory'", [
            server.admin,
          ]);
          return row!.n === '1';
        });
      }
      return send();
    };
    try {
      const first = await issueLease(libCtx(acct, 'turns-1'), role);
      const next = await second!;
      expect(queued).toBe(true);
      for (const l of [first, next]) expect(await server.exists(l.username)).toBe(true);
    } finally {
      hooks.leaseCommit = undefined;
    }
  });

  it('two roles granting on one table at once: the later GRANT fails when the first commits, and its issuance runs again', async () => {
    const [one, two] = await Promise.all(
      ['g1', 'g2'].map((n) => createRole(acct, connectionId, `${server.rolePrefix}${n}`, { creation_statements: CASES[0]!.creation(server) })),
    );
    const { issueLease } = await import('../../lib/database/leases.js');
    let second: Promise<{ username: string }> | undefined;
    let blocked = false;
    hooks.leaseCommit = async (_put, send) => {
      if (!second) {
        second = issueLease(libCtx(acct, 'grant-2'), two!);
        // its GRANT waits on the row the first one's GRANT changed; it fails once that commits
        blocked = await until(async () => {
          const [row] = await server.su<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'", [
            server.admin,
          ]);
          return row!.n === '1';
        });
      }
      return send();
    };
    try {
      const first = await issueLease(libCtx(acct, 'grant-1'), one!);
      const next = await second!;
      expect(blocked).toBe(true);
      for (const l of [first, next]) expect(await server.exists(l.username)).toBe(true);
    } finally {
      hooks.leaseCommit = undefined;
    }
  });

  it('the DynamoDB commit fails after the PostgreSQL statements ran: the login is rolled back and nothing is recorded', async () => {
    const role = await createRole(acct, connectionId, `${server.rolePrefix}cf`, { creation_statements: CASES[0]!.creation(server) });
    let during: { visible: number; openTransactions: number } | undefined;
    hooks.leaseCommit = async (put, send) => {
      // the creation statements have run, in a transaction still open: nobody else sees the login yet
      const [open] = await server.su<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1 AND state = 'idle in transaction'",
        [server.admin],
      );
      during = { visible: (await server.loginsLike(`v_${server.rolePrefix}cf`)).length, openTransactions: Number(open!.n) };
      put.ConditionExpression = 'attribute_exists(pk)'; // the lease's put fails its condition, for real
      return send();
    };
    const { issueLease } = await import('../../lib/database/leases.js');
    try {
      await expect(issueLease(libCtx(acct, 'lease-commit-fails'), role)).rejects.toMatchObject({ status: 503, message: /could not be recorded/ });
    } finally {
      hooks.leaseCommit = undefined;
    }
    expect(during).toEqual({ visible: 0, openTransactions: 1 });
    expect(await server.loginsLike(`v_${server.rolePrefix}cf`)).toEqual([]);
    expect((await leaseItems(acct.tenantId)).filter((i) => i.role_id === role)).toEqual([]);
    const audited = (await auditItems(acct.tenantId)).filter(
      (i) => i.action === 'database.lease_issue' && (i.resource as { id: string }).id === role,
    );
    expect(audited.map((i) => [i.action, i.outcome, i.detail])).toEqual([
      ['database.lease_issue', 'failure', { phase: 'record', code: 'condition_failed', cleaned_up: true }],
    ]);
  });

  it('PostgreSQL fails to COMMIT after the lease was committed: the lease is compensated and the login does not exist', async () => {
    const role = await createRole(acct, connectionId, `${server.rolePrefix}cm`, { creation_statements: CASES[0]!.creation(server) });
    hooks.leaseCommit = async (_put, send) => {
      const out = await send();
      // the admin session dies between the lease commit and its COMMIT
      await server.su("SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 AND state = 'idle in transaction'", [
        server.admin,
      ]);
      return out;
    };
    const { issueLease } = await import('../../lib/database/leases.js');
    try {
      await expect(issueLease(libCtx(acct, 'pg-commit-fails'), role)).rejects.toMatchObject({ status: 503 });
    } finally {
      hooks.leaseCommit = undefined;
    }
    expect(await server.loginsLike(`v_${server.rolePrefix}cm`)).toEqual([]);
    const leases = (await leaseItems(acct.tenantId)).filter((i) => i.role_id === role);
    expect(leases).toHaveLength(1);
    expect(leases[0]).toMatchObject({ status: 'revoked', revoked_reason: expect.stringMatching(/^issuance failed \(create, /) });
    expect(await until(async () => (await leaseItems(acct.tenantId)).find((i) => i.id === leases[0]!.id)?.platpk === undefined, RELAY_WAIT_MS)).toBe(
      true,
    );
    const audit = await auditItems(acct.tenantId);
    expect(audit.filter((i) => (i.resource as { id: string }).id === leases[0]!.id).map((i) => [i.action, i.outcome])).toEqual([
      ['database.lease_issue', 'success'],
    ]);
    const failure = audit.filter((i) => i.action === 'database.lease_issue' && (i.resource as { id: string }).id === role);
    expect(failure.map((i) => [i.action, i.outcome, (i.detail as { lease_id: string }).lease_id])).toEqual([
      ['database.lease_issue', 'failure', leases[0]!.id],
    ]);
  });

  it('the connection is read beside its role once this container knows which one the role names; a stale hint costs one read', async () => {
    const role = await createRole(acct, connectionId, `${server.rolePrefix}hn`, { creation_statements: CASES[0]!.creation(server) });
    const { loadRoleAndConnection } = await import('../../lib/database/records.js');
    const log: string[] = [];
    hooks.getItem = (sk, phase) => {
      if (sk.startsWith('R#service_config#')) log.push(`${phase} role`);
      if (sk.startsWith('R#integration#')) log.push(`${phase} ${sk.slice('R#integration#'.length)}`);
    };
    const load = async () => {
      log.length = 0;
      const { connection } = await loadRoleAndConnection(acct.tenantId, role);
      const conn = await connection();
      return { used: conn.settings.id, log: [...log] };
    };
    try {
      const cold = await load();
      expect(cold).toEqual({ used: connectionId, log: ['start role', 'end role', `start ${connectionId}`, `end ${connectionId}`] });
      const warm = await load();
      expect(warm.used).toBe(connectionId);
      expect(warm.log.slice(0, 2).sort()).toEqual([`start ${connectionId}`, 'start role']); // one round trip
      const second = await createConnection(acct, server);
      const put = await api('PUT', `/api/v1/service-config/${role}`, {
        key: acct.adminKey,
        headers: { 'if-match': '*' }, // the whole representation, whatever version is there
        body: {
          name: `${server.rolePrefix}hn`,
          kind: 'database-role',
          connection_id: second,
          default_ttl_seconds: 600,
          max_ttl_seconds: 3600,
          creation_statements: CASES[0]!.creation(server),
        },
      });
      expect(put.status, put.text).toBe(200);
      const stale = await load();
      expect(stale.used).toBe(second);
      expect(stale.log.slice(0, 2).sort()).toEqual([`start ${connectionId}`, 'start role']);
      expect(stale.log.slice(stale.log.indexOf('end role') + 1)).toContain(`start ${second}`); // the one extra read, after the role
      expect((await load()).log.slice(0, 2).sort()).toEqual([`start ${second}`, 'start role']);
    } finally {
      hooks.getItem = undefined;
    }
  });

  it('the sweeper still cleans up pending and failed leases an earlier issuance left behind', async () => {
    const { db, tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { PutCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const past = new Date(Date.now() - 60_000).toISOString();
    const left: Array<{ id: string; username: string }> = [];
    for (const status of ['pending', 'failed']) {
      const id = crypto.randomUUID();
      const username = `v_${server.rolePrefix}ab_${status}`;
      await server.su(`CREATE ROLE ${username} LOGIN`);
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: {
            ...keys.lease(acct.tenantId, id),
            ...keys.leaseExpiryIndex(acct.tenantId, id, past),
            id,
            tenant_id: acct.tenantId,
            role_id: roleId,
            role_name: `${server.rolePrefix}er`,
            connection_id: connectionId,
            engine: 'postgresql',
            username,
            status,
            revocation_statements: [],
            created_at: past,
            expires_at: past,
            ttl_seconds: 60,
            issued_by: 'an earlier release',
          },
        }),
      );
      left.push({ id, username });
    }
    if (inject('runtime') !== 'artifact') {
      const { sweepExpiredLeases } = await import('../../lib/database/sweeper.js');
      expect((await sweepExpiredLeases({ tenantIds: [acct.tenantId] })).failed).toEqual([]);
    }
    const gone = async () => {
      for (const l of left) {
        if (await server.exists(l.username)) return false;
        if ((await db().send(new GetCommand({ TableName: tableName(), Key: keys.lease(acct.tenantId, l.id) }))).Item) return false;
      }
      return true;
    };
    expect(await until(gone, 15_000)).toBe(true);
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
