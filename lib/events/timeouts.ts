import { config } from '../config.js';

/**
 * THE timeout policy of every outbound call (the destination classifier's partner,
 * ./ssrf.ts): how long the service waits for a server it does not run. No other module
 * sets an outbound time limit of its own (test/unit/outbound-timeouts.test.ts reads lib/ for
 * one). Three classes:
 * - a document fetched by URL (a JWK set, an identity provider's discovery, token and
 *   userinfo answers, a breach range): DOCUMENT_FETCH_MS;
 * - a provider's API (the payment provider, an IPFS node): PROVIDER_API_MS;
 * - a customer's server, with the deployment's knob (config): LDAP_TIMEOUT_MS, the
 *   database's DATABASE_CONNECT_TIMEOUT_MS (a connection's own connect_timeout_seconds may
 *   only shorten it) and DATABASE_STATEMENT_TIMEOUT_MS, the ACME directory's
 *   ACME_TIMEOUT_MS for a whole enrollment (each of its requests at most PROVIDER_API_MS).
 * Each is bounded by REQUEST_BUDGET_MS, so a call made while an API request waits ends before
 * API Gateway gives up on it (29 s) and the caller gets the service's own answer (a 502/503
 * naming the server), never a gateway timeout. Webhook deliveries run outside any request:
 * the account's `webhooks.timeout_seconds`, at most three times WEBHOOK_TIMEOUT_MS.
 */
export const REQUEST_BUDGET_MS = 28_000;
export const DOCUMENT_FETCH_MS = 5_000;
export const PROVIDER_API_MS = 10_000;

export type OutboundPath =
  | 'jwks'
  | 'identity-provider'
  | 'breach-range'
  | 'ipfs'
  | 'payment-provider'
  | 'ldap'
  | 'database-connect'
  | 'database-statement'
  | 'acme-enrollment'
  | 'acme-request';

/** The time limit of one call on `path` (ms). */
export function outboundTimeoutMs(path: OutboundPath): number {
  // fixed limits need no configuration: only the paths a deployment tunes read it
  const ms = (): number => {
    switch (path) {
      case 'jwks':
      case 'identity-provider':
      case 'breach-range':
        return DOCUMENT_FETCH_MS;
      case 'ipfs':
      case 'payment-provider':
        return PROVIDER_API_MS;
      case 'ldap':
        return config().LDAP_TIMEOUT_MS;
      case 'database-connect':
        return config().DATABASE_CONNECT_TIMEOUT_MS;
      case 'database-statement':
        return config().DATABASE_STATEMENT_TIMEOUT_MS;
      case 'acme-enrollment':
        return config().ACME_TIMEOUT_MS;
      case 'acme-request':
        return Math.min(PROVIDER_API_MS, config().ACME_TIMEOUT_MS);
    }
  };
  return Math.min(ms(), REQUEST_BUDGET_MS);
}

/** A database connection's connect limit: its own setting may shorten the deployment's, never lengthen it. */
export const databaseConnectMs = (ownMs: number | undefined): number => Math.min(ownMs ?? Infinity, outboundTimeoutMs('database-connect'));

/** One webhook delivery attempt (background, outside any request): the account's setting, at most 3 × WEBHOOK_TIMEOUT_MS. */
export const webhookAttemptMs = (settingSeconds: number): number => Math.min(settingSeconds * 1000, config().WEBHOOK_TIMEOUT_MS * 3);
