import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { scaled } from './timeouts.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export const baseUrl = () => inject('baseUrl');
export const rootKey = () => inject('rootKey');

/** One real HTTP request to the local gateway. */
export async function api<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl()}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** An entry of GET /api/v1/audit/logs. */
export interface AuditLogEntry {
  id: string;
  time: string;
  tenant_id: string;
  actor: { type: string; id: string; user?: string | null; tenant_id?: string };
  action: string;
  resource: { type: string; id: string; name?: string };
  outcome: string;
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  detail?: Record<string, any>;
  chain: { seq: number; hash: string } | null;
}

/**
 * The entries of GET /api/v1/audit/logs?`query` (with `key`, audit:read) once `found(entries)`
 * holds. A read-only route's audit entry is sent to the audit queue before the route answers
 * and written by the audit writer shortly after (lib/audit/queue.ts), so a test reading it
 * right after the route polls for it; bounded by `timeoutMs` (then it throws with what it saw).
 */
export async function auditLogs(key: string, query: string, found: (entries: AuditLogEntry[]) => boolean, ms = 30_000): Promise<AuditLogEntry[]> {
  const timeoutMs = scaled(ms);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api('GET', `/api/v1/audit/logs?${query}`, { key });
    if (res.status !== 200) throw new Error(`GET /api/v1/audit/logs?${query}: ${res.status} ${res.text}`);
    const entries = res.body.data.entries as AuditLogEntry[];
    if (found(entries)) return entries;
    if (Date.now() > deadline) throw new Error(`the audit entries of ${query} did not arrive within ${timeoutMs} ms: ${JSON.stringify(entries).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A value marked as secret: the leak check after the suite looks for the marker everywhere. */
export const canary = (label = 'v') => `CANARY-${label}-${randomBytes(9).toString('base64url')}`;
export const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface TestAccount {
  tenantId: string;
  adminKey: string;
  adminEmail: string;
  /** A key of this account with exactly these scopes (one key per scope set, reused). */
  key(scopes: string[]): Promise<string>;
}

/** A fresh account created through the operator route, with its first admin key. */
export async function newAccount(label = 'acct'): Promise<TestAccount> {
  const adminEmail = `${unique(label)}@example.test`;
  const res = await api('POST', '/api/v1/admin/tenants', { key: rootKey(), body: { name: unique(label), admin_email: adminEmail } });
  if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${res.text}`);
  const adminKey = res.body.data.api_key.key as string;
  const keys = new Map<string, Promise<string>>();
  return {
    tenantId: res.body.data.tenant.id,
    adminKey,
    adminEmail,
    key(scopes) {
      const id = [...scopes].sort().join(' ');
      if (!keys.has(id)) {
        keys.set(
          id,
          api('POST', '/api/v1/api-keys', { key: adminKey, body: { name: unique('key'), scopes } }).then((k) => {
            if (k.status !== 201) throw new Error(`key creation failed: ${k.status} ${k.text}`);
            return k.body.data.api_key.key as string;
          }),
        );
      }
      return keys.get(id)!;
    },
  };
}

/** Asserts the error envelope of docs/api.md, "Conventions" and returns its code. */
export function errorCode(res: ApiResponse): string {
  const b = res.body as { success?: unknown; error?: unknown; code?: unknown; request_id?: unknown };
  if (b?.success !== false || typeof b.error !== 'string' || typeof b.code !== 'string' || typeof b.request_id !== 'string') {
    throw new Error(`not an error envelope: ${res.status} ${res.text}`);
  }
  return b.code;
}

/**
 * Asserts an RFC 6749 §5.2 error object (what the OAuth routes answer: `error`,
 * `error_description`, no envelope, never cached) and returns its `error`.
 */
export function oauthError(res: ApiResponse): string {
  const b = res.body as { error?: unknown; error_description?: unknown; success?: unknown; code?: unknown };
  if (typeof b?.error !== 'string' || typeof b.error_description !== 'string' || 'success' in b || 'code' in b) {
    throw new Error(`not an OAuth error object: ${res.status} ${res.text}`);
  }
  if (res.headers.get('cache-control') !== 'no-store') throw new Error(`OAuth error without Cache-Control: no-store: ${res.headers.get('cache-control')}`);
  return b.error;
}
