import { beforeAll, describe, expect, inject, it } from 'vitest';
import { CATALOG } from '../../lib/catalog.js';
import { KNOWN_SCOPES, routeByKey } from '../../lib/routes.js';
import { api, canary, errorCode, newAccount, rootKey, type TestAccount } from '../helpers/api.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * Diagnostics (GET /api/v1/diagnostics, POST /api/v1/diagnostics/trace) and the integrator
 * helpers (GET /api/v1/mock/templates/{type}, POST /api/v1/mock/configure), on in the
 * embedded runtime (MOCK_ROUTES_ENABLED; off: test/unit/mock-routes.test.ts, and the
 * deployment switch: test/infra/billing.test.ts).
 */
let acct: TestAccount;
let other: TestAccount;
const MISSING = '00000000-0000-7000-8000-000000000000';

beforeAll(async () => {
  [acct, other] = await Promise.all([newAccount('diag'), newAccount('diag-other')]);
});

describe('GET /api/v1/diagnostics', () => {
  it('a platform operator: dependency health, versions, the configuration with secrets redacted, and the caller’s effective scopes', async () => {
    const res = await api('GET', '/api/v1/diagnostics', { key: rootKey() });
    expect(res.status, res.text).toBe(200);
    const d = res.body.data.diagnostics;
    expect(d.detail).toBe('operator');
    const byName = Object.fromEntries(d.dependencies.map((x: { name: string }) => [x.name, x]));
    expect(Object.keys(byName).sort()).toEqual(['hsm', 'key_provider', 'payment_provider', 'queue', 's3', 'table']);
    expect(byName.table).toMatchObject({ status: 'ok' });
    expect(byName.key_provider).toMatchObject({ status: 'ok', provider: 'local' });
    // the source runtime configures every handler alike; a deployment gives the provider only to the billing functions
    if (inject('runtime') === 'source') expect(byName.payment_provider).toMatchObject({ status: 'configured', provider: 'local' });
    else expect(byName.payment_provider).toEqual({ name: 'payment_provider', status: 'not_configured' });
    expect(byName.s3.status).toBe('not_configured');
    expect(['ok', 'unavailable', 'not_configured', 'error']).toContain(byName.hsm.status);
    expect(d.versions.node).toMatch(/^v\d+\./);
    expect(typeof d.versions.service).toBe('string');
    // every secret-bearing setting is redacted; plain settings are shown
    for (const [name, value] of Object.entries(d.configuration)) {
      if (/PIN|SECRET|PASSWORD|TOKEN|KEY|CREDENTIAL/i.test(name)) expect(value, name).toBe('[redacted]');
    }
    expect(d.configuration.KEY_PROVIDER).toBe('[redacted]');
    if (inject('runtime') === 'source') expect(d.configuration).toMatchObject({ PAYMENT_PROVIDER: 'local', PAYMENT_SECRET_FILE: '[redacted]' });
    expect(d.configuration.LOCAL_MASTER_KEY_FILE).toBe('[redacted]');
    expect(d.configuration.TABLE_NAME).toEqual(expect.any(String));
    expect(d.caller).toMatchObject({ operator: true, scopes: ['admin:*'], effective_scopes: KNOWN_SCOPES });
  });

  it('an account admin: each dependency’s status and their own credential, never the platform’s paths, endpoints or table', async () => {
    const full = (await api('GET', '/api/v1/diagnostics', { key: rootKey() })).body.data.diagnostics;
    const res = await api('GET', '/api/v1/diagnostics', { key: acct.adminKey });
    expect(res.status, res.text).toBe(200);
    const d = res.body.data.diagnostics;
    expect(d.detail).toBe('account');
    expect(d.configuration).toBeUndefined();
    expect(d.versions).toEqual({ service: full.versions.service });
    expect(d.dependencies.map((x: { name: string; status: string }) => [x.name, x.status])).toEqual(
      full.dependencies.map((x: { name: string; status: string }) => [x.name, x.status]),
    );
    for (const dep of d.dependencies) expect(Object.keys(dep).sort(), dep.name).toEqual(expect.arrayContaining(['name', 'status']));
    for (const dep of d.dependencies) for (const k of Object.keys(dep)) expect(['name', 'status', 'latency_ms'], `${dep.name}.${k}`).toContain(k);
    // no value of the operator's configuration that names a place (a file path, a URL) reaches the answer
    const places = Object.values(full.configuration as Record<string, unknown>).filter(
      (v): v is string => typeof v === 'string' && v !== '[redacted]' && v.includes('/'),
    );
    expect(places.length).toBeGreaterThan(0);
    for (const place of places) expect(res.text, place).not.toContain(place);
    expect(d.caller).toMatchObject({ tenant_id: acct.tenantId, operator: false, scopes: ['admin:*'], effective_scopes: KNOWN_SCOPES });
  });

  it('401 without or with invalid credentials, 403 without admin:* (the route takes no input: no 400)', async () => {
    expect((await api('GET', '/api/v1/diagnostics')).status).toBe(401);
    const res = await api('GET', '/api/v1/diagnostics', { key: await acct.key(['secrets:read']) });
    expect([res.status, errorCode(res)]).toEqual([403, 'insufficient_scope']);
    const bad = await api('GET', '/api/v1/diagnostics', { key: 'scm_notakey' });
    expect(bad.status).toBe(401);
  });
});

