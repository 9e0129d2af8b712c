import { KMSClient } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../config.js';
import { admitted } from '../core/admission.js';
import type { SigningBackend } from './backend.js';
import { CloudHsmDescription, cloudHsmPreparer } from './cloudhsm.js';
import { KmsSigningBackend } from './kms.js';
import { METRIC, observeClient } from '../core/metrics.js';
import { Pkcs11Backend } from './pkcs11.js';

/**
 * The signing backends of this process, by name, built from configuration once (at the
 * first use) and kept for the life of the process: the pkcs11 backend's module and
 * session pool are reused by every warm invocation.
 */
export const BACKEND_NAMES = ['pkcs11', 'kms'] as const;

let backends: Map<string, SigningBackend> | undefined;

/**
 * The crypto user's PIN: PKCS11_PIN, or the Secrets Manager secret PKCS11_PIN_SECRET_ID
 * (a plain string, or JSON {"username", "password"} → CloudHSM's `<user>:<password>`, or
 * {"pin"}). Fetched when the pool connects; a failed fetch is not cached.
 */
export function pinResolver(
  cfg: Pick<ReturnType<typeof config>, 'PKCS11_PIN' | 'PKCS11_PIN_SECRET_ID' | 'AWS_REGION'>,
  client?: Pick<SecretsManagerClient, 'send'>,
): () => Promise<string> {
  return async () => {
    if (cfg.PKCS11_PIN) return cfg.PKCS11_PIN;
    if (!cfg.PKCS11_PIN_SECRET_ID) throw new Error('neither PKCS11_PIN nor PKCS11_PIN_SECRET_ID is set');
    const sm = client ?? new SecretsManagerClient({ region: cfg.AWS_REGION });
    const out = await sm.send(new GetSecretValueCommand({ SecretId: cfg.PKCS11_PIN_SECRET_ID }));
    const text = out.SecretString ?? (out.SecretBinary ? Buffer.from(out.SecretBinary).toString('utf8') : '');
    return parsePin(text);
  };
}

export function parsePin(text: string): string {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const v = JSON.parse(trimmed) as { username?: unknown; password?: unknown; pin?: unknown };
    if (typeof v.pin === 'string' && v.pin) return v.pin;
    if (typeof v.username === 'string' && typeof v.password === 'string' && v.username && v.password) return `${v.username}:${v.password}`;
    throw new Error('the PIN secret must hold a string, {"pin"} or {"username", "password"}');
  }
  if (!trimmed) throw new Error('the PIN secret is empty');
  return trimmed;
}

/**
 * The pkcs11 backend of this process. With CLOUDHSM_CLUSTER_ID (AWS), the signing functions
 * look the cluster's HSMs up before the module starts (lib/signing/cloudhsm.ts), and a
 * function with the cluster id but no module (GET /api/v1/crypto/backends, outside the VPC)
 * describes the cluster instead of connecting.
 */
function pkcs11(cfg: ReturnType<typeof config>): SigningBackend {
  const cluster = cfg.CLOUDHSM_CLUSTER_ID
    ? { clusterId: cfg.CLOUDHSM_CLUSTER_ID, region: cfg.AWS_REGION, ...(cfg.CLOUDHSM_ENDPOINT ? { endpoint: cfg.CLOUDHSM_ENDPOINT } : {}) }
    : undefined;
  if (cluster && !cfg.PKCS11_MODULE) return new CloudHsmDescription({ ...cluster, tokenLabel: cfg.PKCS11_TOKEN_LABEL });
  return new Pkcs11Backend({
    module: cfg.PKCS11_MODULE,
    tokenLabel: cfg.PKCS11_TOKEN_LABEL,
    pin: pinResolver(cfg),
    poolSize: cfg.PKCS11_POOL_SIZE,
    ...(cluster ? { prepare: cloudHsmPreparer({ ...cluster, configPath: cfg.CLOUDHSM_CLIENT_CONFIG }) } : {}),
  });
}

function build(): Map<string, SigningBackend> {
  const cfg = config();
  let kms: KMSClient | undefined;
  const list: SigningBackend[] = [
    pkcs11(cfg),
    new KmsSigningBackend({
      enabled: cfg.SIGNING_KMS_ENABLED ?? cfg.KEY_PROVIDER === 'kms',
      client: () => (kms ??= observeClient(new KMSClient({ region: cfg.AWS_REGION }), METRIC.kmsCalls)),
    }),
  ];
  return new Map(list.map((b) => [b.name, admittedFirst(b)]));
}

/**
 * Admission before the signing devices (issue 32): a request that will be refused
 * (suspended account, rate limit, IP allow-list) never makes the HSM or KMS generate, sign
 * or destroy. POST /api/v1/crypto/sign runs speculatively (lib/http/define-handler.ts): its
 * key read goes out at once, the device call waits for admission (lib/core/admission.ts).
 */
function admittedFirst<B extends SigningBackend>(b: B): B {
  // a proxy, not a copy: the backend stays itself (its class, close(), its private state);
  // only the three device calls wait for admission first
  const gated = new Set<PropertyKey>(['generateKey', 'sign', 'destroyKey']);
  return new Proxy(b, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (!gated.has(prop)) return method.bind(target);
      return async (...args: unknown[]) => {
        await admitted();
        return method.apply(target, args);
      };
    },
  });
}

export function signingBackends(): ReadonlyMap<string, SigningBackend> {
  return (backends ??= build());
}

export function signingBackend(name: string): SigningBackend | undefined {
  return signingBackends().get(name);
}

/** Replaces one backend of this process (tests: a backend on a broken module or a pulled token). */
export function setSigningBackend(backend: SigningBackend): void {
  (backends ??= build()).set(backend.name, admittedFirst(backend));
}
