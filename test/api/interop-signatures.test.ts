import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createSigner, httpbis } from 'http-message-signatures';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDeviceKey, type DeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, canary, newAccount, unique, type TestAccount } from '../helpers/api.js';
import { allowLoopback, createWebhook, eventually, receiver, type Receiver } from './webhooks.helpers.js';

/**
 * Signatures made or checked by implementations this project does not contain:
 * - device requests signed by `http-message-signatures` (RFC 9421), whose `@query` is the
 *   URL's query exactly as written, in the client's order;
 * - webhook deliveries verified by `svix` 1.82 (its own HMAC code, not the
 *   `standardwebhooks` package the service signs with).
 */
let a: TestAccount;
let device: { id: string; key: DeviceKey };
let secretValue: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  a = await newAccount('interop-sig');
  secretValue = canary('interop-sig');
  const made = await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name: unique('sig'), data: { value: secretValue } } });
  expect(made.status, made.text).toBe(201);
  const profileId = randomUUID();
  const profile = await api('PUT', `/api/v1/agents/profiles/${profileId}`, {
    key: a.adminKey,
    body: { name: 'sig', enabled: true, grants: [{ alias: 'db', service: 'secret.read', resource: made.body.data.secret.id }] },
  });
  expect(profile.status, profile.text).toBe(201);
  const key = generateDeviceKey('ecdsa-p256-sha256');
  const res = await api('POST', '/api/v1/agents/devices', {
    key: a.adminKey,
    body: { name: unique('sig-dev'), public_key: key.publicJwk, profile_id: profileId },
  });
  expect(res.status, res.text).toBe(201);
  device = { id: res.body.data.device.id, key };
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

/** One request signed by http-message-signatures (RFC 9421) with an RFC 9530 Content-Digest, sent with fetch. */
async function signedByLibrary(method: string, pathAndQuery: string, body = '') {
  const url = `${baseUrl()}${pathAndQuery}`;
  const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
  const signed = await httpbis.signMessage(
    {
      key: createSigner(device.key.privateKey, 'ecdsa-p256-sha256', device.id),
      fields: ['@method', '@path', '@query', 'content-digest'],
      params: ['created', 'nonce', 'keyid', 'alg'],
      paramValues: { nonce: randomBytes(18).toString('base64url') },
    },
    { method, url, headers: { 'content-digest': digest, ...(body ? { 'content-type': 'application/json' } : {}) } },
  );
  const res = await fetch(url, { method, headers: signed.headers as Record<string, string>, body: body || undefined });
  return {
    status: res.status,
    body: (await res.json()) as { data?: Record<string, any>; error?: string },
    signatureInput: (signed.headers as Record<string, string>)['Signature-Input'],
  };
}

describe('RFC 9421 device requests signed by http-message-signatures', () => {
  it('a query in the client order (not sorted), with encoded and unencoded characters, verifies', async () => {
    for (const query of ['', '?zeta=1&alpha=2', '?b=two%20words&a=x%2By&a=last', '?path=/a/b&q=it%27s&empty=', '?z=(x)!*&y=~']) {
      const res = await signedByLibrary('GET', `/api/v1/agent/identity${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data!.identity.device_id).toBe(device.id);
    }
  });

  it('a body and its digest, signed by the library, reach the granted secret; a changed query or body does not verify', async () => {
    const ok = await signedByLibrary('POST', '/api/v1/agent/access/db?trace=on&a=1', '{}');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data!.data.value).toBe(secretValue);
    expect(ok.signatureInput).toMatch(
      /^sig=\("@method" "@path" "@query" "content-digest"\);created=\d+;nonce="[A-Za-z0-9_-]+";keyid="[0-9a-f-]{36}";alg="ecdsa-p256-sha256"$/,
    );

    // the same signed headers on another query: refused
    const url = `${baseUrl()}/api/v1/agent/identity?zeta=1&alpha=2`;
    const signed = await httpbis.signMessage(
      {
        key: createSigner(device.key.privateKey, 'ecdsa-p256-sha256', device.id),
        fields: ['@method', '@path', '@query', 'content-digest'],
        params: ['created', 'nonce', 'keyid', 'alg'],
        paramValues: { nonce: randomBytes(18).toString('base64url') },
      },
      { method: 'GET', url, headers: { 'content-digest': `sha-256=:${createHash('sha256').update('').digest('base64')}:` } },
    );
    const moved = await fetch(`${baseUrl()}/api/v1/agent/identity?zeta=1&alpha=3`, { headers: signed.headers as Record<string, string> });
    expect(moved.status).toBe(401);
    expect(((await moved.json()) as { error: string }).error).toBe('signature does not verify');
  });
});

describe('webhook deliveries verified by svix', () => {
  it('a delivery verifies with svix (webhook-* and svix-* header names); a tampered body or foreign secret does not', async () => {
    await allowLoopback(a, { max_attempts: 3, timeout_seconds: 5 });
    const r = await receiver();
    receivers.push(r);
    const wh = await createWebhook(a, { url: r.url, events: ['secret.created'] });
    const name = unique('svix');
    expect((await api('POST', '/api/v1/secrets', { key: a.adminKey, body: { name, data: { value: canary('svix') } } })).status).toBe(201);
    const got = await eventually(async () => r.received.find((x) => x.body.includes(name)), 'the secret.created delivery');
    const h = (n: string) => got.headers[n] as string;
    const webhookHeaders = {
      'webhook-id': h('webhook-id'),
      'webhook-timestamp': h('webhook-timestamp'),
      'webhook-signature': h('webhook-signature'),
    };
    const payload = new Webhook(wh.signing_secret).verify(got.body, webhookHeaders) as { type: string; id: string; data: { name: string } };
    expect(payload).toMatchObject({ type: 'secret.created', id: h('webhook-id'), data: { name } });
    const svixHeaders = { 'svix-id': h('webhook-id'), 'svix-timestamp': h('webhook-timestamp'), 'svix-signature': h('webhook-signature') };
    expect(new Webhook(wh.signing_secret).verify(got.body, svixHeaders)).toMatchObject({ id: h('webhook-id') });
    expect(() => new Webhook(wh.signing_secret).verify(got.body.replace(name, `${name}x`), webhookHeaders)).toThrow(/No matching signature/);
    const foreign = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(foreign).verify(got.body, webhookHeaders)).toThrow(/No matching signature/);
  });
});
