import type { APIGatewayProxyEvent } from 'aws-lambda';
import { recordAudit } from '../audit/audit.js';
import type { Principal } from '../auth/principal.js';
import { config } from '../config.js';
import { forbidden, HttpError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { count, METRIC } from '../core/metrics.js';
import type { Route } from '../routes.js';
import { accountSettings, ipAllowed } from '../settings/settings.js';
import { keys } from '../store/keys.js';
import type { Tenant } from '../store/tenants.js';
import { today } from '../store/usage.js';
import { take, type BucketRef, type Decision } from './bucket.js';

/**
 * Admission of every request (wired into defineHandler's authentication step):
 *
 * - rate limits, token buckets in the table (lib/ratelimit/bucket.ts):
 *   - per account: capacity = quota `requests_per_minute` (default DEFAULT_REQUESTS_PER_MINUTE),
 *     refilled at capacity/60 per second, kept on the account's usage item of the day
 *     (`METER#<tid>/USAGE#<day>`, the account's metering partition: lib/store/keys.ts
 *     `usageDay`), so the one conditional write also counts the request for
 *     GET /api/v1/usage: the request costs the same single write the usage meter cost;
 *   - per credential (API key, token, device): quota `requests_per_minute_per_credential`,
 *     only when set below the account's rate (one more write per request for such accounts);
 *   - per source IP for the routes that authenticate themselves (login flows, temporary
 *     access, inbound webhooks): config RATE_LIMIT_IP_PER_MINUTE (6000). Public routes
 *     (health, pricing) are left to API Gateway's throttling: they read nothing.
 *   The account bucket is taken as soon as the credential names its account, in parallel
 *   with the read of the account, so it adds no round trip to the request. Exceeded → 429
 *   `rate_limited` with `Retry-After` (seconds) and the RateLimit headers below. If the table
 *   cannot be reached for the check, the request is admitted (fail open) and logged.
 * - the API-key IP allow-list of the account settings: 403 `ip_not_allowed`.
 * - every 403 of an authenticated caller is written to the audit trail (outcome `denied`).
 *
 * Headers on responses to checked requests (draft-ietf-httpapi-ratelimit-headers):
 *   RateLimit-Policy: "account";q=6000;w=60
 *   RateLimit: "account";r=<tokens left>;t=<seconds until full, or until one token when refused>
 */
export const DEFAULT_REQUESTS_PER_MINUTE = 6_000;
const DAY_TTL_SECONDS = 400 * 86400;

/**
 * Admitted writes per second one bucket item is meant to take (docs/capacity.md): a
 * DynamoDB partition takes about 1,000 writes/s, so an account's bucket (and its usage
 * count) is spread over ceil(rate per second / SHARD_WRITES_PER_SECOND) items, at most
 * MAX_SHARDS: 10,000 requests/s for one account → 67 items of 150 admitted writes/s each,
 * leaving room for the refill races of many containers (docs/capacity.md).
 */
const SHARD_WRITES_PER_SECOND = 150;
const MAX_SHARDS = 100;
const shardsFor = (perMinute: number) => Math.min(MAX_SHARDS, Math.max(1, Math.ceil(perMinute / 60 / SHARD_WRITES_PER_SECOND)));

const dayRef = (tenantId: string, perMinute: number) => {
  const day = today();
  return { key: keys.usageDay(tenantId, day), keyOf: (n: number) => keys.usageDay(tenantId, day, n), shards: shardsFor(perMinute), ttlSeconds: DAY_TTL_SECONDS };
};
const accountRef = (tenantId: string, perMinute: number): BucketRef => ({ policy: 'account', attr: 'rl_', count: true, ...dayRef(tenantId, perMinute) });
const credentialRef = (p: Principal, perMinute: number): BucketRef => ({ policy: 'credential', attr: `rl_${p.kind}:${p.id}_`, ...dayRef(p.tenantId, perMinute) });

/**
 * Each account's limit as last read by this process: a refill (and the choice of shards)
 * uses it instead of waiting for this request's read of the account, so the bucket write
 * goes out beside that read. A changed quota so applies from the refill after the next
 * request that read it (within a second or two per container); until an account was read
 * once, its first take waits for the read.
 */
const knownRates = new Map<string, number>();
const RATES_MAX = 10_000;
function learnRate(tenantId: string, perMinute: number): number {
  if (knownRates.size >= RATES_MAX && !knownRates.has(tenantId)) knownRates.delete(knownRates.keys().next().value as string);
  knownRates.set(tenantId, perMinute);
  return perMinute;
}
const ipRef = (ip: string): BucketRef => ({ policy: 'ip', key: keys.ipRate(ip), attr: 'rl_', ttlSeconds: 86400 });

const accountRate = (t: Pick<Tenant, 'quota'> | undefined) => t?.quota.requests_per_minute ?? DEFAULT_REQUESTS_PER_MINUTE;

export const rateLimited = (d: Decision) =>
  new HttpError(429, 'rate_limited', `too many requests: the ${d.policy} limit is ${d.limit} per minute; retry after ${d.resetSeconds} s`, {
    headers: { 'Retry-After': String(d.resetSeconds), ...rateHeaders(d) },
  });

export const rateHeaders = (d: Decision): Record<string, string> => ({
  'RateLimit-Policy': `"${d.policy}";q=${d.limit};w=60`,
  RateLimit: `"${d.policy}";r=${d.remaining};t=${d.resetSeconds}`,
});

export interface Gate {
  /** Called by authentication once the credential names its account (before the account is read). */
  identify(tenantId: string, credentialId: string, tenant: Promise<Tenant | undefined>): void;
  /** After authentication: starts what identify() did not. Resolves when the writes are done; never rejects. */
  start(principal: Principal | null): Promise<void>;
  /** Throws 403 ip_not_allowed or 429 rate_limited. */
  enforce(): Promise<void>;
  /** The RateLimit headers of the binding policy, once enforce() ran. */
  headers(): Record<string, string>;
  /** Writes a denied (403) request of an authenticated caller to the audit trail. */
  auditDenied(error: unknown, requestId: string): Promise<void>;
}

const safe = (p: Promise<Decision>): Promise<Decision | null> =>
  p.catch((error: unknown) => {
    logger.warn('rate limit check failed; request admitted', { error: error as Error });
    return null;
  });

export function gate(route: Route, event: APIGatewayProxyEvent): Gate {
  const sourceIp = event.requestContext?.identity?.sourceIp ?? null;
  let account: Promise<Decision | null> | undefined;
  let accountOf: string | undefined;
  let credential: Promise<Decision | null> | undefined;
  let principal: Principal | null = null;
  let binding: Decision | null = null;
  return {
    identify(tenantId, _credentialId, tenant) {
      if (account) return;
      accountOf = tenantId;
      const read = tenant.then(
        (t) => learnRate(tenantId, accountRate(t)),
        () => DEFAULT_REQUESTS_PER_MINUTE,
      );
      const known = knownRates.get(tenantId);
      account = safe(
        known !== undefined
          ? take(accountRef(tenantId, known), { known, promise: read })
          : read.then((rpm) => take(accountRef(tenantId, rpm), { known: rpm, promise: read })),
      );
    },
    start(p) {
      principal = p;
      if (p) {
        const rpm = learnRate(p.tenantId, accountRate(p.tenant));
        if (!account || accountOf !== p.tenantId) account = safe(take(accountRef(p.tenantId, rpm), { known: rpm, promise: Promise.resolve(rpm) }));
        const perCredential = p.tenant.quota.requests_per_minute_per_credential;
        if (perCredential !== undefined && perCredential < rpm) {
          credential = safe(take(credentialRef(p, perCredential), { known: perCredential, promise: Promise.resolve(perCredential) }));
        }
      } else if (sourceIp && route.auth !== 'public') {
        const rpm = config().RATE_LIMIT_IP_PER_MINUTE;
        account = safe(take(ipRef(sourceIp), { known: rpm, promise: Promise.resolve(rpm) }));
      }
      return Promise.all([account, credential]).then(() => undefined);
    },
    async enforce() {
      if (principal?.kind === 'api_key' && !ipAllowed(accountSettings(principal.tenant).api_key_ip_allowlist, sourceIp)) {
        throw forbidden('this account accepts its API keys only from the IP addresses of its allow-list', 'ip_not_allowed');
      }
      const decisions = (await Promise.all([account, credential])).filter((d): d is Decision => !!d);
      const refused = decisions.find((d) => !d.allowed);
      binding = refused ?? decisions.sort((a, b) => a.remaining - b.remaining)[0] ?? null;
      if (decisions.length > 0) count(refused ? METRIC.limiterDenied : METRIC.limiterAllowed);
      if (refused) throw rateLimited(refused);
    },
    headers: () => (binding ? rateHeaders(binding) : {}),
    async auditDenied(error, requestId) {
      if (!principal || !(error instanceof HttpError) || error.status !== 403) return;
      try {
        await recordAudit({ principal, requestId, sourceIp, userAgent: event.requestContext?.identity?.userAgent ?? null }, principal.tenantId, {
          action: 'access.denied',
          outcome: 'denied',
          resource: { type: 'route', id: route.key },
          detail: { code: error.code },
        });
      } catch (e) {
        logger.warn('audit of a denied request failed', { request_id: requestId, error: e as Error });
      }
    },
  };
}

/** The same error with the RateLimit headers added (errors are immutable). */
export function withHeaders(error: unknown, headers: Record<string, string>): unknown {
  if (!(error instanceof HttpError) || Object.keys(headers).length === 0 || error.status === 429) return error;
  return new HttpError(error.status, error.code, error.message, { ...error.options, headers: { ...headers, ...error.options.headers } });
}
