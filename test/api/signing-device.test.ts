/**
 * Device failures of the pkcs11 backend, at the library level and through the real sign
 * handler invoked in this process (the same Lambda export the gateway calls), against the
 * suite's DynamoDB Local and a SoftHSM2 token private to this test file (its own
 * SOFTHSM2_CONF: this process is the only one that ever opens it, so the token can be
 * "pulled" without disturbing the shared runtime).
 *
 * - a broken module path → 502 device_error, a `failure` audit entry, no success entry;
 * - a pulled token (its directory moved away) → 502, no success entry; once the token is
 *   back, the next request reconnects and signs (200);
 * - no module configured → 503 naming the install command;
 * - more concurrent signs than pooled sessions all succeed (sessions are exclusive).
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { newAccount, type TestAccount } from '../helpers/api.js';
import type { CallContext } from '../../lib/auth/principal.js';
import { prepareSoftHsm, softHsmPaths, type SoftHsmToken } from '../../scripts/local/softhsm.js';

type Lib = {
  pkcs11: typeof import('../../lib/signing/pkcs11.js');
  registry: typeof import('../../lib/signing/registry.js');
  keys: typeof import('../../lib/signing/keys.js');
  service: typeof import('../../lib/signing/service.js');
  handlers: typeof import('../../functions/signing/crypto.js');
  client: typeof import('../../lib/store/client.js');
  storeKeys: typeof import('../../lib/store/keys.js');
  tenants: typeof import('../../lib/store/tenants.js');
};

let lib: Lib;
let token: SoftHsmToken;
let dataDir: string;
let account: TestAccount;
let ctx: CallContext;
let signKey: string;
const backends: Array<{ close(): Promise<void> }> = [];

const hsm = (opts: Partial<{ module: string | undefined; tokenLabel: string; poolSize: number }> = {}) => {
  const b = new lib.pkcs11.Pkcs11Backend({
    module: 'module' in opts ? opts.module : token.module,
    tokenLabel: opts.tokenLabel ?? token.tokenLabel,
    pin: async () => token.pin,
    poolSize: opts.poolSize ?? 2,
  });
  backends.push(b);
  return b;
};

async function audits(keyId: string): Promise<Array<Record<string, any>>> {
  const out = await lib.client.db().send(
    new QueryCommand({
      TableName: lib.client.tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :a)',
      ExpressionAttributeValues: { ':pk': lib.storeKeys.tenantPk(account.tenantId), ':a': 'AUDIT#' },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).filter((i) => i.action === 'crypto.sign' && i.resource?.id === keyId);
}

const count = async (keyId: string, outcome: string) => (await audits(keyId)).filter((a) => a.outcome === outcome).length;

/** The real sign handler, invoked in this process with the event the gateway builds. */
async function invokeSign(body: unknown): Promise<{ status: number; body: any }> {
  const requestId = `test-${randomBytes(6).toString('hex')}`;
  const event = {
    resource: '/api/v1/crypto/sign',
    path: '/api/v1/crypto/sign',
    httpMethod: 'POST',
    headers: { Authorization: `Bearer ${signKey}`, 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: { requestId, identity: { sourceIp: '127.0.0.1', userAgent: 'vitest' } },
  } as unknown as APIGatewayProxyEvent;
  const context = { awsRequestId: requestId, getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
  const res = (await lib.handlers.sign(event, context)) as APIGatewayProxyResult;
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

beforeAll(async () => {
  useRuntimeConfig();
  dataDir = mkdtempSync(join(tmpdir(), 'signing-device-'));
  const setup = prepareSoftHsm(dataDir, 'device-test');
  if (!setup.ok) throw new Error(setup.reason);
  token = setup.token;
  process.env.SOFTHSM2_CONF = token.conf; // read by SoftHSM2 when this process initializes it
  lib = {
    pkcs11: await import('../../lib/signing/pkcs11.js'),
    registry: await import('../../lib/signing/registry.js'),
    keys: await import('../../lib/signing/keys.js'),
    service: await import('../../lib/signing/service.js'),
    handlers: await import('../../functions/signing/crypto.js'),
    client: await import('../../lib/store/client.js'),
    storeKeys: await import('../../lib/store/keys.js'),
    tenants: await import('../../lib/store/tenants.js'),
  };
  account = await newAccount('hsmdev');
  signKey = await account.key(['keys:sign', 'credentials:read', 'credentials:write']);
  const tenant = await lib.tenants.getTenant(account.tenantId);
  ctx = {
    principal: {
      kind: 'api_key',
      tenantId: account.tenantId,
      tenant: tenant!,
      id: 'device-test',
      user: account.adminEmail,
      scopes: ['admin:*'],
      operator: false,
    },
    requestId: 'device-test',
    sourceIp: null,
    userAgent: null,
  };
});

afterAll(async () => {
  for (const b of backends) await b.close().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('pkcs11 device failures', () => {
  let keyId: string;
  let publicKey: string;

  it('signs on the private token through the real handler (baseline)', async () => {
    lib.registry.setSigningBackend(hsm());
    const rec = await lib.keys.createHsmKey(ctx, { backend: 'pkcs11', algorithm: 'EC_P256', name: 'device-key' });
    keyId = rec.id;
    publicKey = rec.meta.public_key;
    const message = randomBytes(100);
    const res = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: message.toString('base64'), purpose: 'baseline' });
    expect(res.status).toBe(200);
    expect(verify('sha256', message, createPublicKey(publicKey), Buffer.from(res.body.data.signature, 'base64'))).toBe(true);
    expect(await count(keyId, 'success')).toBe(1);
  });

  it('a broken module path answers 502 device_error, with a failure entry and no success entry', async () => {
    lib.registry.setSigningBackend(hsm({ module: '/nonexistent/lib/libno-such-pkcs11.so' }));
    const res = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: randomBytes(32).toString('base64'), purpose: 'broken-module' });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, code: 'device_error' });
    expect(res.body.data).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain('libno-such'); // internals stay in the log
    expect(await count(keyId, 'success')).toBe(1);
    const failures = (await audits(keyId)).filter((a) => a.outcome === 'failure');
    expect(failures.map((f) => f.detail.purpose)).toEqual(['broken-module']);
    expect(failures[0]!.detail.error).toBe('device_error');
    const status = await lib.registry.signingBackend('pkcs11')!.status();
    expect(status).toMatchObject({ configured: true, reachable: false, status: 'error' });
  });

  it('a pulled token answers 502 with no success entry; the next request after it returns reconnects and signs', async () => {
    const backend = hsm();
    lib.registry.setSigningBackend(backend);
    const ok1 = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: 'AQID', purpose: 'before-pull' });
    expect(ok1.status).toBe(200);
    expect(await count(keyId, 'success')).toBe(2);

    const { tokens } = softHsmPaths(dataDir);
    renameSync(tokens, `${tokens}.pulled`);
    try {
      const pulled = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: 'AQID', purpose: 'pulled' });
      expect(pulled.status).toBe(502);
      expect(pulled.body.code).toBe('device_error');
      // still gone: reconnecting fails too (502), nothing claims success
      const again = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: 'AQID', purpose: 'pulled' });
      expect(again.status).toBe(502);
      expect(await count(keyId, 'success')).toBe(2);
      expect((await backend.status()).reachable).toBe(false);
    } finally {
      renameSync(`${tokens}.pulled`, tokens);
    }
    const message = randomBytes(64);
    const back = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: message.toString('base64'), purpose: 'after-reinsert' });
    expect(back.status).toBe(200);
    expect(verify('sha256', message, createPublicKey(publicKey), Buffer.from(back.body.data.signature, 'base64'))).toBe(true);
    expect(await count(keyId, 'success')).toBe(3);
    expect(
      (await audits(keyId))
        .filter((a) => a.outcome === 'failure')
        .map((a) => a.detail.purpose)
        .sort(),
    ).toEqual(['broken-module', 'pulled', 'pulled']);
  });

  it('a token label that is not present answers 502', async () => {
    lib.registry.setSigningBackend(hsm({ tokenLabel: 'no-such-token' }));
    const res = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: 'AQID', purpose: 'wrong-label' });
    expect(res.status).toBe(502);
    expect(await count(keyId, 'success')).toBe(3);
  });

  it('no module configured (SoftHSM2 not installed) answers 503 naming the install command', async () => {
    lib.registry.setSigningBackend(hsm({ module: undefined }));
    const res = await invokeSign({ backend: 'pkcs11', key_id: keyId, message: 'AQID', purpose: 'unavailable' });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    expect(res.body.error).toContain('apt-get install softhsm2');
    const status = await lib.registry.signingBackend('pkcs11')!.status();
    expect(status).toMatchObject({ configured: false, status: 'unavailable' });
    expect(status.reason).toContain('apt-get install softhsm2');
    expect(await count(keyId, 'success')).toBe(3);
  });

  it('more concurrent signs than pooled sessions all succeed and verify', async () => {
    lib.registry.setSigningBackend(hsm({ poolSize: 2 }));
    const messages = Array.from({ length: 12 }, () => randomBytes(48));
    const results = await Promise.all(
      messages.map((m) => lib.service.signMessage(ctx, { backend: 'pkcs11', key_id: keyId, message: m.toString('base64'), purpose: 'pool' })),
    );
    results.forEach((r, i) => expect(verify('sha256', messages[i]!, createPublicKey(publicKey), Buffer.from(r.signature, 'base64'))).toBe(true));
    expect(new Set(results.map((r) => r.audit_id)).size).toBe(12);
  });
});
