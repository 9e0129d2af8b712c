import { createHash, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { generateDeviceKey, signRequest, signedFetch, type DeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, canary, errorCode, newAccount, oauthError, rootKey, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * Agents through real HTTP: profiles with exact-resource grants, devices enrolled with
 * account credentials or by RFC 8628 device authorization, RFC 9421 signed requests and
 * their replay protection, access to granted aliases (audited with the device as actor),
 * and revocation.
 */

const table = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );

async function auditEntry(tenantId: string, auditId: string) {
  const out = await table().send(new GetCommand({ TableName: inject('tableName'), Key: { pk: `T#${tenantId}`, sk: `AUDIT#${auditId}` } }));
  return out.Item;
}

async function auditEntries(tenantId: string) {
  const out = await table().send(
    new QueryCommand({
      TableName: inject('tableName'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':p': 'AUDIT#' },
    }),
  );
  return out.Items ?? [];
}

interface Device {
  id: string;
  key: DeviceKey;
}

let a: TestAccount;
let b: TestAccount;
let secretA: { id: string; name: string; value: string };
let secretB: { id: string; name: string; value: string };
let profileA: string;

async function createSecret(key: string) {
  const name = unique('agent-s');
  const value = canary('agent');
  const res = await api('POST', '/api/v1/secrets', { key, body: { name, data: { value } } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.secret.id as string, name, value };
}

async function putProfile(account: TestAccount, id: string, body: Record<string, unknown>) {
  return api('PUT', `/api/v1/agents/profiles/${id}`, { key: account.adminKey, body });
}

async function enrolDirect(account: TestAccount, profileId: string, algorithm: DeviceKey['algorithm'] = 'ed25519'): Promise<Device> {
  const key = generateDeviceKey(algorithm);
  const res = await api('POST', '/api/v1/agents/devices', {
    key: account.adminKey,
    body: { name: unique('dev'), public_key: key.publicJwk, profile_id: profileId },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.data.device.id, key };
}

const call = (device: Device, method: string, path: string, body?: unknown) => signedFetch(baseUrl(), device, method, path, body);

/** Sends a request with the given signed headers (for tampering tests). */
async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as any, headers: res.headers };
}

beforeAll(async () => {
  [a, b] = await Promise.all([newAccount('agents-a'), newAccount('agents-b')]);
  [secretA, secretB] = await Promise.all([createSecret(a.adminKey), createSecret(b.adminKey)]);
  profileA = randomUUID();
  const res = await putProfile(a, profileA, {
    name: 'ci-runners',
    enabled: true,
    grants: [{ alias: 'db-password', service: 'secret.read', resource: secretA.id }],
  });
  expect(res.status, res.text).toBe(201);
});

describe('profiles', () => {
  it('PUT creates (201) then replaces (200); GET lists the account own profiles only', async () => {
    const id = randomUUID();
    const first = await putProfile(a, id, { name: 'p1', enabled: true, grants: [] });
    expect(first.status).toBe(201);
    expect(first.body.data.profile).toMatchObject({ id, name: 'p1', enabled: true, grants: [], version: 1 });
    const second = await putProfile(a, id, { name: 'p1b', enabled: false, grants: [{ alias: 'x', service: 'secret.read', resource: secretA.id }] });
    expect(second.status).toBe(200);
    expect(second.body.data.profile).toMatchObject({
      name: 'p1b',
      enabled: false,
      version: 2,
      grants: [{ alias: 'x', service: 'secret.read', resource: secretA.id, resource_type: 'secret' }],
    });
    const listA = await api('GET', '/api/v1/agents/profiles', { key: a.adminKey });
    expect(listA.status).toBe(200);
    expect(listA.body.data.profiles.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([id, profileA]));
    const listB = await api('GET', '/api/v1/agents/profiles', { key: b.adminKey });
    expect(listB.body.data.profiles.map((p: { id: string }) => p.id)).not.toContain(id);
  });

  it('the same profile id in another account is that account own profile: the first is untouched', async () => {
    const res = await putProfile(b, profileA, { name: 'b-own', enabled: true, grants: [] });
    expect(res.status).toBe(201);
    const listA = await api('GET', '/api/v1/agents/profiles', { key: a.adminKey });
    expect(listA.body.data.profiles.find((p: { id: string }) => p.id === profileA)).toMatchObject({
      name: 'ci-runners',
      grants: [{ alias: 'db-password' }],
    });
  });

  it.each([
    ['a wildcard resource', [{ alias: 'w', service: 'secret.read', resource: '*' }]],
    ['a prefix pattern', [{ alias: 'w', service: 'secret.read', resource: 'prod/*' }]],
    ['an unknown service', [{ alias: 'w', service: 'secret.write', resource: '00000000-0000-7000-8000-000000000001' }]],
    ['an alias with a slash', [{ alias: 'a/b', service: 'secret.read', resource: '00000000-0000-7000-8000-000000000001' }]],
    ['an unknown grant field', [{ alias: 'w', service: 'secret.read', resource: '00000000-0000-7000-8000-000000000001', extra: 1 }]],
  ])('400 on %s', async (_label, grants) => {
    const res = await putProfile(a, randomUUID(), { name: 'bad', enabled: true, grants });
    expect(res.status).toBe(400);
    expect(errorCode(res)).toBe('validation_failed');
    expect(res.body.details[0].path).toMatch(/^body\.grants\.0(\.|$)/);
  });

  it('400 when a grant names another account resource or an unknown UUID', async () => {
    const foreign = await putProfile(a, randomUUID(), {
      name: 'bad',
      enabled: true,
      grants: [{ alias: 'f', service: 'secret.read', resource: secretB.id }],
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details).toEqual([{ path: 'body.grants.0.resource', message: 'no resource with this id in the account' }]);
    const unknown = await putProfile(a, randomUUID(), {
      name: 'bad',
      enabled: true,
      grants: [{ alias: 'u', service: 'secret.read', resource: randomUUID() }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details[0].path).toBe('body.grants.0.resource');
  });

  it('400 when the resource type does not fit the service, on duplicate aliases, and on bad fields', async () => {
    const mismatch = await putProfile(a, randomUUID(), {
      name: 'bad',
      enabled: true,
      grants: [{ alias: 'd', service: 'database.issue', resource: secretA.id }],
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.details[0].message).toMatch(/database-role/);
    const dup = await putProfile(a, randomUUID(), {
      name: 'dup',
      enabled: true,
      grants: [
        { alias: 'same', service: 'secret.read', resource: secretA.id },
        { alias: 'same', service: 'secret.read', resource: secretA.id },
      ],
    });
    expect(dup.status).toBe(400);
    expect(dup.body.details[0].path).toBe('body.grants.1.alias');
    for (const body of [
      { name: 'x', enabled: 'yes', grants: [] },
      { name: 'x', enabled: true },
      { name: 'x', enabled: true, grants: [], owner: 'me' },
      { name: '', enabled: true, grants: [] },
    ]) {
      const res = await putProfile(a, randomUUID(), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const badId = await api('PUT', '/api/v1/agents/profiles/not-a-uuid', { key: a.adminKey, body: { name: 'x', enabled: true, grants: [] } });
    expect(badId.status).toBe(400);
  });
});

describe('devices enrolled with account credentials', () => {
  it('POST registers an Ed25519 JWK or a P-256 PEM; GET lists them with fingerprints; other accounts do not see them', async () => {
    const ed = generateDeviceKey('ed25519');
    const res = await api('POST', '/api/v1/agents/devices', {
      key: a.adminKey,
      body: { name: 'builder-1', public_key: ed.publicJwk, profile_id: profileA },
    });
    expect(res.status).toBe(201);
    const d = res.body.data.device;
    expect(d).toMatchObject({
      name: 'builder-1',
      profile_id: profileA,
      algorithm: 'ed25519',
      status: 'active',
      enrolled_via: 'account_credentials',
      public_key: { kty: 'OKP', crv: 'Ed25519', x: ed.publicJwk.x },
    });
    expect(d.fingerprint).toMatch(/^SHA256:[A-Za-z0-9_-]{43}$/);
    const ec = generateDeviceKey('ecdsa-p256-sha256');
    const pem =
      ec.privateKey.export({ format: 'pem', type: 'pkcs8' }) &&
      (await import('node:crypto')).createPublicKey(ec.privateKey).export({ format: 'pem', type: 'spki' });
    const res2 = await api('POST', '/api/v1/agents/devices', { key: a.adminKey, body: { name: 'builder-2', public_key: pem, profile_id: profileA } });
    expect(res2.status, res2.text).toBe(201);
    expect(res2.body.data.device).toMatchObject({ algorithm: 'ecdsa-p256-sha256', public_key: { kty: 'EC', crv: 'P-256' } });
    const list = await api('GET', '/api/v1/agents/devices', { key: a.adminKey });
    expect(list.body.data.devices.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([d.id, res2.body.data.device.id]));
    const listB = await api('GET', '/api/v1/agents/devices', { key: b.adminKey });
    expect(listB.body.data.devices.map((x: { id: string }) => x.id)).not.toContain(d.id);
  });

  it('400 on a private key (never echoed), an RSA key, garbage, an unknown or foreign profile', async () => {
    const ed = generateDeviceKey('ed25519');
    const privateJwk = ed.privateKey.export({ format: 'jwk' });
    const priv = await api('POST', '/api/v1/agents/devices', { key: a.adminKey, body: { name: 'x', public_key: privateJwk, profile_id: profileA } });
    expect(priv.status).toBe(400);
    expect(priv.text).not.toContain(privateJwk.d!);
    const { generateKeyPairSync } = await import('node:crypto');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    for (const public_key of [rsa, 'not a key', { kty: 'OKP', crv: 'Ed25519', x: 'short' }]) {
      const res = await api('POST', '/api/v1/agents/devices', { key: a.adminKey, body: { name: 'x', public_key, profile_id: profileA } });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe('body.public_key');
    }
    const foreignProfile = randomUUID();
    expect((await putProfile(b, foreignProfile, { name: 'b', enabled: true, grants: [] })).status).toBe(201);
    for (const profile_id of [randomUUID(), foreignProfile]) {
      const res = await api('POST', '/api/v1/agents/devices', { key: a.adminKey, body: { name: 'x', public_key: ed.publicJwk, profile_id } });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe('body.profile_id');
    }
  });

  it('DELETE revokes (the response says values and leases are not withdrawn); another account gets 404; twice is 404', async () => {
    const device = await enrolDirect(a, profileA);
    const foreign = await api('DELETE', `/api/v1/agents/devices/${device.id}`, { key: b.adminKey });
    expect(foreign.status).toBe(404);
    expect(errorCode(foreign)).toBe('not_found');
    expect((await call(device, 'GET', '/api/v1/agent/identity')).status).toBe(200);
    const res = await api('DELETE', `/api/v1/agents/devices/${device.id}`, { key: a.adminKey });
    expect(res.status).toBe(200);
    expect(res.body.data.device).toMatchObject({ id: device.id, status: 'revoked' });
    expect(res.body.data.note).toMatch(/not withdrawn/);
    const again = await api('DELETE', `/api/v1/agents/devices/${device.id}`, { key: a.adminKey });
    expect(again.status).toBe(404);
    const after = await call(device, 'GET', '/api/v1/agent/identity');
    expect(after.status).toBe(401);
  });

  it('the max_devices quota is enforced; revocation frees a place', async () => {
    const c = await newAccount('agents-quota');
    const pid = randomUUID();
    expect((await putProfile(c, pid, { name: 'q', enabled: true, grants: [] })).status).toBe(201);
    const quota = await api('PUT', `/api/v1/admin/tenants/${c.tenantId}/quota`, { key: rootKey(), body: { max_devices: 1 } });
    expect(quota.status, quota.text).toBe(200);
    const first = await enrolDirect(c, pid);
    const over = await api('POST', '/api/v1/agents/devices', {
      key: c.adminKey,
      body: { name: 'two', public_key: generateDeviceKey().publicJwk, profile_id: pid },
    });
    expect(over.status).toBe(403);
    expect(errorCode(over)).toBe('quota_exceeded');
    expect((await api('DELETE', `/api/v1/agents/devices/${first.id}`, { key: c.adminKey })).status).toBe(200);
    await enrolDirect(c, pid);
  });
});

describe('signed device requests (RFC 9421)', () => {
  let device: Device;
  let p256: Device;
  beforeAll(async () => {
    [device, p256] = await Promise.all([enrolDirect(a, profileA, 'ed25519'), enrolDirect(a, profileA, 'ecdsa-p256-sha256')]);
  });

  it('a correctly signed request succeeds (Ed25519 and ECDSA P-256): identity shows profile and grants, no values', async () => {
    for (const d of [device, p256]) {
      const res = await call(d, 'GET', '/api/v1/agent/identity');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.identity).toEqual({
        device_id: d.id,
        name: expect.any(String),
        tenant_id: a.tenantId,
        algorithm: d.key.algorithm,
        profile: { id: profileA, name: 'ci-runners', enabled: true },
        grants: [{ alias: 'db-password', service: 'secret.read', resource_type: 'secret' }],
      });
      expect(JSON.stringify(res.body)).not.toContain(secretA.value);
    }
  });

  it('access to a granted alias returns the value and writes an audit entry naming the device', async () => {
    const res = await call(device, 'POST', '/api/v1/agent/access/db-password');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      alias: 'db-password',
      service: 'secret.read',
      resource: { type: 'secret', id: secretA.id, name: secretA.name, version: 1 },
      data: { value: secretA.value },
    });
    const entry = await auditEntry(a.tenantId, res.body.data.audit_id);
    expect(entry).toMatchObject({
      action: 'agent.access',
      outcome: 'success',
      actor: { type: 'device', id: device.id, tenant_id: a.tenantId },
      resource: { type: 'secret', id: secretA.id },
      detail: { alias: 'db-password', service: 'secret.read', device_id: device.id },
    });
    expect(JSON.stringify(entry)).not.toContain(secretA.value);
  });

  it('an alias the profile does not grant is refused with 403 not_granted and audited as denied', async () => {
    const res = await call(device, 'POST', '/api/v1/agent/access/other-secret');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('not_granted');
    const denied = (await auditEntries(a.tenantId)).find(
      (e) => e.outcome === 'denied' && e.actor.id === device.id && e.detail?.alias === 'other-secret',
    );
    expect(denied).toMatchObject({ action: 'agent.access', actor: { type: 'device' } });
    const badAlias = await call(device, 'POST', '/api/v1/agent/access/bad%20alias');
    expect(badAlias.status).toBe(400);
  });

  it('401 on a tampered body', async () => {
    const url = `${baseUrl()}/api/v1/agent/access/db-password`;
    const { headers } = signRequest({ method: 'POST', url, body: '{}', keyId: device.id, key: device.key });
    const res = await send('POST', '/api/v1/agent/access/db-password', headers, '{"ttl_seconds":60}');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_signature');
    expect(res.body.error).toMatch(/Content-Digest/);
    // a body swapped together with a recomputed digest breaks the signature instead
    const digest = `sha-256=:${createHash('sha256').update('{"ttl_seconds":60}').digest('base64')}:`;
    const res2 = await send('POST', '/api/v1/agent/access/db-password', { ...headers, 'content-digest': digest }, '{"ttl_seconds":60}');
    expect(res2.status).toBe(401);
    expect(res2.body.error).toMatch(/does not verify/);
  });

  it('401 on a changed path or an added query', async () => {
    const { headers } = signRequest({ method: 'POST', url: `${baseUrl()}/api/v1/agent/access/db-password`, keyId: device.id, key: device.key });
    const moved = await send('POST', '/api/v1/agent/access/other-secret', headers);
    expect(moved.status).toBe(401);
    const signed = signRequest({ method: 'GET', url: `${baseUrl()}/api/v1/agent/identity`, keyId: device.id, key: device.key });
    const query = await send('GET', '/api/v1/agent/identity?x=1', signed.headers);
    expect(query.status).toBe(401);
    // and a signed query in canonical form is accepted
    const withQuery = signRequest({ method: 'GET', url: `${baseUrl()}/api/v1/agent/identity?a=1&b=x%20y`, keyId: device.id, key: device.key });
    expect((await send('GET', '/api/v1/agent/identity?a=1&b=x%20y', withQuery.headers)).status).toBe(200);
  });

  it('401 on an old timestamp, a future one, and an expired signature', async () => {
    const url = `${baseUrl()}/api/v1/agent/identity`;
    const now = Math.floor(Date.now() / 1000);
    for (const created of [now - 120, now + 300]) {
      const { headers } = signRequest({ method: 'GET', url, keyId: device.id, key: device.key, created });
      const res = await send('GET', '/api/v1/agent/identity', headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_signature');
    }
  });

  it('401 on a reused nonce: the first request succeeds, its replay fails', async () => {
    const { headers } = signRequest({ method: 'POST', url: `${baseUrl()}/api/v1/agent/access/db-password`, keyId: device.id, key: device.key });
    const first = await send('POST', '/api/v1/agent/access/db-password', headers);
    expect(first.status).toBe(200);
    const replay = await send('POST', '/api/v1/agent/access/db-password', headers);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toMatch(/nonce/);
    // the same nonce in a freshly signed request is refused too
    const nonce = /nonce="([^"]+)"/.exec(headers['signature-input']!)![1]!;
    const again = signRequest({ method: 'GET', url: `${baseUrl()}/api/v1/agent/identity`, keyId: device.id, key: device.key, nonce });
    expect((await send('GET', '/api/v1/agent/identity', again.headers)).status).toBe(401);
  });

  it('401 on an unknown key id, a key id of another device, a signature by another key, missing parts', async () => {
    const url = `${baseUrl()}/api/v1/agent/identity`;
    const stranger = generateDeviceKey();
    for (const keyId of [randomUUID(), 'not-a-uuid']) {
      const { headers } = signRequest({ method: 'GET', url, keyId, key: device.key });
      const res = await send('GET', '/api/v1/agent/identity', headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
    const impostor = signRequest({ method: 'GET', url, keyId: device.id, key: stranger });
    expect((await send('GET', '/api/v1/agent/identity', impostor.headers)).status).toBe(401);
    const wrongAlg = signRequest({ method: 'GET', url, keyId: p256.id, key: device.key });
    expect((await send('GET', '/api/v1/agent/identity', wrongAlg.headers)).status).toBe(401);
    const partial = signRequest({ method: 'GET', url, keyId: device.id, key: device.key, components: ['@method', '@path'] });
    const res = await send('GET', '/api/v1/agent/identity', partial.headers);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/must cover/);
    expect(res.headers.get('accept-signature')).toMatch(/content-digest/);
    const { signature: _s, ...noSignature } = signRequest({ method: 'GET', url, keyId: device.id, key: device.key }).headers;
    expect((await send('GET', '/api/v1/agent/identity', noSignature)).status).toBe(401);
    const badNonce = signRequest({ method: 'GET', url, keyId: device.id, key: device.key, nonce: 'short' });
    expect((await send('GET', '/api/v1/agent/identity', badNonce.headers)).status).toBe(401);
    const bearer = await api('GET', '/api/v1/agent/identity', { key: a.adminKey });
    expect(bearer.status).toBe(401);
  });

  it('a disabled profile denies all its devices at once (403); re-enabling restores them', async () => {
    const pid = randomUUID();
    const grants = [{ alias: 'db-password', service: 'secret.read', resource: secretA.id }];
    expect((await putProfile(a, pid, { name: 'toggle', enabled: true, grants })).status).toBe(201);
    const d = await enrolDirect(a, pid);
    expect((await call(d, 'GET', '/api/v1/agent/identity')).status).toBe(200);
    expect((await putProfile(a, pid, { name: 'toggle', enabled: false, grants })).status).toBe(200);
    const off = await call(d, 'POST', '/api/v1/agent/access/db-password');
    expect(off.status).toBe(403);
    expect(off.body.code).toBe('profile_disabled');
    // removing a grant applies to the next request too
    expect((await putProfile(a, pid, { name: 'toggle', enabled: true, grants: [] })).status).toBe(200);
    expect((await call(d, 'POST', '/api/v1/agent/access/db-password')).status).toBe(403);
    expect((await call(d, 'GET', '/api/v1/agent/identity')).body.data.identity.grants).toEqual([]);
  });

  it('grant hints: the first access copies the profile grants onto the device auth item; a stale or wrong hint never decides the answer', async () => {
    const [s1, s2] = [await createSecret(a.adminKey), await createSecret(a.adminKey)];
    const pid = randomUUID();
    const grantsTo = (id: string) => [{ alias: 'hinted', service: 'secret.read', resource: id }];
    expect((await putProfile(a, pid, { name: 'hints', enabled: true, grants: grantsTo(s1.id) })).status).toBe(201);
    const d = await enrolDirect(a, pid);
    const authItem = async () =>
      (await table().send(new GetCommand({ TableName: inject('tableName'), Key: { pk: `DEVICE#${d.id}`, sk: 'DEVICE' }, ConsistentRead: true })))
        .Item!;
    expect((await authItem()).grant_hints).toBeUndefined(); // written by the first access, not at enrolment
    const first = await call(d, 'POST', '/api/v1/agent/access/hinted');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.data).toEqual({ value: s1.value });
    expect((await authItem()).grant_hints).toEqual([
      { alias: 'hinted', service: 'secret.read', resource: s1.id, resource_type: 'secret', resource_name: s1.name },
    ]);
    // the profile moves the alias to s2: the device's hint still names s1, the answer is s2's
    expect((await putProfile(a, pid, { name: 'hints', enabled: true, grants: grantsTo(s2.id) })).status).toBe(200);
    const moved = await call(d, 'POST', '/api/v1/agent/access/hinted');
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toMatchObject({ resource: { id: s2.id, name: s2.name }, data: { value: s2.value } });
    expect(JSON.stringify(moved.body)).not.toContain(s1.value);
    expect((await authItem()).grant_hints).toEqual([
      { alias: 'hinted', service: 'secret.read', resource: s2.id, resource_type: 'secret', resource_name: s2.name },
    ]);
    // a hint written by hand naming another secret is read, but never used: the profile decides
    await table().send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: { pk: `DEVICE#${d.id}`, sk: 'DEVICE' },
        UpdateExpression: 'SET grant_hints = :g',
        ExpressionAttributeValues: {
          ':g': [{ alias: 'hinted', service: 'secret.read', resource: s1.id, resource_type: 'secret', resource_name: s1.name }],
        },
      }),
    );
    const wrongHint = await call(d, 'POST', '/api/v1/agent/access/hinted');
    expect(wrongHint.status).toBe(200);
    expect(wrongHint.body.data.data).toEqual({ value: s2.value });
    expect((await authItem()).grant_hints[0].resource).toBe(s2.id);
    // a hinted alias the profile no longer grants is 403, whatever the hint says
    expect((await putProfile(a, pid, { name: 'hints', enabled: true, grants: [] })).status).toBe(200);
    const gone = await call(d, 'POST', '/api/v1/agent/access/hinted');
    expect(gone.status).toBe(403);
    expect(JSON.stringify(gone.body)).not.toContain(s2.value);
  });

  it('a granted secret that was deleted is 404; one re-created under the same name is not the granted resource', async () => {
    const s = await createSecret(a.adminKey);
    const pid = randomUUID();
    expect(
      (await putProfile(a, pid, { name: 'gone', enabled: true, grants: [{ alias: 'gone', service: 'secret.read', resource: s.id }] })).status,
    ).toBe(201);
    const d = await enrolDirect(a, pid);
    expect((await call(d, 'POST', '/api/v1/agent/access/gone')).status).toBe(200);
    expect((await api('DELETE', `/api/v1/secrets/${s.name}`, { key: a.adminKey })).status).toBe(200);
    expect((await call(d, 'POST', '/api/v1/agent/access/gone')).status).toBe(404);
    const again = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: s.name, data: { value: canary('recreated') } } });
    expect(again.status).toBe(201);
    expect((await call(d, 'POST', '/api/v1/agent/access/gone')).status).toBe(404);
  });

  it('a suspended account refuses its devices (403) until reactivated', async () => {
    const c = await newAccount('agents-susp');
    const pid = randomUUID();
    expect((await putProfile(c, pid, { name: 's', enabled: true, grants: [] })).status).toBe(201);
    const d = await enrolDirect(c, pid);
    expect((await call(d, 'GET', '/api/v1/agent/identity')).status).toBe(200);
    expect((await api('PATCH', `/api/v1/admin/tenants/${c.tenantId}/suspend`, { key: rootKey() })).status).toBe(200);
    const res = await call(d, 'GET', '/api/v1/agent/identity');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('tenant_suspended');
    expect((await api('PATCH', `/api/v1/admin/tenants/${c.tenantId}/activate`, { key: rootKey() })).status).toBe(200);
    expect((await call(d, 'GET', '/api/v1/agent/identity')).status).toBe(200);
  });

  it('the revoked device fails on its very next request', async () => {
    const d = await enrolDirect(a, profileA);
    expect((await call(d, 'POST', '/api/v1/agent/access/db-password')).status).toBe(200);
    expect((await api('DELETE', `/api/v1/agents/devices/${d.id}`, { key: a.adminKey })).status).toBe(200);
    const res = await call(d, 'POST', '/api/v1/agent/access/db-password');
    expect(res.status).toBe(401);
    expect(res.body.error).toMatch(/unknown or revoked/);
  });
});

