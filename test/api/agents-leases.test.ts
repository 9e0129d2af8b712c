import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { generateDeviceKey, signedFetch, type DeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, canary, newAccount, unique, type TestAccount } from '../helpers/api.js';

/**
 * `database.issue` grants against the real PostgreSQL on 127.0.0.1:5432: a device issues a
 * lease through its alias; after the device is revoked its next request fails, while the
 * lease it obtained before keeps working (the spec: revocation does not revoke leases).
 */

const admin = () => new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres' });
const adminRole = `agents_adm_${randomBytes(4).toString('hex')}`;
const adminPassword = canary('pgadm');
const created: string[] = [];

let a: TestAccount;
let roleId: string;
let profileId: string;

async function loginWorks(user: string, password: string): Promise<string> {
  const c = new pg.Client({ host: '127.0.0.1', port: 5432, user, password, database: 'postgres' });
  await c.connect();
  try {
    return (await c.query('SELECT current_user AS u')).rows[0].u as string;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  const c = admin();
  await c.connect();
  await c.query(`CREATE ROLE ${adminRole} LOGIN CREATEROLE PASSWORD '${adminPassword}'`);
  await c.end();
  a = await newAccount('agents-db');
  const integration = await api('POST', '/api/v1/integrations', {
    key: a.adminKey,
    body: {
      name: unique('pg'),
      provider: 'postgresql',
      host: '127.0.0.1',
      port: 5432,
      database: 'postgres',
      username: adminRole,
      password: adminPassword,
      tls_mode: 'disable',
    },
  });
  expect(integration.status, integration.text).toBe(201);
  const role = await api('POST', '/api/v1/service-config', {
    key: a.adminKey,
    body: {
      name: 'agent-login',
      kind: 'database-role',
      connection_id: integration.body.data.integration.id,
      creation_statements: ['CREATE ROLE {{name}} LOGIN PASSWORD {{password}} VALID UNTIL {{expiration}}'],
      revocation_statements: ['DROP ROLE IF EXISTS {{name}}'],
      default_ttl_seconds: 600,
      max_ttl_seconds: 3600,
    },
  });
  expect(role.status, role.text).toBe(201);
  roleId = role.body.data.service_config.id;
  profileId = randomUUID();
  const profile = await api('PUT', `/api/v1/agents/profiles/${profileId}`, {
    key: a.adminKey,
    body: { name: 'db-agents', enabled: true, grants: [{ alias: 'app-db', service: 'database.issue', resource: roleId }] },
  });
  expect(profile.status, profile.text).toBe(201);
});

afterAll(async () => {
  const c = admin();
  await c.connect();
  for (const name of created) await c.query(`DROP ROLE IF EXISTS "${name}"`);
  await c.query(`DROP ROLE IF EXISTS ${adminRole}`);
  await c.end();
});

async function enrol(): Promise<{ id: string; key: DeviceKey }> {
  const key = generateDeviceKey();
  const res = await api('POST', '/api/v1/agents/devices', {
    key: a.adminKey,
    body: { name: unique('db-dev'), public_key: key.publicJwk, profile_id: profileId },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.device.id, key };
}

describe('database.issue through an agent alias', () => {
  it('issues a working lease, audited with the device as actor; after revocation the device fails but the lease still works', async () => {
    const device = await enrol();
    const res = await signedFetch(baseUrl(), device, 'POST', '/api/v1/agent/access/app-db', { ttl_seconds: 300 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { lease, audit_id } = res.body.data;
    expect(res.body.data).toMatchObject({ alias: 'app-db', service: 'database.issue', resource: { type: 'service_config', id: roleId } });
    expect(lease).toMatchObject({ lease_id: expect.any(String), username: expect.any(String), password: expect.any(String), ttl_seconds: 300 });
    created.push(lease.username);
    expect(await loginWorks(lease.username, lease.password)).toBe(lease.username);

    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: inject('dynamoEndpoint'),
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const entry = (await doc.send(new GetCommand({ TableName: inject('tableName'), Key: { pk: `T#${a.tenantId}`, sk: `AUDIT#${audit_id}` } }))).Item;
    expect(entry).toMatchObject({
      action: 'agent.access',
      actor: { type: 'device', id: device.id },
      detail: { alias: 'app-db', service: 'database.issue', lease_id: lease.lease_id },
    });
    expect(JSON.stringify(entry)).not.toContain(lease.password);

    const revoked = await api('DELETE', `/api/v1/agents/devices/${device.id}`, { key: a.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data.note).toMatch(/leases it already obtained are not withdrawn/);
    const after = await signedFetch(baseUrl(), device, 'POST', '/api/v1/agent/access/app-db', {});
    expect(after.status).toBe(401);
    // the lease obtained before the revocation still logs in (documented: revoke leases explicitly)
    expect(await loginWorks(lease.username, lease.password)).toBe(lease.username);
  });

  it('a TTL over the role maximum is a 400 and issues nothing', async () => {
    const device = await enrol();
    const res = await signedFetch(baseUrl(), device, 'POST', '/api/v1/agent/access/app-db', { ttl_seconds: 7200 });
    expect(res.status).toBe(400);
  });
});
