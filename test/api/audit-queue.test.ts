import { beforeAll, describe, expect, it } from 'vitest';
import { verifyExport } from '../../lib/audit/verify.js';
import { api, auditLogs, canary, errorCode, newAccount, unique, type AuditLogEntry, type TestAccount } from '../helpers/api.js';

/**
 * The audit entries of read-only routes (lib/audit/queue.ts): such a route holds no table
 * write, so it sends its entry to the audit queue before it answers, and the audit writer
 * (functions/audit/writer.ts, the queue's SQS mapping on the local SQS engine) writes it. A
 * denied request and a sensitive read of read-only routes end up in GET /api/v1/audit/logs
 * with their actor, outcome and request id, in the caller's account only, and are sealed into
 * the account's chain by the table's stream like every other entry.
 */
let acct: TestAccount;
let other: TestAccount;
let narrow: { id: string; key: string };
let denied: { requestId: string };
let read: { requestId: string };
const value = canary('audit-queue');

beforeAll(async () => {
  acct = await newAccount('audit-queue');
  other = await newAccount('audit-queue-other');
  const made = await api('POST', '/api/v1/passwords', { key: acct.adminKey, body: { name: unique('pw'), username: 'u', password: value, url: 'https://example.test' } });
  expect(made.status, made.text).toBe(201);
  const k = await api('POST', '/api/v1/api-keys', { key: acct.adminKey, body: { name: unique('narrow'), scopes: ['audit:read'] } });
  expect(k.status, k.text).toBe(201);
  narrow = { id: k.body.data.api_key.id, key: k.body.data.api_key.key };

  // a read-only route refuses the narrow key: a denial of an authenticated caller
  const refused = await api('POST', '/api/v1/export/json', { key: narrow.key, body: {} });
  expect(refused.status).toBe(403);
  expect(errorCode(refused)).toBe('insufficient_scope');
  denied = { requestId: refused.headers.get('x-request-id')! };
  // a sensitive read of a read-only route: an export with values
  const exported = await api('POST', '/api/v1/export/json', { key: acct.adminKey, body: {}, headers: { 'user-agent': 'audit-queue-test/1' } });
  expect(exported.status, exported.text).toBe(200);
  read = { requestId: exported.headers.get('x-request-id')! };
});

const ofRequest = (entries: AuditLogEntry[], requestId: string) => entries.find((e) => e.request_id === requestId);

describe('a read-only route\'s audit entries go through the audit queue and the writer into the trail', () => {
  it('the denial: access.denied, outcome denied, the narrow key as actor, the route as resource', async () => {
    const entries = await auditLogs(acct.adminKey, 'outcome=denied', (found) => ofRequest(found, denied.requestId) !== undefined);
    expect(ofRequest(entries, denied.requestId)).toMatchObject({
      tenant_id: acct.tenantId,
      action: 'access.denied',
      outcome: 'denied',
      actor: { type: 'api_key', id: narrow.id, user: acct.adminEmail, tenant_id: acct.tenantId },
      resource: { type: 'route', id: 'POST /api/v1/export/json' },
      detail: { code: 'insufficient_scope' },
    });
  });

  it('the sensitive read: export.json, outcome success, the admin key as actor, counts and never the value', async () => {
    const entries = await auditLogs(acct.adminKey, 'action=export.json', (found) => ofRequest(found, read.requestId) !== undefined);
    const entry = ofRequest(entries, read.requestId)!;
    expect(entry).toMatchObject({
      tenant_id: acct.tenantId,
      action: 'export.json',
      outcome: 'success',
      actor: { type: 'api_key', user: acct.adminEmail, tenant_id: acct.tenantId },
      resource: { type: 'export', id: read.requestId },
      user_agent: 'audit-queue-test/1',
      detail: { count: 1, types: { password: 1 } },
    });
    expect(entry.actor.id).not.toBe(narrow.id);
    expect(JSON.stringify(entries)).not.toContain(value);
    // only in the caller's account
    const theirs = await api('GET', '/api/v1/audit/logs?action=export.json', { key: other.adminKey });
    expect(theirs.status).toBe(200);
    expect(ofRequest(theirs.body.data.entries, read.requestId)).toBeUndefined();
  });

  it('both are sealed into the account\'s chain by the stream, and the export verifies with them', async () => {
    const entries = await auditLogs(acct.adminKey, 'limit=100', (found) =>
      [denied.requestId, read.requestId].every((r) => ofRequest(found, r)?.chain !== null && ofRequest(found, r) !== undefined),
    );
    for (const r of [denied.requestId, read.requestId]) expect(ofRequest(entries, r)!.chain).toMatchObject({ seq: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const exported = await api('GET', '/api/v1/audit/logs/export?format=jsonl', { key: acct.adminKey });
    expect(exported.status).toBe(200);
    const result = verifyExport(exported.text);
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    const ids = exported.text
      .trim()
      .split('\n')
      .slice(0, -1)
      .map((l) => (JSON.parse(l) as { request_id: string }).request_id);
    expect(ids).toEqual(expect.arrayContaining([denied.requestId, read.requestId]));
    expect(exported.text).not.toContain(value);
  });
});
