import { config } from '../../lib/config.js';
import { keyProvider } from '../../lib/crypto/envelope.js';
import { defineHandler, ok, serviceUnavailable } from '../../lib/http/index.js';
import { probeTable } from '../../lib/store/client.js';
import { Health, Ready, Welcome } from '../../lib/public/schemas.js';

export const welcome = defineHandler({
  summary: 'Describe the service',
  responses: { 200: Welcome },
  async handler() {
    const { SERVICE_NAME, SERVICE_VERSION } = config();
    return ok({ service: SERVICE_NAME, version: SERVICE_VERSION, api: '/api/v1', health: '/health', ready: '/ready' });
  },
});

/** Liveness: the function runs; no dependency is touched. */
export const health = defineHandler({
  summary: 'Check liveness',
  description: 'Answers as soon as the function runs; no dependency is touched.',
  responses: { 200: Health },
  async handler() {
    return ok({ status: 'ok' });
  },
});

export const healthz = health;

/** Readiness: the table answers and the key provider wraps and unwraps. */
export const ready = defineHandler({
  summary: 'Check readiness',
  description: 'Probes the table and the key provider (a wrap and unwrap); 503 names the failed checks.',
  responses: { 200: Ready },
  errors: ['service_unavailable'],
  async handler() {
    const checks: Record<string, 'ok' | 'failed'> = {};
    const probe = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
        checks[name] = 'ok';
      } catch {
        checks[name] = 'failed';
      }
    };
    await Promise.all([probe('table', probeTable), probe('key_provider', () => keyProvider().check())]);
    if (Object.values(checks).some((v) => v !== 'ok')) {
      throw serviceUnavailable(
        `not ready: ${Object.entries(checks)
          .filter(([, v]) => v !== 'ok')
          .map(([k]) => k)
          .join(', ')}`,
      );
    }
    return ok({ status: 'ready', checks });
  },
});
