import { join } from 'node:path';

/**
 * The embedded runtime's billing and integrator-helper settings, shared by the source runtime
 * (scripts/local/start.ts) and the artifact runtime (scripts/local/artifact/runtime.ts):
 * the local payment provider (lib/billing/local.ts) with its secret in a file under DATA_DIR
 * instead of Secrets Manager, and the mock routes turned on.
 */
export const localPaymentSecretFile = (dataDir: string): string => join(dataDir, 'payment', 'local-provider.json');

/** Environment of the source runtime (an explicitly set variable wins). */
export function localBillingEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return {
    PAYMENT_PROVIDER: env.PAYMENT_PROVIDER ?? 'local',
    PAYMENT_SECRET_FILE: env.PAYMENT_SECRET_FILE ?? localPaymentSecretFile(dataDir),
    MOCK_ROUTES_ENABLED: env.MOCK_ROUTES_ENABLED ?? '1',
  };
}

/** CDK context of the artifact runtime's synth: wired as a deployment with a payment secret and the helpers on. */
export const LOCAL_BILLING_CONTEXT = {
  paymentSecretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:local-payment',
  mockRoutes: true,
} as const;

/** The artifact runtime's stand-in for the payment secret: functions wired to it get the local provider and its file. */
export function localBillingOverlay(environment: Readonly<Record<string, string>>, dataDir: string): Record<string, string | undefined> {
  return environment.PAYMENT_SECRET_ID
    ? { PAYMENT_PROVIDER: 'local', PAYMENT_SECRET_ID: undefined, PAYMENT_SECRET_FILE: localPaymentSecretFile(dataDir) }
    : {};
}