describe('POST /api/v1/diagnostics/trace', () => {
  it('times a read of the caller’s own secret phase by phase, with DynamoDB round trips and key provider calls, never the value', async () => {
    const value = canary('trace');
    const made = await api('POST', '/api/v1/secrets', { key: acct.adminKey, body: { name: 'traced', data: { value, other: 'x' } } });
    expect(made.status, made.text).toBe(201);
    const res = await api('POST', '/api/v1/diagnostics/trace', { key: acct.adminKey, body: { type: 'secret', id: made.body.data.secret.id } });
    expect(res.status, res.text).toBe(200);
    const t = res.body.data.trace;
    expect(res.text).not.toContain(value);
    expect(t.request).toEqual({ operation: 'read', type: 'secret', id: made.body.data.secret.id, open: true });
    expect(t.result).toEqual({ found: true, version: 1, sealed_fields: 2 });
    expect(t.phases.map((p: { name: string }) => p.name)).toEqual(['read_head', 'open_sealed']);
    // a secret is name-indexed: found by id through gsi1 (Query), then read consistently (GetItem)
    expect(t.phases[0]).toMatchObject({ dynamodb_round_trips: 2, dynamodb_operations: ['Query', 'GetItem'], key_provider_calls: 0 });
    expect(t.total.dynamodb_round_trips).toBe(t.phases[0].dynamodb_round_trips + t.phases[1].dynamodb_round_trips);
    expect(t.total.key_provider_calls).toBe(t.phases[1].key_provider_calls);
    // a data key not yet cached in the process costs one DynamoDB read and one key provider unwrap
    if (t.phases[1].key_provider_calls > 0)
      expect(t.phases[1]).toMatchObject({ dynamodb_operations: ['GetItem'], key_provider_operations: ['local:decryptDataKey'] });
    expect(typeof t.total.ms).toBe('number');

    const headOnly = await api('POST', '/api/v1/diagnostics/trace', {
      key: acct.adminKey,
      body: { type: 'secret', id: made.body.data.secret.id, open: false },
    });
    expect(headOnly.body.data.trace.result).toEqual({ found: true, version: 1 });
    expect(headOnly.body.data.trace.phases.map((p: { name: string }) => p.name)).toEqual(['read_head']);

    // a typed resource: one GetItem for its head
    const wifi = await api('POST', '/api/v1/wifi-credentials', {
      key: acct.adminKey,
      body: { name: 'w', ssid: 'x', security: 'wpa2-personal', passphrase: canary('w') },
    });
    const w = await api('POST', '/api/v1/diagnostics/trace', {
      key: acct.adminKey,
      body: { type: 'wifi_credential', id: wifi.body.data.wifi_credential.id },
    });
    expect(w.body.data.trace.phases[0]).toMatchObject({ dynamodb_operations: ['GetItem'] });

    // a resource without a sealed part (a container): nothing to open
    const box = await api('POST', '/api/v1/containers', { key: acct.adminKey, body: { name: 'traced-box' } });
    const c = await api('POST', '/api/v1/diagnostics/trace', { key: acct.adminKey, body: { type: 'container', id: box.body.data.container.id } });
    expect(c.body.data.trace.result).toEqual({ found: true, version: 1, sealed_fields: 0 });

    // another account's resource is the same 404 as a missing one
    for (const key of [other.adminKey, acct.adminKey]) {
      const id = key === other.adminKey ? made.body.data.secret.id : MISSING;
      const miss = await api('POST', '/api/v1/diagnostics/trace', { key, body: { type: 'secret', id } });
      expect([miss.status, errorCode(miss)]).toEqual([404, 'not_found']);
    }
  });

  it('401, 403, and 400 for a malformed description', async () => {
    const body = { type: 'secret', id: MISSING };
    expect((await api('POST', '/api/v1/diagnostics/trace', { body })).status).toBe(401);
    const res = await api('POST', '/api/v1/diagnostics/trace', { key: await acct.key(['secrets:read']), body });
    expect([res.status, errorCode(res)]).toEqual([403, 'insufficient_scope']);
    for (const bad of [{}, { type: 'nosuch', id: MISSING }, { type: 'secret', id: 'x' }, { ...body, operation: 'write' }, { ...body, extra: 1 }]) {
      const r = await api('POST', '/api/v1/diagnostics/trace', { key: acct.adminKey, body: bad });
      expect([r.status, errorCode(r)], JSON.stringify(bad)).toEqual([400, 'validation_failed']);
    }
  });
});

