import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { api, auditLogs, baseUrl, errorCode, newAccount } from '../helpers/api.js';

/** A request from another loopback address (127.0.0.0/8 is all local), to test IP rules. */
function fromAddress(localAddress: string, path: string, key: string): Promise<{ status: number; body: any }> {
  const url = new URL(path, baseUrl());
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'GET',
        localAddress,
        headers: { authorization: `Bearer ${key}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', fail);
    req.end();
  });
}

describe('PUT /api/v1/settings', () => {
  it('sets, merges and resets settings and returns the effective values', async () => {
    const a = await newAccount('set');
    const res = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { history_retention_versions: 25, webhooks: { max_attempts: 4 } } });
    expect(res.status).toBe(200);
    expect(res.body.data.settings).toMatchObject({
      history_retention_versions: 25,
      temp_access_max_seconds: 86400,
      webhooks: { max_attempts: 4, allow_loopback: false },
      api_key_ip_allowlist: [],
    });
    const more = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { temp_access_max_seconds: 3600 } });
    expect(more.body.data.settings).toMatchObject({ history_retention_versions: 25, temp_access_max_seconds: 3600, webhooks: { max_attempts: 4 } });
    const reset = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { history_retention_versions: null } });
    expect(reset.body.data.settings).toMatchObject({ history_retention_versions: 10, temp_access_max_seconds: 3600 });
    const audit = await api('GET', '/api/v1/audit/logs?action=settings.update', { key: a.adminKey });
    expect(audit.body.data.entries.length).toBe(3);
    expect(audit.body.data.entries[2].detail).toMatchObject({ changed: ['history_retention_versions', 'webhooks'] });
  });

  it('400 on unknown keys, wrong types, out-of-range values and an empty body', async () => {
    const a = await newAccount('set400');
    for (const body of [
      { unknown_setting: 1 },
      { webhooks: { max_attempts: 4, extra: true } },
      { history_retention_versions: '10' },
      { history_retention_versions: 0 },
      { temp_access_max_seconds: 10 },
      { webhooks: { timeout_seconds: 31 } },
      { api_key_ip_allowlist: ['not-an-ip'] },
      { api_key_ip_allowlist: ['10.0.0.0/33'] },
      {},
    ]) {
      const res = await api('PUT', '/api/v1/settings', { key: a.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe('validation_failed');
    }
  });

  it('403 without settings:write, and settings stay per account', async () => {
    const a = await newAccount('set403');
    const key = await a.key(['audit:read']);
    const res = await api('PUT', '/api/v1/settings', { key, body: { history_retention_versions: 5 } });
    expect(res.status).toBe(403);
    const other = await newAccount('set-other');
    await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { history_retention_versions: 5 } });
    const theirs = await api('GET', '/api/v1/quotas', { key: other.adminKey });
    expect(theirs.status).toBe(200);
    const sync = await api('GET', '/api/v1/cli/sync?limit=1', { key: other.adminKey });
    expect(sync.body.data.account.settings.history_retention_versions).toBe(10);
  });

  it('the API-key IP allow-list refuses keys from other addresses, and cannot lock out its own caller', async () => {
    const a = await newAccount('ipal');
    const lockout = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { api_key_ip_allowlist: ['10.0.0.0/8'] } });
    expect(lockout.status).toBe(400);
    expect(errorCode(lockout)).toBe('would_lock_out');
    const set = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { api_key_ip_allowlist: ['127.0.0.1/32', '::1'] } });
    expect(set.status).toBe(200);
    expect((await fromAddress('127.0.0.1', '/api/v1/quotas', a.adminKey)).status).toBe(200);
    const refused = await fromAddress('127.0.0.2', '/api/v1/quotas', a.adminKey);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('ip_not_allowed');
    // another account is unaffected from the same address
    const other = await newAccount('ipal-other');
    expect((await fromAddress('127.0.0.2', '/api/v1/quotas', other.adminKey)).status).toBe(200);
    // GET /quotas is read-only: its denial is written by the audit writer (lib/audit/queue.ts)
    const denied = await auditLogs(a.adminKey, 'outcome=denied', (entries) => entries.length > 0);
    expect(denied[0]).toMatchObject({ action: 'access.denied', source_ip: '127.0.0.2', detail: { code: 'ip_not_allowed' } });
    const cleared = await api('PUT', '/api/v1/settings', { key: a.adminKey, body: { api_key_ip_allowlist: [] } });
    expect(cleared.status).toBe(200);
    expect((await fromAddress('127.0.0.2', '/api/v1/quotas', a.adminKey)).status).toBe(200);
  });
});
