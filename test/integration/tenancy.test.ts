import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { auditEntryItem } from './table.js';

/**
 * Tenancy by IAM, in the code (lib/tenancy, lib/store/client.ts): after authentication every
 * table call goes out with the tenant's STS session credentials. The STS stand-in (STS has
 * no engine here) answers AssumeRole and records each request exactly; a recording proxy in
 * front of DynamoDB Local sees which credentials signed each request (DynamoDB Local ignores
 * them, so the test checks them on the wire).
 */
const ROLE = 'arn:aws:iam::123456789012:role/secrets-api-tenant-access';
const keyFor = (tenantId: string) => `ASIA${tenantId.replace(/-/g, '').slice(-16).toUpperCase()}`;

interface StsCall {
  readonly params: Record<string, string>;
}
interface DynamoCall {
  readonly accessKey: string | undefined;
  readonly token: string | undefined;
  readonly target: string;
  readonly body: Record<string, any>;
}

const listen = (server: Server) => new Promise<string>((ok) => server.listen(0, '127.0.0.1', () => ok(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
const bodyOf = (req: import('node:http').IncomingMessage) =>
  new Promise<Buffer>((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks)));
  });

const sts: StsCall[] = [];
const dynamo: DynamoCall[] = [];
const sessionStore: DynamoCall[] = [];
let stsServer: Server;
let proxy: Server;

beforeAll(async () => {
  useRuntimeConfig();
  const upstream = new URL(process.env.DYNAMODB_ENDPOINT!);
  stsServer = createServer(async (req, res) => {
    const params = Object.fromEntries(new URLSearchParams((await bodyOf(req)).toString('utf8')));
    sts.push({ params });
    const tenant = params['Tags.member.1.Value'] ?? 'none';
    // a tenant id starting `short-` gets a session about to run out (the shared-session tests)
    const expiration = new Date(Date.now() + (tenant.startsWith('short-') ? 400_000 : 3_600_000)).toISOString();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${keyFor(tenant)}</AccessKeyId><SecretAccessKey>secret-${tenant}</SecretAccessKey><SessionToken>token-${tenant}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>${ROLE}/tenant-${tenant}</Arn><AssumedRoleId>AROA:tenant-${tenant}</AssumedRoleId></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  });
  proxy = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const call: DynamoCall = {
      accessKey: /Credential=([^/]+)\//.exec(String(req.headers.authorization))?.[1],
      token: req.headers['x-amz-security-token'] as string | undefined,
      target: String(req.headers['x-amz-target']).split('.').pop()!,
      body: JSON.parse(body.toString('utf8') || '{}'),
    };
    // the shared sessions' reads and writes (lib/authn/tenant-sessions.ts) apart from the requests' own calls
    (pkOf(call).some((pk) => pk.startsWith('TSESSION#')) ? sessionStore : dynamo).push(call);
    const out = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    out.end(body);
  });
  const [stsUrl, proxyUrl] = await Promise.all([listen(stsServer), listen(proxy)]);
  Object.assign(process.env, {
    TENANT_ROLE_ARN: ROLE,
    STS_ENDPOINT: stsUrl,
    DYNAMODB_ENDPOINT: proxyUrl,
    // the payment webhook's test (the local provider's secrets in a file of this run)
    PAYMENT_PROVIDER: 'local',
    PAYMENT_SECRET_FILE: join(inject('dataDir'), 'payment', 'tenancy-provider.json'),
  });
});

afterAll(async () => {
  await Promise.all([new Promise((ok) => stsServer?.close(ok)), new Promise((ok) => proxy?.close(ok))]);
});

async function newTenant(quota: Record<string, number> = {}) {
  const { tenantItems } = await import('../../lib/operator/accounts.js');
  const { transact } = await import('../../lib/store/tx.js');
  const email = `a-${randomBytes(4).toString('hex')}@example.test`;
  const prepared = tenantItems({ name: `t-${randomBytes(4).toString('hex')}`, admin_email: email, quota });
  await transact(prepared.items);
  // the admin key acts for the admin's e-mail (a share's recipient)
  return { tenantId: prepared.result.tenant.id, key: prepared.result.api_key.key, email };
}

const event = (method: string, resource: string, key: string, path: Record<string, string> | null, body?: unknown): APIGatewayProxyEvent =>
  ({
    httpMethod: method,
    resource,
    path: resource,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: path,
    stageVariables: null,
    body: body === undefined ? null : JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: { requestId: randomBytes(8).toString('hex'), identity: { sourceIp: '203.0.113.7', userAgent: 'test' } },
  }) as unknown as APIGatewayProxyEvent;
const context = { awsRequestId: 'aws-request' } as Context;

const pkOf = (call: DynamoCall): string[] => {
  const b = call.body;
  const keys: unknown[] = [b.Key?.pk, b.Item?.pk, b.ExpressionAttributeValues?.[':pk'], ...(b.TransactItems ?? []).map((t: any) => (t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key ?? t.ConditionCheck?.Key)?.pk)];
  return keys.filter(Boolean).map((k: any) => k.S as string);
};

