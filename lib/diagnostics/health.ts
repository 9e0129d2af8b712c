import type { CallContext } from '../auth/principal.js';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import { config } from '../config.js';
import { keyProvider } from '../crypto/envelope.js';
import { KNOWN_SCOPES } from '../routes.js';
import { listBackends } from '../signing/service.js';
import { tableName } from '../store/client.js';
import { probeAccountItem } from './store.js';

/**
 * GET /api/v1/diagnostics: what support needs to see first. Each dependency probed (the
 * table, the key provider, the signing device) or, where this function holds no grant to
 * probe it, reported as configured or not (the webhook queue, the PKI bucket, the payment
 * provider); the versions; the configuration with every secret-bearing value redacted; the
 * caller's effective scopes (admin:* expanded).
 *
 * The platform's internals (the configuration — file paths, endpoints, queue URLs, the table
 * name —, what each probe says beyond its status, the runtime's version) describe the operator's
 * deployment, not the caller's account: only a platform operator sees them. An account admin
 * gets each dependency's status, the service version and their own credential.
 */
type Probe = {
  readonly name: string;
  readonly status: 'ok' | 'error' | 'configured' | 'not_configured' | 'unavailable';
  readonly [k: string]: unknown;
};

async function probe(name: string, run: () => Promise<Record<string, unknown>>): Promise<Probe> {
  const started = performance.now();
  try {
    const extra = await run();
    return { name, status: 'ok', latency_ms: Math.round(performance.now() - started), ...extra };
  } catch (error) {
    // the error's class only: messages of drivers may carry request data
    return { name, status: 'error', latency_ms: Math.round(performance.now() - started), error: (error as Error).name };
  }
}

/** Names whose values are secrets or point at them. */
const SECRET_NAME = /PIN|SECRET|PASSWORD|TOKEN|KEY|CREDENTIAL/i;

/** The configuration as support may see it: secret-bearing values redacted, credentials stripped from URLs. */
export function redactedConfiguration(cfg: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(cfg).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(name)) out[name] = '[redacted]';
    else if (typeof value === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(value)) out[name] = value.replace(/\/\/[^/]*@/, '//[redacted]@');
    else out[name] = value;
  }
  return out;
}

export async function diagnostics(ctx: CallContext) {
  const cfg = config();
  const hsm = async (): Promise<Probe> => {
    const backends = await listBackends();
    const pkcs11 = backends.find((b) => b.name === 'pkcs11');
    if (!pkcs11?.configured) return { name: 'hsm', status: 'not_configured' };
    return {
      name: 'hsm',
      status: pkcs11.status === 'available' ? 'ok' : pkcs11.status === 'error' ? 'error' : 'unavailable',
      ...(pkcs11.reason ? { reason: pkcs11.reason } : {}),
    };
  };
  const dependencies: Probe[] = await Promise.all([
    probe('table', async () => {
      await probeAccountItem(ctx.principal.tenantId);
      return { table: tableName() };
    }),
    probe('key_provider', async () => {
      await keyProvider().check();
      return { provider: cfg.KEY_PROVIDER };
    }),
    hsm().catch((error: unknown): Probe => ({ name: 'hsm', status: 'error', error: (error as Error).name })),
  ]);
  dependencies.push(
    {
      name: 'queue',
      status: cfg.QUEUE_PROVIDER === 'memory' || cfg.WEBHOOK_QUEUE_URL ? 'configured' : 'not_configured',
      provider: cfg.QUEUE_PROVIDER,
    },
    { name: 's3', status: cfg.PKI_PUBLISH_BUCKET ? 'configured' : 'not_configured' },
    {
      name: 'payment_provider',
      status: cfg.PAYMENT_PROVIDER ? 'configured' : 'not_configured',
      ...(cfg.PAYMENT_PROVIDER ? { provider: cfg.PAYMENT_PROVIDER } : {}),
    },
  );
  const p = ctx.principal;
  const status = dependencies.some((d) => d.status === 'error') ? 'degraded' : 'ok';
  const operatorView = p.operator
    ? {
        detail: 'operator' as const,
        status,
        dependencies,
        versions: { service: cfg.SERVICE_VERSION, node: process.version },
        configuration: redactedConfiguration(cfg as unknown as Record<string, unknown>),
      }
    : {
        detail: 'account' as const,
        status,
        dependencies: dependencies.map(({ name, status: s, latency_ms }) => ({
          name,
          status: s,
          ...(latency_ms === undefined ? {} : { latency_ms }),
        })),
        versions: { service: cfg.SERVICE_VERSION },
      };
  return {
    ...operatorView,
    caller: {
      tenant_id: p.tenantId,
      principal: { kind: p.kind, id: p.id, user: p.user },
      operator: p.operator,
      scopes: p.scopes,
      effective_scopes: p.scopes.includes(ADMIN_SCOPE) ? KNOWN_SCOPES : [...p.scopes].sort(),
    },
  };
}
