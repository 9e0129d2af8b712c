import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as z from 'zod/v4';
import type { config } from '../config.js';

/**
 * The payment provider's credentials: the API secret key and the webhook signing secret,
 * plus the provider's price id of each paid plan. They come from the deployment's secret
 * store and nowhere else: Secrets Manager (PAYMENT_SECRET_ID, the same way the HSM PIN is
 * read: lib/signing/registry.ts), or, for the embedded runtime's local provider, a file
 * (PAYMENT_SECRET_FILE) created on first use with a fresh signing secret. Never from a
 * request, never in the table, a log or an answer.
 */
const PaymentSecretDocument = z.object({
  secret_key: z.string().min(1),
  webhook_secret: z.string().min(1),
  prices: z.record(z.string(), z.string().min(1)).default({}),
});
export type PaymentSecrets = z.infer<typeof PaymentSecretDocument>;

type Cfg = Pick<ReturnType<typeof config>, 'PAYMENT_SECRET_ID' | 'PAYMENT_SECRET_FILE' | 'AWS_REGION'>;

/** Cached per process for a few minutes: a rotated secret is picked up without a deployment. */
const TTL_MS = 5 * 60_000;
let cached: { at: number; source: string; value: PaymentSecrets } | undefined;

function parse(text: string, where: string): PaymentSecrets {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`the payment secret (${where}) is not JSON`);
  }
  const parsed = PaymentSecretDocument.safeParse(raw);
  // the issues name fields only, never values
  if (!parsed.success)
    throw new Error(
      `the payment secret (${where}) must be {"secret_key", "webhook_secret", "prices"?}: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`,
    );
  return parsed.data;
}

/** The local provider's secret file, created atomically once (concurrent first uses agree on one secret). */
function localSecretFile(file: string): string {
  const fresh = JSON.stringify({
    secret_key: `sk_local_${randomBytes(24).toString('base64url')}`,
    webhook_secret: `whsec_${randomBytes(32).toString('base64')}`,
    prices: { team: 'price_local_team', business: 'price_local_business' },
  });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, fresh, { mode: 0o600 });
  try {
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temp, { force: true });
  }
  return readFileSync(file, 'utf8');
}

export async function paymentSecrets(cfg: Cfg, client?: Pick<SecretsManagerClient, 'send'>): Promise<PaymentSecrets> {
  const source = cfg.PAYMENT_SECRET_ID ?? cfg.PAYMENT_SECRET_FILE;
  if (!source) throw new Error('neither PAYMENT_SECRET_ID nor PAYMENT_SECRET_FILE is set');
  if (cached && cached.source === source && Date.now() - cached.at < TTL_MS) return cached.value;
  let value: PaymentSecrets;
  if (cfg.PAYMENT_SECRET_ID) {
    const sm = client ?? new SecretsManagerClient({ region: cfg.AWS_REGION });
    const out = await sm.send(new GetSecretValueCommand({ SecretId: cfg.PAYMENT_SECRET_ID }));
    value = parse(out.SecretString ?? (out.SecretBinary ? Buffer.from(out.SecretBinary).toString('utf8') : ''), 'Secrets Manager');
  } else {
    value = parse(localSecretFile(cfg.PAYMENT_SECRET_FILE!), 'file');
  }
  cached = { at: Date.now(), source, value };
  return value;
}
