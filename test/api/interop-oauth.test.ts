import { createHash, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createRemoteJWKSet, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateDeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, canary, newAccount, oauthError, unique, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * The OAuth 2.0 device flow (RFC 8628) and the tenant JWKS (RFC 7517), driven by clients
 * this project does not contain: openid-client v6 (initiateDeviceAuthorization,
 * pollDeviceAuthorizationGrant, fetchProtectedResource) and jose's createRemoteJWKSet.
 * Neither knows the service's envelope: each only works when the endpoints speak the
 * standard on the wire (lib/routes.ts, wire `oauth` / `document`).
 */
let a: TestAccount;
let approver: string;
let profileId: string;
let secret: { id: string; value: string };
const exported: string[] = [];

const table = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  );

beforeAll(async () => {
  a = await newAccount('interop-oauth');
  approver = await a.key(['agents:approve']);
  const value = canary('interop');
  const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('interop'), data: { value } } });
  expect(made.status, made.text).toBe(201);
  secret = { id: made.body.data.secret.id, value };
  profileId = randomUUID();
  const profile = await api('PUT', `/api/v1/agents/profiles/${profileId}`, {
    key: a.adminKey,
    body: { name: 'interop', enabled: true, grants: [{ alias: 'db', service: 'secret.read', resource: secret.id }] },
  });
  expect(profile.status, profile.text).toBe(201);
});

afterAll(async () => {
  const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: inject('tableName'), logText: '', extra: exported });
  expect(leaks).toEqual([]);
});

interface Seen {
  url: string;
  status: number;
  contentType: string | null;
  requestType: string | null;
  body: Record<string, unknown>;
}

