import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { api, canary, errorCode, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { mariadbServer, postgresServer, type TestServer } from '../helpers/databases.js';
import { findLeaks } from '../helpers/leaks.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * Database extraction jobs (lib/tools/extraction.ts) on the machine's real PostgreSQL and
 * MariaDB: a seeded table whose rows become secrets exactly once (also when the job runs
 * twice), a failing row reported with its error, progress and counts in the job. The jobs
 * run through the jobs queue (in-process in the source runtime, SQS on fauxqs with the
 * template's event-source mapping in the artifact runtime).
 */
const values: string[] = [];
const MISSING = '00000000-0000-7000-8000-000000000000';
let other: TestAccount;

async function waitForJob(key: string, id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 300; i++) {
    const res = await api('GET', `/api/v1/extraction/jobs/${id}`, { key });
    expect(res.status, res.text).toBe(200);
    const job = res.body.data.job;
    if (job.status === 'succeeded' || job.status === 'failed') return job;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`job ${id} did not finish`);
}

beforeAll(async () => {
  other = await newAccount('extract-other');
});

for (const engine of ['postgresql', 'mariadb'] as const) {
  describe(`POST /api/v1/extraction/db on ${engine}`, () => {
    let server: TestServer;
    let acct: TestAccount;
    let key: string;
    let connId = '';
    const prefix = `${unique('x')}.`;
    let rows: { name: string; value: string; login: string }[] = [];

    beforeAll(async () => {
      server = await (engine === 'postgresql' ? postgresServer : mariadbServer)(canary(`${engine}-admin`));
      rows = Array.from({ length: 30 }, (_, i) => ({ name: `svc-${String(i).padStart(2, '0')}`, value: canary(`${engine}-row`), login: `user${i}` }));
      values.push(...rows.map((r) => r.value));
      await server.su('CREATE TABLE app_creds (svc varchar(100), pw varchar(200), login varchar(100), endpoint varchar(200))');
      if (engine === 'postgresql') await server.su(`GRANT SELECT ON app_creds TO ${server.admin}`);
      for (const r of rows) await server.su(`INSERT INTO app_creds VALUES ('${r.name}', '${r.value}', '${r.login}', 'https://db.example.test')`);
      // a failing row: a name that cannot be a secret name
      await server.su(`INSERT INTO app_creds VALUES ('bad name!', 'x', 'u', NULL)`);
      // a failing row: no value
      await server.su(`INSERT INTO app_creds VALUES ('svc-empty', NULL, 'u', NULL)`);
      acct = await newAccount(`extract-${engine}`);
      key = await acct.key(['extract:run']);
      const res = await api('POST', '/api/v1/integrations', {
        key: acct.adminKey,
        body: {
          name: unique('db'),
          provider: engine,
          host: server.host,
          port: server.port,
          database: server.database,
          username: server.admin,
          password: server.adminPassword,
          tls_mode: 'disable',
        },
      });
      expect(res.status, res.text).toBe(201);
      connId = res.body.data.integration.id;
    }, scaled(60_000));

    afterAll(async () => {
      await server?.su('DROP TABLE IF EXISTS app_creds').catch(() => undefined);
      await server?.cleanup();
    });

    const body = () => ({
      connection_id: connId,
      source: { table: 'app_creds', name_column: 'svc', value_column: 'pw', username_column: 'login', url_column: 'endpoint' },
      name_prefix: prefix,
    });

    it('imports every row once, reports the failing rows, and a second run duplicates nothing', async () => {
      const res = await api('POST', '/api/v1/extraction/db', { key, body: body() });
      expect(res.status, res.text).toBe(202);
      expect(res.body.data.job.status).toBe('queued');
      const job = await waitForJob(key, res.body.data.job.id);
      expect(job.status, JSON.stringify(job)).toBe('succeeded');
      expect(job.counts).toEqual({ rows: 32, processed: 32, created: 30, updated: 0, unchanged: 0, failed: 2 });
      expect(job.progress).toBe(1);
      expect(job.errors).toHaveLength(2);
      expect(job.errors.map((e: { error: string }) => e.error).join(' ')).toMatch(/is not a secret name/);
      expect(job.errors.find((e: { name: string }) => e.name === `${prefix}svc-empty`).error).toBe('the value column is empty');
      expect(JSON.stringify(job)).not.toContain('CANARY');

      const secrets = await api('GET', '/api/v1/secrets?limit=1000', { key: acct.adminKey });
      const names = secrets.body.data.secrets.map((s: { name: string }) => s.name).filter((n: string) => n.startsWith(prefix));
      expect(names).toHaveLength(30);
      const one = await api('GET', `/api/v1/secrets/${prefix}svc-07`, { key: acct.adminKey });
      expect(one.body.data.secret.data).toEqual({ value: rows[7]!.value, username: 'user7', url: 'https://db.example.test' });

      // run again: nothing new, nothing duplicated; a changed row becomes a new version
      await server.su(`UPDATE app_creds SET login = 'changed' WHERE svc = 'svc-03'`);
      const again = await api('POST', '/api/v1/extraction/db', { key, body: body() });
      const second = await waitForJob(key, again.body.data.job.id);
      expect(second.counts).toEqual({ rows: 32, processed: 32, created: 0, updated: 1, unchanged: 29, failed: 2 });
      const after = await api('GET', '/api/v1/secrets?limit=1000', { key: acct.adminKey });
      expect(after.body.data.secrets.filter((s: { name: string }) => s.name.startsWith(prefix))).toHaveLength(30);
      const changed = await api('GET', `/api/v1/secrets/${prefix}svc-03`, { key: acct.adminKey });
      expect(changed.body.data.secret.version).toBe(2);
      expect(changed.body.data.secret.data.username).toBe('changed');
    });

    it('an administrator may configure a query (run read-only); max_rows truncates', async () => {
      const res = await api('POST', '/api/v1/extraction/db', {
        key: acct.adminKey,
        body: {
          connection_id: connId,
          source: { query: "SELECT svc AS name, pw AS value FROM app_creds WHERE svc LIKE 'svc-1%'" },
          name_prefix: `${prefix}q.`,
          max_rows: 5,
        },
      });
      expect(res.status, res.text).toBe(202);
      const job = await waitForJob(acct.adminKey, res.body.data.job.id);
      expect(job).toMatchObject({ status: 'succeeded', truncated: true, counts: { rows: 5, created: 5 } });
      // a query the server refuses: the job fails with a sanitised reason (no driver text)
      const write = await api('POST', '/api/v1/extraction/db', {
        key: acct.adminKey,
        body: { connection_id: connId, source: { query: 'SELECT no_such_column AS name FROM app_creds' } },
      });
      const failed = await waitForJob(acct.adminKey, write.body.data.job.id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/the database refused the configured query/);
      // without admin:* a query is refused
      const denied = await api('POST', '/api/v1/extraction/db', { key, body: { connection_id: connId, source: { query: 'SELECT 1' } } });
      expect(denied.status).toBe(403);
    });

    it('a schema-qualified table without optional columns; a row without a name; a connection that fails', async () => {
      await server.su(`INSERT INTO app_creds VALUES (NULL, 'orphan', 'u', NULL)`);
      const schema = engine === 'postgresql' ? 'public' : server.database;
      const res = await api('POST', '/api/v1/extraction/db', {
        key,
        body: { connection_id: connId, source: { schema, table: 'app_creds', name_column: 'svc', value_column: 'pw' }, name_prefix: `${prefix}s.` },
      });
      const job = await waitForJob(key, res.body.data.job.id);
      expect(job.counts).toMatchObject({ rows: 33, created: 30, failed: 3 });
      expect(job.errors.map((e: { error: string }) => e.error)).toContain('the name column is empty');
      await server.su('DELETE FROM app_creds WHERE svc IS NULL');
      const empty = await api('POST', '/api/v1/extraction/db', {
        key: acct.adminKey,
        body: { connection_id: connId, source: { query: 'SELECT svc AS name, pw AS value FROM app_creds WHERE 1 = 0' } },
      });
      expect(await waitForJob(acct.adminKey, empty.body.data.job.id)).toMatchObject({ status: 'succeeded', progress: 1, counts: { rows: 0 } });

      const broken = await api('POST', '/api/v1/integrations', {
        key: acct.adminKey,
        body: {
          name: unique('db-broken'),
          provider: engine,
          host: server.host,
          port: server.port,
          database: 'no_such_database_xyz',
          username: server.admin,
          password: server.adminPassword,
          tls_mode: 'disable',
        },
      });
      const failing = await api('POST', '/api/v1/extraction/db', { key, body: { ...body(), connection_id: broken.body.data.integration.id } });
      const failed = await waitForJob(key, failing.body.data.job.id);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/has no such database|refused the stored admin credentials/);
    });

    it('401, 403, cross-account 404, 400', async () => {
      expect((await api('POST', '/api/v1/extraction/db', { key: 'scm_bad', body: body() })).status).toBe(401);
      const wrong = await api('POST', '/api/v1/extraction/db', { key: await acct.key(['secrets:write']), body: body() });
      expect(wrong.status).toBe(403);
      expect(errorCode(wrong)).toBe('insufficient_scope');
      const otherKey = await other.key(['extract:run']);
      expect((await api('POST', '/api/v1/extraction/db', { key: otherKey, body: body() })).status).toBe(404);
      const started = await api('POST', '/api/v1/extraction/db', { key, body: { ...body(), max_rows: 1 } });
      const id = started.body.data.job.id;
      await waitForJob(key, id);
      expect((await api('GET', `/api/v1/extraction/jobs/${id}`, { key: otherKey })).status).toBe(404);
      expect((await api('GET', `/api/v1/extraction/jobs/${MISSING}`, { key })).status).toBe(404);
      expect((await api('GET', `/api/v1/extraction/jobs/${id}`, { key: 'scm_bad' })).status).toBe(401);
      expect((await api('GET', `/api/v1/extraction/jobs/${id}`, { key: await acct.key(['secrets:read']) })).status).toBe(403);
      expect((await api('GET', '/api/v1/extraction/jobs/nope', { key })).status).toBe(400);
      for (const bad of [
        { ...body(), source: { table: 'app_creds; DROP TABLE x', name_column: 'svc', value_column: 'pw' } },
        { ...body(), source: { query: 'DELETE FROM app_creds' } },
        { ...body(), name_prefix: '-bad' },
        { connection_id: connId },
      ]) {
        const res = await api('POST', '/api/v1/extraction/db', { key, body: bad });
        expect(res.status, JSON.stringify(bad)).toBe(400);
      }
    });
  });
}

describe('extraction values', () => {
  it('no extracted value reaches the table in plaintext or the log', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const leaks = await findLeaks({
      dynamoEndpoint: inject('dynamoEndpoint'),
      tableName: inject('tableName'),
      logText: readFileSync(inject('logFile'), 'utf8'),
      extra: values,
    });
    expect(leaks).toEqual([]);
  });
});