describe('GET /api/v1/mock/templates/{type}', () => {
  it(
    'for EVERY catalogue type: a body the type’s own create route accepts',
    async () => {
      const a = await newAccount('templates');
      const failures: string[] = [];
      for (const entry of Object.values(CATALOG)) {
        const res = await api('GET', `/api/v1/mock/templates/${entry.type}`, { key: a.adminKey });
        if (res.status !== 200) {
          failures.push(`${entry.type}: template ${res.status}`);
          continue;
        }
        const t = res.body.data.template;
        // the create route is the type's collection, or one of its create actions
        expect([entry.path, `${entry.path}/generate`, `${entry.path}/enroll`], entry.type).toContain(t.create.path);
        expect(routeByKey(t.create.method, t.create.path)?.handler, entry.type).toBeTruthy();
        const made = await api(t.create.method, t.create.path, { key: a.adminKey, body: t.body });
        if (made.status < 200 || made.status > 299)
          failures.push(`${entry.type}: ${t.create.method} ${t.create.path} ${made.status} ${made.text.slice(0, 300)}`);
      }
      expect(failures).toEqual([]);
      // one create per catalogue type, key generation included: more than the default minute on a busy machine
    },
    scaled(180_000),
  );

  it('401, 403, 404 for a type that is not in the catalogue, 400 for a malformed type', async () => {
    expect((await api('GET', '/api/v1/mock/templates/secret')).status).toBe(401);
    const res = await api('GET', '/api/v1/mock/templates/secret', { key: await acct.key(['secrets:write']) });
    expect([res.status, errorCode(res)]).toEqual([403, 'insufficient_scope']);
    const unknown = await api('GET', '/api/v1/mock/templates/nosuch', { key: acct.adminKey });
    expect([unknown.status, errorCode(unknown)]).toEqual([404, 'not_found']);
    expect(unknown.body.error).toContain('wifi_credential');
    const bad = await api('GET', '/api/v1/mock/templates/Bad-Type', { key: acct.adminKey });
    expect([bad.status, errorCode(bad)]).toEqual([400, 'validation_failed']);
  });
});

describe('POST /api/v1/mock/configure', () => {
  it('seeds the caller’s account with deterministic fixtures, idempotently', async () => {
    const a = await newAccount('sandbox');
    const res = await api('POST', '/api/v1/mock/configure', { key: a.adminKey, body: { secrets: 2 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.sandbox.created).toEqual([
      { type: 'container', name: 'sandbox' },
      { type: 'secret', name: 'sandbox-secret-1' },
      { type: 'secret', name: 'sandbox-secret-2' },
    ]);
    const got = await api('GET', '/api/v1/secrets/sandbox-secret-2', { key: a.adminKey });
    expect(got.body.data.secret).toMatchObject({ data: { value: 'example-value-2' }, container_id: res.body.data.sandbox.container_id });
    const again = await api('POST', '/api/v1/mock/configure', { key: a.adminKey });
    expect(again.status).toBe(201);
    expect(again.body.data.sandbox.created).toEqual([{ type: 'secret', name: 'sandbox-secret-3' }]);
    expect(again.body.data.sandbox.existing).toHaveLength(3);
  });

  it('concurrent calls are idempotent too: every one 201, each fixture made exactly once (no undocumented 409)', async () => {
    const a = await newAccount('sandbox-race');
    const all = await Promise.all(Array.from({ length: 6 }, () => api('POST', '/api/v1/mock/configure', { key: a.adminKey, body: { secrets: 2 } })));
    expect(all.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const made = all.flatMap((r) => r.body.data.sandbox.created.map((f: { name: string }) => f.name)).sort();
    expect(made).toEqual(['sandbox', 'sandbox-secret-1', 'sandbox-secret-2']);
    expect(new Set(all.map((r) => r.body.data.sandbox.container_id)).size).toBe(1);
  });

  it('401, 403, 400', async () => {
    expect((await api('POST', '/api/v1/mock/configure', { body: {} })).status).toBe(401);
    const res = await api('POST', '/api/v1/mock/configure', { key: await acct.key(['secrets:write']), body: {} });
    expect([res.status, errorCode(res)]).toEqual([403, 'insufficient_scope']);
    for (const body of [{ secrets: 0 }, { secrets: 51 }, { secrets: 'many' }, { other: 1 }]) {
      const r = await api('POST', '/api/v1/mock/configure', { key: acct.adminKey, body });
      expect([r.status, errorCode(r)], JSON.stringify(body)).toEqual([400, 'validation_failed']);
    }
  });
});