/** An openid-client configuration for the device flow, without discovery; every exchange recorded. */
function deviceClient(clientId: string, onResponse?: (seen: Seen) => void | Promise<void>) {
  const base = baseUrl();
  const config = new client.Configuration(
    { issuer: base, device_authorization_endpoint: `${base}/api/v1/agent/oauth/device`, token_endpoint: `${base}/api/v1/agent/oauth/token` },
    clientId,
    undefined,
    client.None(),
  );
  client.allowInsecureRequests(config); // the local runtime is plain HTTP on 127.0.0.1
  const seen: Seen[] = [];
  config[client.customFetch] = async (url, options) => {
    const res = await fetch(url, options as RequestInit);
    const text = await res.clone().text();
    const entry: Seen = {
      url: String(url),
      status: res.status,
      contentType: res.headers.get('content-type'),
      requestType: new Headers(options.headers as HeadersInit).get('content-type'),
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
    seen.push(entry);
    await onResponse?.(entry);
    return res;
  };
  return { config, seen };
}

const approve = (userCode: string, decision: 'approve' | 'deny' = 'approve') =>
  api('POST', '/api/v1/agents/oauth/approve', {
    key: approver,
    body: { user_code: userCode, decision, ...(decision === 'approve' ? { profile_id: profileId } : {}) },
  });

describe('RFC 8628 device flow driven by openid-client', () => {
  it('initiate → authorization_pending → approval → Bearer token → enrolment with the token → signed device requests', async () => {
    const key = generateDeviceKey('ed25519');
    let userCode = '';
    let approved = false;
    const { config, seen } = deviceClient('interop-cli', async (s) => {
      // the reviewer approves once the client has seen authorization_pending
      if (s.body.error === 'authorization_pending' && !approved) {
        approved = true;
        const res = await approve(userCode);
        expect(res.status, res.text).toBe(200);
      }
    });
    const auth = await client.initiateDeviceAuthorization(config, { name: unique('oidc-laptop'), public_key: JSON.stringify(key.publicJwk) });
    userCode = auth.user_code;
    expect(auth).toMatchObject({ expires_in: 600, interval: 5, verification_uri: expect.stringMatching(/\/api\/v1\/agents\/oauth\/review$/) });
    // what went over the wire: a form-encoded request, a top-level JSON answer
    expect(seen[0]).toMatchObject({
      status: 200,
      requestType: 'application/x-www-form-urlencoded;charset=UTF-8',
      contentType: 'application/json; charset=utf-8',
    });
    expect(seen[0]!.body).not.toHaveProperty('success');

    const tokens = await client.pollDeviceAuthorizationGrant(config, auth);
    expect(tokens.token_type).toBe('bearer'); // openid-client lower-cases it
    expect(tokens.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(seen.map((s) => s.body.error ?? (s.body.access_token ? 'token' : 'device'))).toEqual(['device', 'authorization_pending', 'token']);
    expect(seen[1]).toMatchObject({ status: 400, contentType: 'application/json; charset=utf-8' });
    expect(seen[1]!.body).toEqual({ error: 'authorization_pending', error_description: expect.any(String) });
    exported.push(tokens.access_token);

    // the access token is a Bearer token for the enrolment endpoint (RFC 6750 §2.1)
    const enrol = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${baseUrl()}/api/v1/agent/oauth/enroll`), 'POST');
    expect(enrol.status).toBe(201);
    const enrolled = ((await enrol.json()) as { data: { device_id: string; tenant_id: string; profile_id: string } }).data;
    expect(enrolled).toMatchObject({ tenant_id: a.tenantId, profile_id: profileId });
    const again = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${baseUrl()}/api/v1/agent/oauth/enroll`), 'POST');
    expect(again.status).toBe(400);

    const { signedFetch } = await import('../../scripts/agent-client.js');
    const got = await signedFetch(baseUrl(), { id: enrolled.device_id, key }, 'POST', '/api/v1/agent/access/db');
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body.data.data.value).toBe(secret.value);
  });

  it('access_denied and expired_token end the polling with the RFC error; a poll for another client_id is invalid_grant', async () => {
    const denied = deviceClient('interop-denied');
    const d = await client.initiateDeviceAuthorization(denied.config, {
      name: unique('denied'),
      public_key: JSON.stringify(generateDeviceKey().publicJwk),
    });
    expect((await approve(d.user_code, 'deny')).status).toBe(200);

    const expired = deviceClient('interop-expired');
    const e = await client.initiateDeviceAuthorization(expired.config, {
      name: unique('expired'),
      public_key: JSON.stringify(generateDeviceKey().publicJwk),
    });
    const codeHash = createHash('sha256').update(e.device_code).digest('hex');
    await table().send(
      new UpdateCommand({
        TableName: inject('tableName'),
        Key: { pk: `DEVAUTHZ#${codeHash}`, sk: 'DEVAUTHZ' },
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );

    // both polls run together (each waits the 5 s interval first)
    const [deniedError, expiredError] = await Promise.all([
      client.pollDeviceAuthorizationGrant(denied.config, d).then(
        () => undefined,
        (err: unknown) => err,
      ),
      client.pollDeviceAuthorizationGrant(expired.config, e).then(
        () => undefined,
        (err: unknown) => err,
      ),
    ]);
    expect(deniedError).toBeInstanceOf(client.ResponseBodyError);
    expect(deniedError).toMatchObject({ error: 'access_denied', status: 400 });
    expect(expiredError).toBeInstanceOf(client.ResponseBodyError);
    expect(expiredError).toMatchObject({ error: 'expired_token', status: 400 });

    // the device code is bound to the client_id it was issued to
    const other = await api('POST', '/api/v1/agent/oauth/token', {
      rawBody: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: d.device_code,
        client_id: 'someone-else',
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(other.status).toBe(400);
    expect(oauthError(other)).toBe('invalid_grant');
  });

  it('the wire format by hand: slow_down grows the interval, form errors are invalid_request, 415 names the form type', async () => {
    const form = (path: string, params: Record<string, string>) =>
      api('POST', path, { rawBody: new URLSearchParams(params).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const start = await form('/api/v1/agent/oauth/device', {
      client_id: 'by-hand',
      name: unique('hand'),
      public_key: JSON.stringify(generateDeviceKey().publicJwk),
    });
    expect(start.status, start.text).toBe(200);
    expect(start.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(start.body).sort()).toEqual([
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    const poll = () =>
      form('/api/v1/agent/oauth/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: start.body.device_code,
        client_id: 'by-hand',
      });
    expect(oauthError(await poll())).toBe('authorization_pending');
    const fast = await poll();
    expect(fast.status).toBe(400);
    expect(oauthError(fast)).toBe('slow_down');
    expect(fast.body.error_description).toMatch(/10 s/);
    const faster = await poll();
    expect(oauthError(faster)).toBe('slow_down');
    expect(faster.body.error_description).toMatch(/15 s/);

    const missing = await form('/api/v1/agent/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' });
    expect(missing.status).toBe(400);
    expect(oauthError(missing)).toBe('invalid_request');
    expect(missing.body.error_description).toMatch(/body\.device_code/);
    const twice = await api('POST', '/api/v1/agent/oauth/token', {
      rawBody: 'device_code=aaaaaaaaaaaaaaaaaaaa&device_code=bbbbbbbbbbbbbbbbbbbb',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(oauthError(twice)).toBe('invalid_request');
    expect(twice.body.error_description).toBe("parameter 'device_code' is given more than once");
    const grant = await form('/api/v1/agent/oauth/token', { grant_type: 'client_credentials', device_code: start.body.device_code });
    expect(oauthError(grant)).toBe('unsupported_grant_type');
    const text = await api('POST', '/api/v1/agent/oauth/token', { rawBody: 'device_code', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(oauthError(text)).toBe('invalid_request');
    expect(text.body.error_description).toMatch(/x-www-form-urlencoded/);
    // an envelope route still refuses form bodies
    const enroll = await form('/api/v1/agent/oauth/enroll', { enrollment_token: 'x'.repeat(43) });
    expect(enroll.status).toBe(415);
    expect(enroll.body).toMatchObject({ success: false, code: 'unsupported_media_type' });
  });
});

describe('RFC 7517 JWK Set consumed by jose createRemoteJWKSet', () => {
  it('a JWT signed with a tenant jwt-signing key verifies against the remote set; caching headers; ETag revalidation', async () => {
    const [writer, exporter, reader] = await Promise.all([
      a.key(['credentials:write']),
      a.key(['credentials:write', 'export:read']),
      a.key(['secrets:read']),
    ]);
    const gen = await api('POST', '/api/v1/keys/jwt-signing/generate', { key: writer, body: { name: unique('jwks'), algorithm: 'ES256' } });
    expect(gen.status, gen.text).toBe(201);
    const { id, kid } = gen.body.data.key as { id: string; kid: string };
    const full = await api('GET', `/api/v1/keys/jwt-signing/${id}?include_private=true`, { key: exporter });
    const jwk = full.body.data.key.private.private_jwk as JWK;
    exported.push(jwk.d!);
    const token = await new SignJWT({ sub: 'svc' })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(await importJWK(jwk, 'ES256'));

    const url = new URL(`${baseUrl()}/api/v1/.well-known/jwks.json`);
    const remote = createRemoteJWKSet(url, { headers: { authorization: `Bearer ${reader}` } });
    const { payload, protectedHeader } = await jwtVerify(token, remote);
    expect(payload.sub).toBe('svc');
    expect(protectedHeader.kid).toBe(kid);

    const res = await fetch(url, { headers: { authorization: `Bearer ${reader}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    expect(res.headers.get('pragma')).toBeNull();
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const set = (await res.json()) as { keys: JWK[] };
    expect(Object.keys(set)).toEqual(['keys']);
    const revalidate = await fetch(url, { headers: { authorization: `Bearer ${reader}`, 'if-none-match': etag! } });
    expect(revalidate.status).toBe(304);
    expect(await revalidate.text()).toBe('');
    // a new key changes the set and its ETag
    expect((await api('POST', '/api/v1/keys/jwt-signing/generate', { key: writer, body: { name: unique('jwks'), algorithm: 'EdDSA' } })).status).toBe(
      201,
    );
    expect((await fetch(url, { headers: { authorization: `Bearer ${reader}`, 'if-none-match': etag! } })).status).toBe(200);
  });

  it("the service's own access tokens of the account verify against the remote set", async () => {
    useRuntimeConfig();
    const jwt = await import('../../lib/auth/jwt.js');
    const token = await jwt.issueAccessToken(a.tenantId, 'interop@example.test', ['secrets:read']);
    const remote = createRemoteJWKSet(new URL(`${baseUrl()}/api/v1/.well-known/jwks.json`), { headers: { authorization: `Bearer ${token}` } });
    const { payload } = await jwtVerify(token, remote, { issuer: jwt.TOKEN_ISSUER, audience: jwt.TOKEN_AUDIENCE });
    expect(payload.sub).toBe('interop@example.test');
  });
});