describe('enrolment by device authorization (RFC 8628)', () => {
  let approver: string;
  beforeAll(async () => {
    approver = await a.key(['agents:approve']);
  });

  async function start(key: DeviceKey, extra: Record<string, unknown> = {}) {
    const res = await api('POST', '/api/v1/agent/oauth/device', { body: { name: unique('laptop'), public_key: key.publicJwk, ...extra } });
    expect(res.status, res.text).toBe(200);
    return res.body as {
      device_code: string;
      user_code: string;
      verification_uri: string;
      verification_uri_complete: string;
      expires_in: number;
      interval: number;
    };
  }
  const poll = (device_code: string) =>
    api('POST', '/api/v1/agent/oauth/token', { body: { device_code, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' } });

  it('pending → slow_down → approve → token → enroll; the device then signs requests; codes are single-use', async () => {
    const key = generateDeviceKey('ecdsa-p256-sha256');
    const auth = await start(key, { profile_id: profileA });
    expect(auth.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(auth).toMatchObject({ expires_in: 600, interval: 5 });
    expect(auth.verification_uri).toMatch(/\/api\/v1\/agents\/oauth\/review$/);
    expect(auth.device_code.length).toBeGreaterThanOrEqual(43);

    const pending = await poll(auth.device_code);
    expect(pending.status).toBe(400);
    expect(oauthError(pending)).toBe('authorization_pending');
    const tooFast = await poll(auth.device_code);
    expect(tooFast.status).toBe(400);
    expect(oauthError(tooFast)).toBe('slow_down');
    expect(tooFast.body.error_description).toMatch(/10 s/);

    // the reviewer types the code in any case, without the dash
    const review = await api('POST', '/api/v1/agents/oauth/review', {
      key: approver,
      body: { user_code: auth.user_code.replace('-', '').toLowerCase() },
    });
    expect(review.status, review.text).toBe(200);
    expect(review.body.data.authorization).toMatchObject({
      user_code: auth.user_code,
      status: 'pending',
      algorithm: 'ecdsa-p256-sha256',
      requested_profile: { id: profileA, name: 'ci-runners', exists: true },
    });
    expect(review.body.data.authorization.key_fingerprint).toMatch(/^SHA256:/);

    const approve = await api('POST', '/api/v1/agents/oauth/approve', { key: approver, body: { user_code: auth.user_code, decision: 'approve' } });
    expect(approve.status, approve.text).toBe(200);
    expect(approve.body.data.authorization).toMatchObject({ status: 'approved', profile_id: profileA });
    // the user code is single-use
    expect((await api('POST', '/api/v1/agents/oauth/review', { key: approver, body: { user_code: auth.user_code } })).status).toBe(404);
    expect((await api('POST', '/api/v1/agents/oauth/approve', { key: approver, body: { user_code: auth.user_code, decision: 'deny' } })).status).toBe(
      404,
    );

    const token = await poll(auth.device_code);
    expect(token.status, token.text).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
    const reused = await poll(auth.device_code);
    expect(oauthError(reused)).toBe('invalid_grant');

    const enrol = await api('POST', '/api/v1/agent/oauth/enroll', { body: { enrollment_token: token.body.access_token } });
    expect(enrol.status, enrol.text).toBe(201);
    const deviceId = enrol.body.data.device_id as string;
    expect(enrol.body.data).toMatchObject({
      key_id: deviceId,
      tenant_id: a.tenantId,
      profile_id: profileA,
      device: { enrolled_via: 'device_authorization', status: 'active' },
    });
    const twice = await api('POST', '/api/v1/agent/oauth/enroll', { body: { enrollment_token: token.body.access_token } });
    expect(twice.status).toBe(400);
    expect(errorCode(twice)).toBe('invalid_grant');

    const d: Device = { id: deviceId, key };
    const who = await call(d, 'GET', '/api/v1/agent/identity');
    expect(who.status).toBe(200);
    expect(who.body.data.identity.device_id).toBe(deviceId);
    const got = await call(d, 'POST', '/api/v1/agent/access/db-password');
    expect(got.body.data.data.value).toBe(secretA.value);

    const entries = await auditEntries(a.tenantId);
    expect(entries.find((e) => e.action === 'agent.device.enroll' && e.resource.id === deviceId)).toMatchObject({
      actor: { type: 'device', id: deviceId },
    });
    expect(entries.find((e) => e.action === 'agent.authorization.approve' && e.detail.profile_id === profileA)).toMatchObject({
      actor: { type: 'api_key' },
    });
    const list = await api('GET', '/api/v1/agents/devices', { key: a.adminKey });
    expect(list.body.data.devices.find((x: { id: string }) => x.id === deviceId)).toMatchObject({ enrolled_via: 'device_authorization' });
  });

  it('deny: the device gets access_denied and can never enrol', async () => {
    const auth = await start(generateDeviceKey());
    const deny = await api('POST', '/api/v1/agents/oauth/approve', { key: approver, body: { user_code: auth.user_code, decision: 'deny' } });
    expect(deny.status).toBe(200);
    expect(deny.body.data.authorization.status).toBe('denied');
    const res = await poll(auth.device_code);
    expect(res.status).toBe(400);
    expect(oauthError(res)).toBe('access_denied');
  });

  it('expiry: an expired request answers expired_token and its user code is no longer found', async () => {
    const auth = await start(generateDeviceKey());
    const codeHash = createHash('sha256').update(auth.device_code).digest('hex');
    await table().send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: { pk: `DEVAUTHZ#${codeHash}`, sk: 'DEVAUTHZ' },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const res = await poll(auth.device_code);
    expect(res.status).toBe(400);
    expect(oauthError(res)).toBe('expired_token');
    expect((await api('POST', '/api/v1/agents/oauth/review', { key: approver, body: { user_code: auth.user_code } })).status).toBe(404);
  });

  it('approval needs a profile of the approver account; unknown codes are 404; bad bodies are 400', async () => {
    const auth = await start(generateDeviceKey());
    const none = await api('POST', '/api/v1/agents/oauth/approve', { key: approver, body: { user_code: auth.user_code, decision: 'approve' } });
    expect(none.status).toBe(400);
    const foreignProfile = randomUUID();
    expect((await putProfile(b, foreignProfile, { name: 'b', enabled: true, grants: [] })).status).toBe(201);
    const foreign = await api('POST', '/api/v1/agents/oauth/approve', {
      key: approver,
      body: { user_code: auth.user_code, decision: 'approve', profile_id: foreignProfile },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details[0].path).toBe('body.profile_id');
    expect((await api('POST', '/api/v1/agents/oauth/review', { key: approver, body: { user_code: 'BCDF-GHJK' } })).status).toBe(404);
    expect((await api('POST', '/api/v1/agents/oauth/review', { key: approver, body: { user_code: 'AEIO-U123' } })).status).toBe(404);
    expect(oauthError(await poll('x'.repeat(43)))).toBe('invalid_grant');
    for (const body of [{}, { name: 'x' }, { name: 'x', public_key: 'nope' }, { name: 'x', public_key: generateDeviceKey().publicJwk, extra: 1 }]) {
      const res = await api('POST', '/api/v1/agent/oauth/device', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(oauthError(res)).toBe('invalid_request');
    }
    const password = await api('POST', '/api/v1/agent/oauth/token', { body: { device_code: auth.device_code, grant_type: 'password' } });
    expect(password.status).toBe(400);
    expect(oauthError(password)).toBe('unsupported_grant_type');
    expect(
      (await api('POST', '/api/v1/agents/oauth/approve', { key: approver, body: { user_code: auth.user_code, decision: 'maybe' } })).status,
    ).toBe(400);
  });

  it('no device code or enrolment token is stored in the table in plaintext', async () => {
    const auth = await start(generateDeviceKey());
    const codeHash = createHash('sha256').update(auth.device_code).digest('hex');
    const item = await table().send(new GetCommand({ TableName: inject('tableName'), Key: { pk: `DEVAUTHZ#${codeHash}`, sk: 'DEVAUTHZ' } }));
    expect(item.Item).toBeDefined();
    expect(JSON.stringify(item.Item)).not.toContain(auth.device_code);
    expect(JSON.stringify(item.Item)).not.toContain(auth.user_code.replace('-', ''));
  });
});

describe('grant targets by resource type', () => {
  let resources: typeof import('../../lib/resources/store.js');
  let ctxA: import('../../lib/auth/principal.js').CallContext;
  const make = (type: string, meta: Record<string, unknown>, secret?: Record<string, unknown>) =>
    resources.createResource(ctxA, { type, name: unique(type), meta, ...(secret ? { secret } : {}) }, (rec) => ({
      action: `${type}.create`,
      resource: { type, id: rec.id, name: rec.name },
    }));

  beforeAll(async () => {
    useRuntimeConfig();
    resources = await import('../../lib/resources/store.js');
    const { getTenant } = await import('../../lib/store/tenants.js');
    const tenant = (await getTenant(a.tenantId))!;
    ctxA = {
      principal: { kind: 'api_key', tenantId: tenant.id, tenant, id: 'test', user: a.adminEmail, scopes: ['admin:*'], operator: false },
      requestId: 'agents-test',
      sourceIp: null,
      userAgent: null,
    };
  });

  it('secret.read reaches a typed credential: its secret fields and its public metadata', async () => {
    const passphrase = canary('wifi');
    const wifi = await make('wifi_credential', { description: '', tags: [], ssid: 'office', security: 'WPA3' }, { passphrase });
    const pid = randomUUID();
    const put = await putProfile(a, pid, {
      name: 'wifi',
      enabled: true,
      grants: [{ alias: 'office-wifi', service: 'secret.read', resource: wifi.id }],
    });
    expect(put.status, put.text).toBe(201);
    expect(put.body.data.profile.grants[0].resource_type).toBe('wifi_credential');
    const d = await enrolDirect(a, pid);
    const res = await call(d, 'POST', '/api/v1/agent/access/office-wifi');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      resource: { type: 'wifi_credential', id: wifi.id, version: 1 },
      data: { passphrase },
      metadata: { ssid: 'office' },
    });
  });

  it('secret.read refuses containers and key material; database.issue takes only a database-role service-config', async () => {
    const container = await make('container', { description: '' });
    const ssh = await make('ssh_key', { description: '', tags: [] }, { private_key: canary('ssh') });
    const role = await make('service_config', { description: '', tags: [], kind: 'database-role', connection_id: randomUUID() });
    const generic = await make('service_config', { description: '', tags: [], kind: 'generic', service: 'x' });
    for (const r of [container, ssh]) {
      const res = await putProfile(a, randomUUID(), { name: 'bad', enabled: true, grants: [{ alias: 'x', service: 'secret.read', resource: r.id }] });
      expect(res.status).toBe(400);
      expect(res.body.details[0].message).toMatch(/cannot be the target of secret.read/);
    }
    const bad = await putProfile(a, randomUUID(), {
      name: 'bad',
      enabled: true,
      grants: [{ alias: 'db', service: 'database.issue', resource: generic.id }],
    });
    expect(bad.status).toBe(400);
    const okRole = await putProfile(a, randomUUID(), {
      name: 'db',
      enabled: true,
      grants: [{ alias: 'db', service: 'database.issue', resource: role.id }],
    });
    expect(okRole.status, okRole.text).toBe(201);
    expect(okRole.body.data.profile.grants[0]).toMatchObject({ service: 'database.issue', resource_type: 'service_config' });
  });
});