describe('tenant-scoped credentials', () => {
  it('a handler request: authentication on the function\'s own credentials, every later call with the tenant session (one AssumeRole of the exact shape, cached)', async () => {
    const { create, list } = await import('../../functions/secrets/secrets.js');
    const a = await newTenant();
    const stsBefore = sts.length;
    const from = dynamo.length;
    const name = `s-${randomBytes(4).toString('hex')}`;
    const created = await create(event('POST', '/api/v1/secrets', a.key, null, { name, data: { value: 'tenancy-value' } }), context);
    expect(created.statusCode, created.body).toBe(201);
    const listed = await list(event('GET', '/api/v1/secrets', a.key, null), context);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.body).toContain(name);

    // exactly one AssumeRole for the tenant, with the exact request
    const calls = sts.slice(stsBefore);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.params).toEqual({
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: ROLE,
      RoleSessionName: `tenant-${a.tenantId}`,
      'Tags.member.1.Key': 'tenant_id',
      'Tags.member.1.Value': a.tenantId,
      'TransitiveTagKeys.member.1': 'tenant_id',
      DurationSeconds: '3600',
    });

    const mine = dynamo.slice(from);
    const service = mine.filter((c) => c.accessKey === 'local');
    const scoped = mine.filter((c) => c.accessKey !== 'local');
    // the function's own credentials: the API key lookup and the projected account read, nothing else
    for (const c of service) {
      expect(c.target, JSON.stringify(c.body)).toBe('GetItem');
      const pk = c.body.Key.pk.S as string;
      if (pk.startsWith('T#')) {
        expect(c.body.Key.sk.S).toBe('TENANT');
        expect(c.body.ProjectionExpression).toBeTruthy();
      } else expect(pk).toMatch(/^KEY#/);
    }
    expect(service.length).toBe(4); // two requests: key lookup + account read each
    // and, on the same credentials, the role's shared session: looked up once (none yet), then left for the role's other containers
    await vi.waitFor(() => expect(sessionStore.filter((c) => pkOf(c)[0] === `TSESSION#secrets-api-tenant-access#${a.tenantId}`).map((c) => [c.target, c.accessKey])).toEqual([['GetItem', 'local'], ['PutItem', 'local']]));
    expect(scoped.length).toBeGreaterThan(4);
    for (const c of scoped) {
      expect(c.accessKey, c.target).toBe(keyFor(a.tenantId));
      expect(c.token).toBe(`token-${a.tenantId}`);
      // the account's partition, or its metering partition for the limiter's writes
      for (const pk of pkOf(c)) expect([`T#${a.tenantId}`, `METER#${a.tenantId}`], c.target).toContain(pk);
    }
    expect(scoped.map((c) => c.target)).toEqual(expect.arrayContaining(['TransactWriteItems', 'GetItem', 'UpdateItem']));
    // each request's limiter write (the usage count of the day, with the bucket) went to the metering partition under the tenant's session
    const metered = scoped.filter((c) => c.target === 'UpdateItem' && pkOf(c)[0] === `METER#${a.tenantId}`);
    expect(metered).toHaveLength(2);
    for (const c of metered) expect(c.body.Key.sk.S).toMatch(/^USAGE#\d{4}-\d\d-\d\d(#\d+)?$/);
  });

  it('a read-only route writes only its metering partition; the usage report reads it back with the tenant session', async () => {
    const { list } = await import('../../functions/secrets/secrets.js');
    const { usage } = await import('../../functions/account/usage.js');
    const { updatedAttributes, isMeteringAttribute } = await import('../../lib/tenancy/meter.js');
    // a per-credential limit below the account's: the credential's bucket is taken too
    const a = await newTenant({ requests_per_minute: 6000, requests_per_minute_per_credential: 100 });
    const from = dynamo.length;
    for (let i = 0; i < 3; i++) expect((await list(event('GET', '/api/v1/secrets', a.key, null), context)).statusCode).toBe(200);
    const calls = dynamo.slice(from);
    const writes = calls.filter((c) => ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem'].includes(c.target));
    // the account bucket on the first two requests (the second leases 2 tokens: the third spends
    // one, lib/ratelimit/bucket.ts) and the credential bucket (100 a minute: no lease) on each, nothing else written
    expect(writes).toHaveLength(5);
    for (const c of writes) {
      expect(c.target).toBe('UpdateItem');
      expect(c.accessKey).toBe(keyFor(a.tenantId));
      expect(pkOf(c)).toEqual([`METER#${a.tenantId}`]);
      // every attribute the write names is one TenantMeter's dynamodb:Attributes condition allows
      const named = updatedAttributes(c.body);
      expect(named, JSON.stringify(c.body)).toBeDefined();
      for (const attr of named!) expect(isMeteringAttribute(attr), attr).toBe(true);
    }
    expect(writes.some((c) => Object.values(c.body.ExpressionAttributeNames ?? {}).some((n) => String(n).startsWith('rl_api_key:')))).toBe(true);

    const before = dynamo.length;
    const res = await usage(event('GET', '/api/v1/usage', a.key, null), context);
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).data.requests.today).toBe(4); // the three lists and this request (its write counts the third, admitted from the lease)
    const report = dynamo.slice(before).filter((c) => c.target === 'Query' && pkOf(c)[0] === `METER#${a.tenantId}`);
    expect(report).toHaveLength(1);
    expect(report[0]!.accessKey).toBe(keyFor(a.tenantId));
  });

  it('a refused request (a suspended account) leaves no shared session: sealing and writing wait for admission', async () => {
    const { list } = await import('../../functions/secrets/secrets.js');
    const { serviceDb, tableName } = await import('../../lib/store/client.js');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const a = await newTenant();
    await serviceDb().send(
      new UpdateCommand({ TableName: tableName(), Key: { pk: `T#${a.tenantId}`, sk: 'TENANT' }, UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': 'suspended' } }),
    );
    // the local keyring announces each KMS request it stands in for (lib/crypto/envelope.ts)
    const kms: { operation: string; context: Record<string, string> }[] = [];
    const seen = (m: unknown) => kms.push(m as (typeof kms)[number]);
    subscribe('secrets-api:local-kms', seen);
    try {
      const res = await list(event('GET', '/api/v1/secrets', a.key, null), context);
      expect(res.statusCode, res.body).toBe(403);
      await new Promise((ok) => setTimeout(ok, 300));
    } finally {
      unsubscribe('secrets-api:local-kms', seen);
    }
    const mine = sessionStore.filter((c) => pkOf(c)[0] === `TSESSION#secrets-api-tenant-access#${a.tenantId}`);
    // the session was looked for (the speculative run needed it) ...
    expect(mine.map((c) => c.target)).toEqual(['GetItem']);
    // ... but not sealed: no data key for it
    expect(kms.filter((k) => k.context.purpose === 'tenant-session')).toEqual([]);
  });

  it('each tenant gets its own session; a session is reused until near expiry', async () => {
    const { withTenant } = await import('../../lib/tenancy/scope.js');
    const { db, tableName } = await import('../../lib/store/client.js');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { assumedSessions } = await import('../../lib/tenancy/credentials.js');
    const [a, b] = await Promise.all([newTenant(), newTenant()]);
    const before = assumedSessions();
    const from = dynamo.length;
    for (const t of [a, b, a, b]) await withTenant(t.tenantId, () => db().send(new GetCommand({ TableName: tableName(), Key: { pk: `T#${t.tenantId}`, sk: 'COUNTERS' } })));
    expect(assumedSessions() - before).toBe(2);
    expect(dynamo.slice(from).map((c) => c.accessKey)).toEqual([a, b, a, b].map((t) => keyFor(t.tenantId)));
  });

  it('fails closed: another tenant\'s partition, tenant data before the tenant is known, a scan, another tenant\'s data key', async () => {
    const { withTenant, tenantScope, identifyTenant } = await import('../../lib/tenancy/scope.js');
    const { db, serviceDb, tableName } = await import('../../lib/store/client.js');
    const { DeleteCommand, GetCommand, PutCommand, ScanCommand, QueryCommand, TransactWriteCommand, UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { seal } = await import('../../lib/crypto/envelope.js');
    const { readAccount } = await import('../../lib/store/tenants.js');
    const [a, b] = await Promise.all([newTenant(), newTenant()]);
    const from = dynamo.length;
    const get = (pk: string, sk = 'COUNTERS') => db().send(new GetCommand({ TableName: tableName(), Key: { pk, sk } }));
    await expect(withTenant(a.tenantId, () => get(`T#${b.tenantId}`))).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => get(`T#${a.tenantId}X`))).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => db().send(new ScanCommand({ TableName: tableName() })))).rejects.toThrow(/outside tenant/);
    await expect(
      withTenant(a.tenantId, () => db().send(new QueryCommand({ TableName: tableName(), IndexName: 'gsi1', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'gsi1pk' }, ExpressionAttributeValues: { ':pk': 'TENANTS#1' } }))),
    ).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => seal({ tenantId: b.tenantId, type: 'secret', id: 'x', version: 1 }, 'v'))).rejects.toThrow(/another tenant's data key/);
    // the metering partition (lib/tenancy/meter.ts, as infra/grants.ts TenantRead/TenantMeter): its own only,
    // read or UpdateItem naming the metering attributes; no put, delete, condition check or other attribute
    const meterA = { pk: `METER#${a.tenantId}`, sk: 'USAGE#2000-01-01' };
    const update = (Key: Record<string, string>, attr: string) =>
      db().send(new UpdateCommand({ TableName: tableName(), Key, UpdateExpression: 'SET #a = :v', ExpressionAttributeNames: { '#a': attr }, ExpressionAttributeValues: { ':v': 1 } }));
    await expect(withTenant(a.tenantId, () => get(`METER#${b.tenantId}`, 'USAGE#2000-01-01'))).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => update({ pk: `METER#${b.tenantId}`, sk: 'USAGE#2000-01-01' }, 'requests'))).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => update(meterA, 'value'))).rejects.toThrow(/outside tenant/);
    await expect(
      withTenant(a.tenantId, () => db().send(new UpdateCommand({ TableName: tableName(), Key: meterA, UpdateExpression: 'SET requests = :v, other = :v', ExpressionAttributeValues: { ':v': 1 } }))),
    ).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => db().send(new PutCommand({ TableName: tableName(), Item: { ...meterA, requests: 1 } })))).rejects.toThrow(/outside tenant/);
    await expect(withTenant(a.tenantId, () => db().send(new DeleteCommand({ TableName: tableName(), Key: meterA })))).rejects.toThrow(/outside tenant/);
    await expect(
      withTenant(a.tenantId, () => db().send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName(), Item: { ...meterA, requests: 1 } } }] }))),
    ).rejects.toThrow(/outside tenant/);
    await withTenant(a.tenantId, () => update(meterA, 'rl_ts'));
    await withTenant(a.tenantId, () => get(meterA.pk, meterA.sk));
    // in a request scope before authentication named the tenant: only credential items and the projected account read
    await tenantScope(async () => {
      await expect(get(`T#${a.tenantId}`)).rejects.toThrow(/outside the tenant's credentials/);
      await expect(get(meterA.pk, meterA.sk)).rejects.toThrow(/outside the tenant's credentials/);
      await expect(serviceDb().send(new GetCommand({ TableName: tableName(), Key: { pk: meterA.pk, sk: 'TENANT' }, ProjectionExpression: 'id' }))).rejects.toThrow(
        /outside the tenant's credentials/,
      );
      await expect(serviceDb().send(new GetCommand({ TableName: tableName(), Key: { pk: `T#${a.tenantId}`, sk: 'TENANT' } }))).rejects.toThrow(/outside the tenant's credentials/);
      expect((await readAccount(a.tenantId))?.id).toBe(a.tenantId);
      identifyTenant(a.tenantId);
      expect(() => identifyTenant(b.tenantId)).toThrow(/two tenants/);
      await get(`T#${a.tenantId}`);
    });
    // nothing refused reached the table
    const reached = dynamo.slice(from);
    expect(reached.map((c) => [c.target, c.accessKey, pkOf(c)[0]])).toEqual([
      ['UpdateItem', keyFor(a.tenantId), `METER#${a.tenantId}`],
      ['GetItem', keyFor(a.tenantId), `METER#${a.tenantId}`],
      ['GetItem', 'local', `T#${a.tenantId}`],
      ['GetItem', keyFor(a.tenantId), `T#${a.tenantId}`],
    ]);
  });

  it('a share read: the owner-side calls use the owner\'s session, only after the share item proved the access; without a share, never', async () => {
    const secrets = await import('../../functions/secrets/secrets.js');
    const shares = await import('../../functions/sharing/shares.js');
    const [owner, recipient, stranger] = await Promise.all([newTenant(), newTenant(), newTenant()]);
    const value = `owner-value-${randomBytes(6).toString('hex')}`;
    const created = await secrets.create(event('POST', '/api/v1/secrets', owner.key, null, { name: `s-${randomBytes(4).toString('hex')}`, data: { value } }), context);
    expect(created.statusCode, created.body).toBe(201);
    const id = JSON.parse(created.body).data.secret.id as string;
    const shared = await shares.create(
      event('POST', '/api/v1/{type}/{id}/shares', owner.key, { type: 'secret', id }, { shared_with_email: recipient.email, permission: 'read' }),
      context,
    );
    expect(shared.statusCode, shared.body).toBe(201);

    const read = async (who: { key: string }) => {
      const from = dynamo.length;
      const stsFrom = sts.length;
      const res = await secrets.get(event('GET', '/api/v1/secrets/{name}', who.key, { name: id }), context);
      return { res, calls: dynamo.slice(from), assumed: sts.slice(stsFrom).map((c) => c.params['Tags.member.1.Value']) };
    };
    const ownerKey = keyFor(owner.tenantId);

    // the recipient: its own scope first (its own lookup by name, the share item), then the owner's session
    const { res, calls } = await read(recipient);
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).data.secret.data.value).toBe(value);
    const shareLookup = calls.findIndex((c) => pkOf(c).includes(`SHAREDWITH#${recipient.email}`));
    const firstOwner = calls.findIndex((c) => c.accessKey === ownerKey);
    expect(shareLookup, 'the share item is read').toBeGreaterThanOrEqual(0);
    expect(calls[shareLookup]!.accessKey, 'with the recipient\'s session').toBe(keyFor(recipient.tenantId));
    expect(firstOwner, 'the owner\'s session is used').toBeGreaterThan(shareLookup);
    for (const c of calls) {
      const pks = pkOf(c);
      if (c.accessKey === ownerKey) {
        expect(c.token).toBe(`token-${owner.tenantId}`);
        for (const pk of pks) expect(pk, c.target).toBe(`T#${owner.tenantId}`);
      } else if (c.accessKey === keyFor(recipient.tenantId)) {
        // its own partition, the share item, and its own metering partition (the request is metered to the caller, never the owner)
        for (const pk of pks) expect(pk === `T#${recipient.tenantId}` || pk === `METER#${recipient.tenantId}` || pk.startsWith('SHAREDWITH#'), `${c.target} ${pk}`).toBe(true);
      } else {
        // the function's own credentials: the key lookup and the projected account reads (the recipient's, the owner's status)
        expect(c.accessKey).toBe('local');
        expect(c.target).toBe('GetItem');
        if (pks[0]!.startsWith('T#')) expect(c.body.ProjectionExpression, pks[0]).toBeTruthy();
      }
    }
    // the owner's session was entered for the owner-side reads (the head item, the data key) and left: nothing of the recipient's after it
    const after = calls.slice(firstOwner);
    expect(after.every((c) => c.accessKey === ownerKey), JSON.stringify(after.map((c) => [c.target, c.accessKey]))).toBe(true);

    // no share: the same 404 as before, and the owner's session is never used nor assumed
    const none = await read(stranger);
    expect(none.res.statusCode, none.res.body).toBe(404);
    expect(none.res.body).not.toContain(value);
    expect(none.calls.some((c) => c.accessKey === ownerKey)).toBe(false);
    expect(none.calls.some((c) => pkOf(c).includes(`T#${owner.tenantId}`) && c.body.ProjectionExpression === undefined)).toBe(false);
    expect(none.assumed).not.toContain(owner.tenantId);
  });

  it('a temporary access link (GET /api/v1/t/{token}): the token item and the per-IP limiter on the function\'s own credentials, every later call with the session of the account the token names', async () => {
    const secrets = await import('../../functions/secrets/secrets.js');
    const temp = await import('../../functions/sharing/temp-access.js');
    const [owner, other] = await Promise.all([newTenant(), newTenant()]);
    const value = `temp-value-${randomBytes(6).toString('hex')}`;
    const created = await secrets.create(event('POST', '/api/v1/secrets', owner.key, null, { name: `s-${randomBytes(4).toString('hex')}`, data: { value } }), context);
    expect(created.statusCode, created.body).toBe(201);
    const id = JSON.parse(created.body).data.secret.id as string;
    const link = await temp.create(event('POST', '/api/v1/{type}/{id}/temp-access', owner.key, { type: 'secret', id }, { duration_seconds: 600 }), context);
    expect(link.statusCode, link.body).toBe(201);
    const token = JSON.parse(link.body).data.token as string;

    const from = dynamo.length;
    const redeem = { ...event('GET', '/api/v1/t/{token}', '', { token }), headers: {} } as APIGatewayProxyEvent;
    const res = await temp.redeem(redeem, context);
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).data.data.value).toBe(value);
    const calls = dynamo.slice(from);
    const service = calls.filter((c) => c.accessKey === 'local');
    const scoped = calls.filter((c) => c.accessKey !== 'local');
    // before the token named the account: its TEMPTOKEN# item and the source IP's limiter, nothing of any account
    expect(service.length, 'the token lookup').toBeGreaterThan(0);
    for (const c of service) {
      const pk = pkOf(c)[0]!;
      expect(c.target, JSON.stringify(c.body)).toBe(pk.startsWith('IP#') ? 'UpdateItem' : 'GetItem');
      expect(pk, c.target).toMatch(/^(TEMPTOKEN|IP)#/);
    }
    // then the owner's session only: its partition, its metering partition, its own lookup items
    expect(scoped.map((c) => c.target)).toEqual(expect.arrayContaining(['GetItem', 'TransactWriteItems']));
    for (const c of scoped) {
      expect(c.accessKey, c.target).toBe(keyFor(owner.tenantId));
      for (const pk of pkOf(c)) expect(pk === `T#${owner.tenantId}` || pk === `METER#${owner.tenantId}` || pk.startsWith('TEMPTOKEN#'), `${c.target} ${pk}`).toBe(true);
    }
    expect(calls.some((c) => c.accessKey === keyFor(other.tenantId) || pkOf(c).includes(`T#${other.tenantId}`))).toBe(false);
    // a token never issued: 404 with nothing but the lookup, no session of any account
    const stsFrom = sts.length;
    const before = dynamo.length;
    const unknown = await temp.redeem({ ...redeem, pathParameters: { token: `sct_${'A'.repeat(43)}` } } as APIGatewayProxyEvent, context);
    expect(unknown.statusCode, unknown.body).toBe(404);
    expect(sts.slice(stsFrom)).toEqual([]);
    for (const c of dynamo.slice(before)) expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe('local');
  });

  it('the payment webhook (POST /webhooks/{payment_provider}): the per-IP limiter on the function\'s own credentials, and nothing else; the verified event\'s account in its session', async () => {
    const { receive } = await import('../../functions/billing/webhooks.js');
    const { paymentSecrets } = await import('../../lib/billing/secrets.js');
    const { providerEvent, signEvent } = await import('../../lib/billing/local.js');
    const [a, other] = await Promise.all([newTenant(), newTenant()]);
    const secrets = await paymentSecrets({ PAYMENT_SECRET_FILE: process.env.PAYMENT_SECRET_FILE, PAYMENT_SECRET_ID: undefined, AWS_REGION: 'us-east-1' });
    const subscription = { id: `sub_${randomBytes(4).toString('hex')}`, object: 'subscription', customer: 'cus_t', status: 'active', metadata: { tenant_id: a.tenantId, plan: 'team' }, items: { object: 'list', data: [] } };
    const d = signEvent(providerEvent('customer.subscription.updated', subscription), secrets);
    const from = dynamo.length;
    const webhook = {
      ...event('POST', '/webhooks/{payment_provider}', '', { payment_provider: 'local' }),
      headers: { 'Content-Type': 'application/json', 'Stripe-Signature': d.signature },
      body: d.body,
    } as APIGatewayProxyEvent;
    const res = await receive(webhook, context);
    expect(res.statusCode, res.body).toBe(200);
    expect(JSON.parse(res.body).data).toMatchObject({ outcome: 'applied', plan: 'team' });
    const calls = dynamo.slice(from);
    // the function's own credentials: the source IP's limiter only, no read of any item
    for (const c of calls.filter((x) => x.accessKey === 'local')) expect([c.target, pkOf(c)[0]?.replace(/#.*/, '#')], JSON.stringify(c.body)).toEqual(['UpdateItem', 'IP#']);
    const scoped = calls.filter((c) => c.accessKey !== 'local');
    expect(scoped.map((c) => c.target)).toEqual(expect.arrayContaining(['GetItem', 'TransactWriteItems']));
    for (const c of scoped) {
      expect(c.accessKey, c.target).toBe(keyFor(a.tenantId));
      for (const pk of pkOf(c)) expect([`T#${a.tenantId}`, `METER#${a.tenantId}`], `${c.target} ${pk}`).toContain(pk);
    }
    expect(calls.some((c) => c.accessKey === keyFor(other.tenantId))).toBe(false);
  });

  it('the workers act in the session of the account their message or listing entry names: webhook delivery, extraction job, certificate expiry sweep, lease sweep', async () => {
    const { processMessage } = await import('../../lib/events/delivery.js');
    const { runExtractionJob } = await import('../../lib/tools/extraction.js');
    const { sweep } = await import('../../functions/certificates/expiry.js');
    const { sweepExpiredLeases } = await import('../../lib/database/sweeper.js');
    const { db, tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const a = await newTenant();
    const own = keyFor(a.tenantId);
    const inAccount = (calls: DynamoCall[]) => {
      for (const c of calls.filter((x) => pkOf(x).some((pk) => pk === `T#${a.tenantId}`))) expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe(own);
    };
    const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('the queue is not used for an acknowledged message')) });

    // a webhook message naming the account (its webhook unknown: acknowledged after reading the account's partition)
    let from = dynamo.length;
    const message = { v: 1, tenant_id: a.tenantId, webhook_id: 'wh_none', event: { id: 'evt_1', type: 'secret.created', timestamp: new Date().toISOString(), data: {} } };
    expect(await processMessage(unused as never, { messageId: 'm1', body: JSON.stringify(message), receiptHandle: 'r', receiveCount: 1 }, 'lambda')).toBe(true);
    let calls = dynamo.slice(from);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe(own);

    // an extraction job message naming the account (no such job: a no-op, read in its session)
    from = dynamo.length;
    await runExtractionJob({ tenant_id: a.tenantId, job_id: 'job_none' });
    calls = dynamo.slice(from);
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe(own);

    // the certificate expiry sweep: the TENANTS listing on the worker's own credentials (index plat only), each account in its session
    from = dynamo.length;
    await sweep();
    calls = dynamo.slice(from);
    for (const c of calls.filter((x) => x.accessKey === 'local')) {
      expect([c.target, c.body.IndexName], JSON.stringify(c.body)).toEqual(['Query', 'plat']);
      expect(c.body.ExpressionAttributeValues[':pk'].S, c.target).toMatch(/^TENANTS#\d+$/);
    }
    expect(calls.some((c) => c.accessKey === own)).toBe(true);
    inAccount(calls);

    // the lease sweep: a due entry whose lease is already revoked (a stale entry): the LEASES
    // listing on the worker's own credentials; the lease read and its touch (for the relay to
    // unlist it) in the account's session, which never names platpk or platsk
    const id = `lease-${randomBytes(4).toString('hex')}`;
    const past = new Date(Date.now() - 60_000).toISOString();
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.lease(a.tenantId, id),
          ...keys.leaseExpiryIndex(a.tenantId, id, past),
          id,
          tenant_id: a.tenantId,
          role_id: 'role_none',
          role_name: 'reader',
          connection_id: 'conn_none',
          engine: 'postgresql',
          username: 'v_reader',
          status: 'revoked',
          revocation_statements: [],
          created_at: past,
          expires_at: past,
          ttl_seconds: 60,
          issued_by: 'an earlier release',
        },
      }),
    );
    from = dynamo.length;
    const report = await sweepExpiredLeases({ tenantIds: [a.tenantId] });
    expect(report.failed).toEqual([]);
    calls = dynamo.slice(from);
    for (const c of calls.filter((x) => x.accessKey === 'local')) {
      expect([c.target, c.body.IndexName], JSON.stringify(c.body)).toEqual(['Query', 'plat']);
      expect(c.body.ExpressionAttributeValues[':pk'].S, c.target).toMatch(/^LEASES#\d+$/);
    }
    const touch = calls.find((c) => c.target === 'UpdateItem' && pkOf(c)[0] === `T#${a.tenantId}`);
    expect(touch?.accessKey, 'the stale lease is touched in the account\'s session').toBe(own);
    expect(JSON.stringify(touch!.body)).not.toMatch(/platpk|platsk/);
    inAccount(calls);
  });

  it('the agent\'s device authorization (RFC 8628): the device, token and enrol endpoints touch only their own global items on the function\'s credentials, naming no account; once the approved authorization names it, the account\'s session', async () => {
    const agents = await import('../../functions/agents/oauth.js');
    const profiles = await import('../../functions/agents/profiles.js');
    const { generateDeviceKey } = await import('../../scripts/agent-client.js');
    const [a, other] = await Promise.all([newTenant(), newTenant()]);
    const own = keyFor(a.tenantId);
    const profileId = randomUUID();
    const put = await profiles.put(event('PUT', '/api/v1/agents/profiles/{id}', a.key, { id: profileId }, { name: 'ci', enabled: true, grants: [] }), context);
    expect(put.statusCode, put.body).toBe(201);
    const anonymous = (method: string, resource: string, body: unknown) => ({ ...event(method, resource, '', null, body), headers: { 'Content-Type': 'application/json' } }) as APIGatewayProxyEvent;
    const ownItems = (calls: DynamoCall[], prefixes: RegExp) => {
      for (const c of calls) {
        expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe('local');
        for (const pk of pkOf(c)) expect(pk, c.target).toMatch(prefixes);
        // no write of the function's own credentials names an account
        expect(JSON.stringify(c.body), c.target).not.toMatch(/"tenant_id"|"T#/);
      }
    };

    // the device asks: its pending codes only, naming no account
    let from = dynamo.length;
    const started = await agents.device(anonymous('POST', '/api/v1/agent/oauth/device', { name: 'laptop', public_key: generateDeviceKey('ed25519').publicJwk, profile_id: profileId }), context);
    expect(started.statusCode, started.body).toBe(200);
    const auth = JSON.parse(started.body) as { device_code: string; user_code: string };
    ownItems(dynamo.slice(from), /^(DEVAUTHZ|USERCODE|IP)#/);
    // a poll before the decision: the authorization and the per-IP limiter
    const poll = () => agents.token(anonymous('POST', '/api/v1/agent/oauth/token', { device_code: auth.device_code, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }), context);
    from = dynamo.length;
    expect(JSON.parse((await poll()).body).error).toBe('authorization_pending');
    ownItems(dynamo.slice(from), /^(DEVAUTHZ|IP)#/);

    const approved = await agents.approve(event('POST', '/api/v1/agents/oauth/approve', a.key, null, { user_code: auth.user_code, decision: 'approve' }), context);
    expect(approved.statusCode, approved.body).toBe(200);

    // the token: the authorization read on the function's credentials, its issue in the approver's account's session
    from = dynamo.length;
    const token = await poll();
    expect(token.statusCode, token.body).toBe(200);
    let calls = dynamo.slice(from);
    ownItems(calls.filter((c) => c.accessKey === 'local'), /^(DEVAUTHZ|IP)#/);
    const issued = calls.filter((c) => c.accessKey !== 'local');
    expect(issued.map((c) => c.target)).toContain('TransactWriteItems');
    for (const c of issued) {
      expect(c.accessKey, c.target).toBe(own);
      for (const pk of pkOf(c)) expect(pk, c.target).toMatch(/^(DEVAUTHZ|ENROLL|METER)#/);
    }

    // the enrolment: the token and its authorization read on the function's credentials, the device made in the account's session
    from = dynamo.length;
    const enrolled = await agents.enroll(anonymous('POST', '/api/v1/agent/oauth/enroll', { enrollment_token: JSON.parse(token.body).access_token }), context);
    expect(enrolled.statusCode, enrolled.body).toBe(201);
    expect(JSON.parse(enrolled.body).data.tenant_id).toBe(a.tenantId);
    calls = dynamo.slice(from);
    ownItems(calls.filter((c) => c.accessKey === 'local'), /^(ENROLL|DEVAUTHZ|IP)#/);
    const made = calls.filter((c) => c.accessKey !== 'local');
    expect(made.map((c) => c.target)).toEqual(expect.arrayContaining(['GetItem', 'TransactWriteItems']));
    for (const c of made) {
      expect(c.accessKey, c.target).toBe(own);
      for (const pk of pkOf(c)) expect(pk === `T#${a.tenantId}` || pk === `METER#${a.tenantId}` || /^(DEVICE|DEVAUTHZ|ENROLL)#/.test(pk), `${c.target} ${pk}`).toBe(true);
    }
    expect(dynamo.slice(from).some((c) => c.accessKey === keyFor(other.tenantId) || pkOf(c).includes(`T#${other.tenantId}`))).toBe(false);
  });

  it('a CLI login\'s start (POST /api/v1/auth/cli/login): its pending login and user code only, on the function\'s credentials, naming no account', async () => {
    const cli = await import('../../functions/auth/cli.js');
    const from = dynamo.length;
    const started = await cli.start({ ...event('POST', '/api/v1/auth/cli/login', '', null, { name: 'laptop' }), headers: { 'Content-Type': 'application/json' } } as APIGatewayProxyEvent, context);
    expect(started.statusCode, started.body).toBe(200);
    expect(JSON.parse(started.body).user_code).toEqual(expect.any(String));
    const calls = dynamo.slice(from);
    expect(calls.map((c) => c.target)).toContain('TransactWriteItems');
    for (const c of calls) {
      expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe('local');
      for (const pk of pkOf(c)) expect(pk, c.target).toMatch(/^(CLILOGIN|CLICODE|IP)#/);
      expect(JSON.stringify(c.body), c.target).not.toMatch(/"tenant_id"|"T#/);
    }
  });

  it('a CLI login\'s decision and token (GET /api/v1/auth/cli/login?user_code, POST /api/v1/auth/cli/token): the decision in the approver\'s session (its mark on the login), the poll on the function\'s credentials until the approved login names the account, the session opened in that account\'s session', async () => {
    const cli = await import('../../functions/auth/cli.js');
    const { openSession } = await import('../../lib/users/sessions.js');
    const { getTenant } = await import('../../lib/store/tenants.js');
    const { getUser } = await import('../../lib/users/users.js');
    const [a, other] = await Promise.all([newTenant(), newTenant()]);
    const own = keyFor(a.tenantId);
    const signIn = await openSession((await getTenant(a.tenantId))!, (await getUser(a.tenantId, a.email))!, 'password', { requestId: 'r', sourceIp: null, userAgent: 'test' });
    const anonymous = (method: string, resource: string, body: unknown) => ({ ...event(method, resource, '', null, body), headers: { 'Content-Type': 'application/json' } }) as APIGatewayProxyEvent;
    const onOwnCredentials = (calls: DynamoCall[], prefixes: RegExp) => {
      for (const c of calls) {
        expect(c.accessKey, `${c.target} ${pkOf(c)}`).toBe('local');
        for (const pk of pkOf(c)) expect(pk, c.target).toMatch(prefixes);
        expect(JSON.stringify(c.body), c.target).not.toMatch(/"tenant_id"|"T#/);
      }
    };
    // the start (GET, no user_code): its pending items only, naming no account
    let from = dynamo.length;
    const started = await cli.login({ ...anonymous('GET', '/api/v1/auth/cli/login', undefined), queryStringParameters: { name: 'laptop' } } as APIGatewayProxyEvent, context);
    expect(started.statusCode, started.body).toBe(200);
    const { device_code, user_code } = JSON.parse(started.body) as { device_code: string; user_code: string };
    onOwnCredentials(dynamo.slice(from), /^(CLILOGIN|CLICODE|IP)#/);
    const poll = () => cli.token(anonymous('POST', '/api/v1/auth/cli/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code }), context);
    from = dynamo.length;
    expect(JSON.parse((await poll()).body).error).toBe('authorization_pending');
    onOwnCredentials(dynamo.slice(from), /^(CLILOGIN|IP)#/);

    // an API key may not decide: refused before anything of the table is read
    from = dynamo.length;
    const byKey = await cli.login({ ...event('GET', '/api/v1/auth/cli/login', a.key, null), queryStringParameters: { user_code, decision: 'approve' } } as APIGatewayProxyEvent, context);
    expect(byKey.statusCode, byKey.body).toBe(403);
    onOwnCredentials(dynamo.slice(from), /^IP#/);

    // the decision: in the approver's account's session, the login marked with its owner mark
    from = dynamo.length;
    const decided = await cli.login({ ...event('GET', '/api/v1/auth/cli/login', signIn.access_token, null), queryStringParameters: { user_code, decision: 'approve' } } as APIGatewayProxyEvent, context);
    expect(decided.statusCode, decided.body).toBe(200);
    let calls = dynamo.slice(from);
    // on the function's credentials: the per-IP limiter, and authentication's projected account read (AccountRead)
    const accountRead = (c: DynamoCall) => c.target === 'GetItem' && c.body.Key?.pk?.S === `T#${a.tenantId}` && c.body.Key?.sk?.S === 'TENANT' && !!c.body.ProjectionExpression;
    expect(calls.filter((c) => c.accessKey === 'local' && accountRead(c))).toHaveLength(1);
    onOwnCredentials(calls.filter((c) => c.accessKey === 'local' && !accountRead(c)), /^IP#/);
    const decision = calls.filter((c) => c.accessKey !== 'local');
    expect(decision.map((c) => c.target)).toContain('TransactWriteItems');
    for (const c of decision) {
      expect(c.accessKey, c.target).toBe(own);
      for (const pk of pkOf(c)) expect(pk === `T#${a.tenantId}` || pk === `METER#${a.tenantId}` || /^(CLILOGIN|CLICODE)#/.test(pk), `${c.target} ${pk}`).toBe(true);
    }
    expect(JSON.stringify(decision.find((c) => c.target === 'TransactWriteItems')!.body)).toContain(`T#${a.tenantId}`);

    // the token: the login read on the function's credentials, the session opened in the account's session
    from = dynamo.length;
    const tokens = await poll();
    expect(tokens.statusCode, tokens.body).toBe(200);
    calls = dynamo.slice(from);
    onOwnCredentials(calls.filter((c) => c.accessKey === 'local'), /^(CLILOGIN|IP)#/);
    const opened = calls.filter((c) => c.accessKey !== 'local');
    expect(opened.map((c) => c.target)).toContain('TransactWriteItems');
    for (const c of opened) {
      expect(c.accessKey, c.target).toBe(own);
      for (const pk of pkOf(c)) expect(pk === `T#${a.tenantId}` || pk === `METER#${a.tenantId}` || /^(CLILOGIN|REFRESH)#/.test(pk), `${c.target} ${pk}`).toBe(true);
    }
    expect(dynamo.slice(from).some((c) => c.accessKey === keyFor(other.tenantId) || pkOf(c).includes(`T#${other.tenantId}`))).toBe(false);
  });

  it('the sign-in steps (passkey and SRP password): the first step in the session of the account the request names; the second reads its challenge on the function\'s credentials and spends it in the session of the account the challenge names', async () => {
    const webauthn = await import('../../functions/auth/webauthn.js');
    const zkp = await import('../../functions/auth/zkp.js');
    const [a, other] = await Promise.all([newTenant(), newTenant()]);
    const own = keyFor(a.tenantId);
    const anonymous = (resource: string, body: unknown) => ({ ...event('POST', resource, '', null, body), headers: { 'Content-Type': 'application/json' } }) as APIGatewayProxyEvent;
    // on the function's credentials: the per-IP limiter and the challenge read, naming nothing
    const onOwn = (calls: DynamoCall[], challenge: RegExp) => {
      for (const c of calls.filter((x) => x.accessKey === 'local')) {
        for (const pk of pkOf(c)) expect(pk, `${c.target} ${pk}`).toMatch(challenge);
        if (c.target !== 'GetItem') expect(pkOf(c)[0], c.target).toMatch(/^IP#/);
      }
    };
    const inSession = (calls: DynamoCall[], lookups: RegExp) => {
      const session = calls.filter((c) => c.accessKey !== 'local');
      expect(session.length).toBeGreaterThan(0);
      for (const c of session) {
        expect(c.accessKey, c.target).toBe(own);
        for (const pk of pkOf(c)) expect(pk === `T#${a.tenantId}` || pk === `METER#${a.tenantId}` || lookups.test(pk), `${c.target} ${pk}`).toBe(true);
      }
    };

    let from = dynamo.length;
    const begun = await webauthn.authenticationBegin(anonymous('/api/v1/auth/webauthn/authentication/begin', { tenant_id: a.tenantId, email: a.email }), context);
    expect(begun.statusCode, begun.body).toBe(200);
    onOwn(dynamo.slice(from), /^IP#/);
    inSession(dynamo.slice(from), /^WACHAL#/);
    const challengeId = JSON.parse(begun.body).data.challenge_id as string;
    from = dynamo.length;
    const credential = { id: 'A'.repeat(22), rawId: 'A'.repeat(22), type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' }, clientExtensionResults: {} };
    const finished = await webauthn.authenticationFinish(anonymous('/api/v1/auth/webauthn/authentication/finish', { challenge_id: challengeId, response: credential }), context);
    expect(finished.statusCode, finished.body).toBe(401);
    onOwn(dynamo.slice(from), /^(WACHAL|IP)#/);
    inSession(dynamo.slice(from), /^WACHAL#/);

    from = dynamo.length;
    const step1 = await zkp.verify(anonymous('/api/v1/auth/zkp/verify', { tenant_id: a.tenantId, email: a.email, client_public: '0'.repeat(511) + '2', srp_version: 2 }), context);
    expect(step1.statusCode, step1.body).toBe(200);
    onOwn(dynamo.slice(from), /^IP#/);
    inSession(dynamo.slice(from), /^SRPCHAL#/);
    from = dynamo.length;
    const step2 = await zkp.verify(anonymous('/api/v1/auth/zkp/verify', { challenge_id: JSON.parse(step1.body).data.challenge_id, client_proof: '0'.repeat(64) }), context);
    expect(step2.statusCode, step2.body).toBe(401);
    onOwn(dynamo.slice(from), /^(SRPCHAL|IP)#/);
    inSession(dynamo.slice(from), /^SRPCHAL#/);
    expect(sts.some((c) => Object.values(c.params).includes(other.tenantId))).toBe(false);
  });

  it('a refresh (POST /api/v1/auth/refresh): the refresh item read on the function\'s credentials, everything else in the session of the account it names; a forged item naming another account gets 401', async () => {
    const sessions = await import('../../functions/auth/sessions.js');
    const { openSession } = await import('../../lib/users/sessions.js');
    const { getTenant } = await import('../../lib/store/tenants.js');
    const { getUser } = await import('../../lib/users/users.js');
    const { tableName } = await import('../../lib/store/client.js');
    const { DynamoDBDocumentClient, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
    const { keys } = await import('../../lib/store/keys.js');
    const { ownerMark } = await import('../../lib/tenancy/lookups.js');
    const { createHash } = await import('node:crypto');
    const [a, other] = await Promise.all([newTenant(), newTenant()]);
    const opened = async (t: { tenantId: string; email: string }) =>
      openSession((await getTenant(t.tenantId))!, (await getUser(t.tenantId, t.email))!, 'password', { requestId: 'r', sourceIp: null, userAgent: 'test' });
    const [mine, theirs] = await Promise.all([opened(a), opened(other)]);
    const refresh = (token: string) => sessions.refresh({ ...event('POST', '/api/v1/auth/refresh', '', null, { refresh_token: token }), headers: { 'Content-Type': 'application/json' } } as APIGatewayProxyEvent, context);

    let from = dynamo.length;
    const r = await refresh(mine.refresh_token);
    expect(r.statusCode, r.body).toBe(200);
    const calls = dynamo.slice(from);
    for (const c of calls.filter((x) => x.accessKey === 'local')) {
      for (const pk of pkOf(c)) expect(pk, c.target).toMatch(/^(REFRESH|IP)#/);
      expect(c.target, `${c.target} ${pkOf(c)}`).toMatch(/^(GetItem|UpdateItem)$/);
      if (c.target === 'UpdateItem') expect(pkOf(c)[0]).toMatch(/^IP#/);
    }
    const session = calls.filter((c) => c.accessKey !== 'local');
    expect(session.map((c) => c.target)).toContain('TransactWriteItems');
    for (const c of session) {
      expect(c.accessKey, c.target).toBe(keyFor(a.tenantId));
      for (const pk of pkOf(c)) expect(pk === `T#${a.tenantId}` || pk === `METER#${a.tenantId}` || pk.startsWith('REFRESH#'), `${c.target} ${pk}`).toBe(true);
    }

    // a refresh item naming the other account and its live session, unmarked or marked by this
    // account's session (what IAM lets any session or the route's own role write): 401, and the
    // other account's session is never assumed
    const raw = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', endpoint: process.env.DYNAMODB_ENDPOINT!, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
    const theirSession = theirs.session_id;
    for (const mark of [{}, { [ownerMark(a.tenantId)]: true }]) {
      const forged = `scr_${randomBytes(32).toString('base64url')}`;
      const hash = createHash('sha256').update(forged, 'utf8').digest('hex');
      await raw.send(new PutCommand({ TableName: tableName(), Item: { ...keys.refreshToken(hash), tenant_id: other.tenantId, session_id: theirSession, used: false, created_at: new Date().toISOString(), ...mark } }));
      from = dynamo.length;
      const stsFrom = sts.length;
      const res = await refresh(forged);
      expect(res.statusCode, res.body).toBe(401);
      expect(dynamo.slice(from).some((c) => c.accessKey === keyFor(other.tenantId) || pkOf(c).includes(`T#${other.tenantId}`))).toBe(false);
      expect(sts.slice(stsFrom).some((c) => Object.values(c.params).includes(other.tenantId))).toBe(false);
    }
  });

  it('the outbox relay: each record\'s account in that account\'s session (outbox, webhooks, chain sealing, lease read); its own credentials only set the listings\' keys', async () => {
    const { relayRecords } = await import('../../lib/events/relay.js');
    const { db, tableName } = await import('../../lib/store/client.js');
    const { keys } = await import('../../lib/store/keys.js');
    const { newId } = await import('../../lib/ids.js');
    const { PutCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const a = await newTenant();
    const own = keyFor(a.tenantId);
    const put = (Item: Record<string, unknown>) => db().send(new PutCommand({ TableName: tableName(), Item }));
    const get = async (key: { pk: string; sk: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key }))).Item;
    const outbox = { pk: `T#${a.tenantId}`, sk: `${keys.outboxPrefix}${newId()}` };
    await put({ ...outbox, id: 'evt_relay', type: 'secret.created', occurred_at: new Date().toISOString(), data: {} });
    const auditId = newId();
    await put(auditEntryItem(a.tenantId, auditId, new Date().toISOString()));
    const leaseId = `lease-${randomBytes(4).toString('hex')}`;
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const lease = keys.lease(a.tenantId, leaseId);
    await put({ ...lease, id: leaseId, tenant_id: a.tenantId, status: 'active', expires_at: expires });
    const record = (eventName: string, key: { pk: string; sk: string }, seq: string) => ({ eventName, dynamodb: { Keys: { pk: { S: key.pk }, sk: { S: key.sk } }, SequenceNumber: seq } });

    const from = dynamo.length;
    const out = await relayRecords([record('INSERT', outbox, '1'), record('INSERT', keys.audit(a.tenantId, auditId), '2'), record('INSERT', lease, '3')]);
    expect(out).toMatchObject({ batchItemFailures: [], events: 1, sealed: 1 });
    const calls = dynamo.slice(from);
    expect(calls.some((c) => c.accessKey === own)).toBe(true);
    for (const c of calls) {
      for (const pk of pkOf(c)) expect(pk, `${c.target} ${c.accessKey}`).toBe(`T#${a.tenantId}`);
      if (c.accessKey === own) continue;
      // the relay's own credentials: an UpdateItem naming the listing keys and nothing else
      expect(c.accessKey, `${c.target} ${JSON.stringify(c.body)}`).toBe('local');
      expect(c.target).toBe('UpdateItem');
      expect(c.body.UpdateExpression).toBe('SET platpk = :lpk, platsk = :lsk');
      expect(c.body.ConditionExpression).toBe('attribute_exists(pk)');
      expect(c.body.ExpressionAttributeNames).toBeUndefined();
    }
    expect(calls.filter((c) => c.accessKey === 'local').length, 'the audit entry and the lease listed').toBe(2);
    // what the session did: the outbox item gone, the entry sealed; what the relay did: both listed
    expect(await get(outbox)).toBeUndefined();
    const entry = await get(keys.audit(a.tenantId, auditId));
    expect(entry?.chain).toMatchObject({ seq: 1 });
    expect(entry).toMatchObject(keys.auditIndex(auditId));
    expect(await get(lease)).toMatchObject(keys.leaseExpiryIndex(a.tenantId, leaseId, expires));
  });

  it('ownerScope: nested, narrow, and refused before authentication named the request\'s tenant', async () => {
    const { ownerScope, tenantScope, identifyTenant, currentScope } = await import('../../lib/tenancy/scope.js');
    // outside a scope (workers, operator routes): just runs
    expect(ownerScope('o', () => currentScope())).toBeUndefined();
    await tenantScope(async () => {
      expect(() => ownerScope('o', () => 1)).toThrow(/authenticated request/);
      identifyTenant('r');
      expect(ownerScope('r', () => currentScope()?.tenantId)).toBe('r');
      expect(() => ownerScope('', () => 1)).toThrow(/needs a tenant id/);
      const inside = await ownerScope('o', async () => {
        await Promise.resolve();
        return currentScope()?.tenantId;
      });
      expect(inside).toBe('o');
      // left when fn settled: the request's own tenant again
      expect(currentScope()?.tenantId).toBe('r');
    });
  });

  it('the attribute lists of the IAM conditions are what the code writes and reads', async () => {
    const { ACCOUNT_ATTRIBUTES, AUDIT_ATTRIBUTES, METERING_ATTRIBUTES } = await import('../../lib/tenancy/attributes.js');
    const { TENANT_FIELDS } = await import('../../lib/store/tenants.js');
    const { auditPut } = await import('../../lib/audit/audit.js');
    expect([...ACCOUNT_ATTRIBUTES].sort()).toEqual([...TENANT_FIELDS].sort());
    const principal = { kind: 'api_key', tenantId: 't', id: 'k', user: 'u', scopes: [], operator: false } as any;
    const entry = auditPut({ principal, requestId: 'r', sourceIp: null, userAgent: null }, 't', { action: 'access.denied', outcome: 'denied', resource: { type: 'route', id: 'x' }, detail: { code: 'c' } });
    for (const attr of Object.keys(entry.item.Put!.Item!)) expect(AUDIT_ATTRIBUTES as readonly string[]).toContain(attr);
    const like = (attr: string) => METERING_ATTRIBUTES.some((p) => (p.endsWith('*') ? attr.startsWith(p.slice(0, -1)) : attr === p));
    for (const attr of ['rl_ts', 'rl_tok', 'rl_cap', 'rl_api_key:k1_ts', 'requests', 'ttl', 'pk', 'sk']) expect(like(attr), attr).toBe(true);
    for (const attr of ['value', 'name', 'status', 'wrapped']) expect(like(attr), attr).toBe(false);
  });
});

describe('partitionKeys: the leading keys of a request, as IAM reads them', () => {
  it('reads every request shape, marshalled or not, and gives up (undefined) on what it cannot tell', async () => {
    const { partitionKeys } = await import('../../lib/tenancy/leading-keys.js');
    expect(partitionKeys('GetItemCommand', { Key: { pk: 'T#a', sk: 'x' } })).toEqual(['T#a']);
    expect(partitionKeys('DeleteItemCommand', { Key: { pk: { S: 'T#a' } } })).toEqual(['T#a']);
    expect(partitionKeys('PutItemCommand', { Item: { pk: 'KEY#h' } })).toEqual(['KEY#h']);
    expect(partitionKeys('PutItemCommand', { Item: { sk: 'x' } })).toBeUndefined();
    expect(partitionKeys('QueryCommand', { KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :sk)', ExpressionAttributeNames: { '#pk': 'pk' }, ExpressionAttributeValues: { ':pk': 'T#a' } })).toEqual(['T#a']);
    expect(partitionKeys('QueryCommand', { IndexName: 'gsi1', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'gsi1pk' }, ExpressionAttributeValues: { ':pk': { S: 'T#a' } } })).toEqual(['T#a']);
    // a key condition on the wrong attribute, or of another shape: cannot tell
    expect(partitionKeys('QueryCommand', { IndexName: 'gsi1', KeyConditionExpression: '#pk = :pk', ExpressionAttributeNames: { '#pk': 'pk' }, ExpressionAttributeValues: { ':pk': 'T#a' } })).toBeUndefined();
    expect(partitionKeys('QueryCommand', { KeyConditionExpression: 'begins_with(pk, :p)' })).toBeUndefined();
    expect(partitionKeys('QueryCommand', {})).toBeUndefined();
    expect(partitionKeys('BatchGetItemCommand', { RequestItems: { t: { Keys: [{ pk: 'T#a' }, { pk: 'T#b' }] } } })).toEqual(['T#a', 'T#b']);
    expect(partitionKeys('BatchGetItemCommand', { RequestItems: {} })).toBeUndefined();
    expect(partitionKeys('BatchWriteItemCommand', { RequestItems: { t: [{ PutRequest: { Item: { pk: 'T#a' } } }, { DeleteRequest: { Key: { pk: 'T#b' } } }] } })).toEqual(['T#a', 'T#b']);
    expect(
      partitionKeys('TransactWriteItemsCommand', {
        TransactItems: [{ Put: { Item: { pk: 'T#a' } } }, { Update: { Key: { pk: 'T#a' } } }, { Delete: { Key: { pk: 'KEY#h' } } }, { ConditionCheck: { Key: { pk: 'T#a' } } }],
      }),
    ).toEqual(['T#a', 'T#a', 'KEY#h', 'T#a']);
    expect(partitionKeys('TransactGetItemsCommand', { TransactItems: [{ Get: { Key: { pk: 'T#a' } } }] })).toEqual(['T#a']);
    expect(partitionKeys('TransactWriteItemsCommand', { TransactItems: [{}] })).toBeUndefined();
    expect(partitionKeys('ScanCommand', { TableName: 't' })).toBeUndefined();
    expect(partitionKeys('ExecuteStatementCommand', { Statement: 'SELECT * FROM t' })).toBeUndefined();
  });

  it('partitionAccesses: each item with the action IAM authorizes it by (a transaction per element)', async () => {
    const { partitionAccesses } = await import('../../lib/tenancy/leading-keys.js');
    const shape = (command: string, input: Record<string, unknown>) => partitionAccesses(command, input)?.map((a) => [a.pk, a.action]);
    expect(shape('UpdateItemCommand', { Key: { pk: 'METER#a' } })).toEqual([['METER#a', 'UpdateItem']]);
    expect(shape('BatchGetItemCommand', { RequestItems: { t: { Keys: [{ pk: 'T#a' }] } } })).toEqual([['T#a', 'BatchGetItem']]);
    expect(
      shape('TransactWriteItemsCommand', {
        TransactItems: [{ Put: { Item: { pk: 'T#a' } } }, { Update: { Key: { pk: 'METER#a' } } }, { Delete: { Key: { pk: 'KEY#h' } } }, { ConditionCheck: { Key: { pk: 'T#a' } } }],
      }),
    ).toEqual([
      ['T#a', 'PutItem'],
      ['METER#a', 'UpdateItem'],
      ['KEY#h', 'DeleteItem'],
      ['T#a', 'ConditionCheckItem'],
    ]);
    // a transaction's element is its own request (the rule on the metering partition reads its expressions)
    const update = { Key: { pk: 'METER#a' }, UpdateExpression: 'ADD requests :one' };
    expect(partitionAccesses('TransactWriteItemsCommand', { TransactItems: [{ Update: update }] })?.[0]?.request).toBe(update);
  });

  it('updatedAttributes: the attributes an UpdateItem names, as dynamodb:Attributes sees them', async () => {
    const { updatedAttributes, meterAllows } = await import('../../lib/tenancy/meter.js');
    expect(
      updatedAttributes({
        Key: { pk: 'METER#a', sk: 'USAGE#d' },
        UpdateExpression: 'SET #tok = #tok - :one, #ttl = if_not_exists(#ttl, :ttl) ADD requests :one REMOVE m.nested, #l[0]',
        ConditionExpression: '#ts = :ts AND attribute_not_exists(other) AND NOT begins_with(#x, :p)',
        ExpressionAttributeNames: { '#tok': 'rl_tok', '#ttl': 'ttl', '#ts': 'rl_ts', '#l': 'list', '#x': 'x' },
      })?.sort(),
    ).toEqual(['list', 'm', 'other', 'pk', 'requests', 'rl_tok', 'rl_ts', 'sk', 'ttl', 'x']);
    expect(updatedAttributes({ Key: { pk: 'p' }, UpdateExpression: 'SET #gone = :v' })).toBeUndefined();
    expect(updatedAttributes({ Key: { pk: 'p' }, AttributeUpdates: { requests: { Action: 'ADD' } } })).toBeUndefined();
    const bucket = { Key: { pk: 'METER#a', sk: 'USAGE#d' }, UpdateExpression: 'SET #ts = :ts ADD requests :one', ExpressionAttributeNames: { '#ts': 'rl_api_key:k_ts' } };
    expect(meterAllows({ pk: 'METER#a', action: 'UpdateItem', request: bucket })).toBe(true);
    expect(meterAllows({ pk: 'METER#a', action: 'UpdateItem', request: { ...bucket, UpdateExpression: 'SET #ts = :ts, secret = :v' } })).toBe(false);
    expect(meterAllows({ pk: 'METER#a', action: 'Query', request: {} })).toBe(true);
    for (const action of ['PutItem', 'DeleteItem', 'ConditionCheckItem', 'BatchWriteItem']) expect(meterAllows({ pk: 'METER#a', action, request: bucket }), action).toBe(false);
  });

  it('a tenant scope needs a tenant; outside any scope identifyTenant does nothing', async () => {
    const { withTenant, identifyTenant, currentScope } = await import('../../lib/tenancy/scope.js');
    expect(() => withTenant('', () => 1)).toThrow(/needs a tenant id/);
    identifyTenant('t');
    expect(currentScope()).toBeUndefined();
    expect(withTenant('t', () => currentScope()?.tenantId)).toBe('t');
  });
});

describe('shared tenant sessions (lib/authn/tenant-sessions.ts): one AssumeRole per role and account, sealed in the table', () => {
  /** A new "container": a fresh module graph whose credentials share through the table, as lib/authn/authenticate.ts installs it. */
  async function container() {
    vi.resetModules();
    const credentials = await import('../../lib/tenancy/credentials.js');
    const { tableSessionStore } = await import('../../lib/authn/tenant-sessions.js');
    credentials.shareSessionsThrough(tableSessionStore);
    const { withTenant } = await import('../../lib/tenancy/scope.js');
    const { db, serviceDb, tableName } = await import('../../lib/store/client.js');
    const { GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const read = (tid: string) => withTenant(tid, () => db().send(new GetCommand({ TableName: tableName(), Key: { pk: `T#${tid}`, sk: 'COUNTERS' } })));
    const item = async (tid: string) =>
      (await serviceDb().send(new GetCommand({ TableName: tableName(), Key: { pk: `TSESSION#secrets-api-tenant-access#${tid}`, sk: 'SESSION' }, ConsistentRead: true }))).Item;
    const put = (Item: Record<string, unknown>) => serviceDb().send(new PutCommand({ TableName: tableName(), Item }));
    return { credentials, read, item, put };
  }
  const until = async <T>(f: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 100; i++) {
      const v = await f();
      if (v !== undefined) return v;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    throw new Error('the shared session never reached the table');
  };
  const signedBy = (from: number) => dynamo.slice(from).filter((c) => c.body.Key?.pk?.S?.startsWith('T#')).map((c) => c.accessKey);

  it('a second container takes the first one\'s session from the table: no AssumeRole, the same session signs; the item holds no credential in plaintext', async () => {
    const tid = crypto.randomUUID();
    const first = await container();
    const stsFrom = sts.length;
    await first.read(tid);
    expect(sts.slice(stsFrom).map((c) => c.params['Tags.member.1.Value'])).toEqual([tid]);
    const stored = await until(() => first.item(tid));
    const raw = JSON.stringify(stored, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    for (const canary of [`token-${tid}`, `secret-${tid}`, keyFor(tid)]) expect(raw).not.toContain(canary);
    expect(stored.ttl).toBe(stored.expires_at);

    const second = await container();
    const from = dynamo.length;
    await second.read(tid);
    expect(sts.length - stsFrom, 'the second container assumed the role again').toBe(1);
    expect(second.credentials.sharedSessions()).toBe(1);
    expect(signedBy(from)).toEqual([keyFor(tid)]);
  });

  it('a tampered session, another account\'s session under this account\'s key, or one about to expire: the role is assumed again', async () => {
    const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), `short-${crypto.randomUUID()}`];
    const seed = await container();
    for (const t of [a, b, c]) await seed.read(t);
    const [ia, ib, ic] = (await Promise.all([a, b, c].map((t) => until(() => seed.item(t))))) as [Record<string, any>, Record<string, any>, Record<string, any>];
    // a flipped byte of the ciphertext
    const sealed = Buffer.from(ia.sealed as Uint8Array);
    sealed[0] = sealed[0]! ^ 1;
    await seed.put({ ...ia, sealed });
    // b's key holds a's sealed session (the additional data names the account)
    await seed.put({ ...ia, pk: ib.pk });
    // c's session (400 s) leaves too little beyond the margin
    expect(ic.expires_at).toBeLessThan(Date.now() / 1000 + 401);

    const next = await container();
    const stsFrom = sts.length;
    const from = dynamo.length;
    for (const t of [a, b, c]) await next.read(t);
    expect(sts.slice(stsFrom).map((x) => x.params['Tags.member.1.Value'])).toEqual([a, b, c]);
    expect(next.credentials.sharedSessions()).toBe(0);
    expect(signedBy(from)).toEqual([a, b, c].map(keyFor));
  });
});

describe('the table client', () => {
  it("carries no SDK logger middleware (it copied every input and answer for a no-op logger), and still the tenancy guard", async () => {
    const { serviceDb } = await import('../../lib/store/client.js');
    const names = serviceDb().middlewareStack.identify();
    expect(names.filter((n) => n.startsWith('loggerMiddleware'))).toEqual([]);
    expect(names.some((n) => n.startsWith('tenantPartitions'))).toBe(true);
  });
});
