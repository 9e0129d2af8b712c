import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OutboundPath } from '../../lib/events/timeouts.js';

/**
 * lib/events/timeouts.ts is THE timeout policy of every outbound call: each path's limit
 * comes from it and ends within an API request's budget, and no other module of lib/ sets an
 * outbound time limit of its own (a number, or a *_TIMEOUT_MS knob read directly).
 */
const PATHS: readonly OutboundPath[] = [
  'jwks',
  'identity-provider',
  'breach-range',
  'ipfs',
  'payment-provider',
  'ldap',
  'database-connect',
  'database-statement',
  'acme-enrollment',
  'acme-request',
];

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  vi.resetModules();
});
/** The policy under a deployment's configuration (config is parsed once per module graph). */
async function policy(env: Record<string, string> = {}) {
  Object.assign(process.env, { KEY_PROVIDER: 'local', LOCAL_MASTER_KEY_FILE: '/tmp/master.key', TABLE_NAME: 'secrets' }, env);
  vi.resetModules();
  return import('../../lib/events/timeouts.js');
}
/** Every knob at the largest value config admits. */
const LONGEST = {
  ACME_TIMEOUT_MS: '28000',
  LDAP_TIMEOUT_MS: '25000',
  DATABASE_CONNECT_TIMEOUT_MS: '20000',
  DATABASE_STATEMENT_TIMEOUT_MS: '25000',
  WEBHOOK_TIMEOUT_MS: '30000',
};

const root = join(import.meta.dirname, '../..');
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}
/** Code only: block and line comments blanked, lines kept (a comment may name a knob). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).replace(/(^|[^:])\/\/.*$/gm, '$1');

/** Where a lib module may still read a timeout knob itself, and why. */
const ALLOWED: Record<string, string> = {
  'lib/config.ts': 'declares the knobs',
  'lib/events/timeouts.ts': 'the policy',
  // the account setting's default (webhooks.timeout_seconds), which webhookAttemptMs then bounds
  'lib/settings/settings.ts': 'WEBHOOK_TIMEOUT_MS as the setting default',
};
const OWN_LIMITS = [
  /\btimeout\w*\s*[:=]\s*[0-9][0-9_]*/i,
  /\bconnectTimeout\w*\s*:\s*[0-9]/,
  /AbortSignal\.timeout\(/,
  /(cfg|config\(\))\.(WEBHOOK|ACME|LDAP|DATABASE_CONNECT|DATABASE_STATEMENT)_TIMEOUT_MS/,
];

describe('the outbound timeout policy', () => {
  it('every outbound path has a limit within the request budget (API Gateway answers 504 at 29 s), each knob at its largest too', async () => {
    for (const env of [{}, LONGEST]) {
      const { outboundTimeoutMs, REQUEST_BUDGET_MS } = await policy(env);
      for (const path of PATHS) {
        const ms = outboundTimeoutMs(path);
        expect(ms, `${path} with ${JSON.stringify(env)}`).toBeGreaterThan(0);
        expect(ms, `${path} with ${JSON.stringify(env)}`).toBeLessThanOrEqual(REQUEST_BUDGET_MS);
      }
    }
    const { outboundTimeoutMs, REQUEST_BUDGET_MS, DOCUMENT_FETCH_MS, PROVIDER_API_MS } = await policy();
    expect(REQUEST_BUDGET_MS).toBeLessThan(29_000);
    expect(outboundTimeoutMs('jwks')).toBe(DOCUMENT_FETCH_MS);
    expect(outboundTimeoutMs('identity-provider')).toBe(DOCUMENT_FETCH_MS);
    expect(outboundTimeoutMs('payment-provider')).toBe(PROVIDER_API_MS);
    expect(outboundTimeoutMs('acme-request')).toBeLessThanOrEqual(outboundTimeoutMs('acme-enrollment'));
  });

  it('a connection’s own connect timeout only shortens the deployment’s; a webhook attempt is bounded by 3 × WEBHOOK_TIMEOUT_MS', async () => {
    const { outboundTimeoutMs, databaseConnectMs, webhookAttemptMs } = await policy({ WEBHOOK_TIMEOUT_MS: '10000' });
    const max = outboundTimeoutMs('database-connect');
    expect(databaseConnectMs(undefined)).toBe(max);
    expect(databaseConnectMs(max + 60_000)).toBe(max);
    expect(databaseConnectMs(100)).toBe(100);
    expect(webhookAttemptMs(1)).toBe(1000);
    expect(webhookAttemptMs(1000)).toBe(30_000);
  });

  it('no other module of lib/ sets an outbound time limit of its own', () => {
    const found: string[] = [];
    for (const file of sources(join(root, 'lib'))) {
      const rel = relative(root, file);
      if (rel in ALLOWED) continue;
      code(readFileSync(file, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          if (OWN_LIMITS.some((re) => re.test(line))) found.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found, 'set the limit in lib/events/timeouts.ts (outboundTimeoutMs) instead').toEqual([]);
  });
});
