import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import type { Route } from '../lib/routes.js';

/**
 * API Gateway method throttling per route group, from the route table.
 *
 * API Gateway throttles in layers: the account's regional quota (10,000 requests/s steady,
 * 5,000 burst by default, shared by every API of the account), then the stage's method
 * settings. A stage-wide `/*\/*` setting applies to EACH method separately, so it is a
 * per-route ceiling, not a budget that routes share.
 *
 * | group     | routes                                                          | default rate / burst |
 * |-----------|-----------------------------------------------------------------|----------------------|
 * | default   | every other route (API key, JWT, device or operator credentials) | 10,000 / 5,000: one route may use the whole account quota; the service's own per-account token buckets (lib/ratelimit) share it out between tenants |
 * | public    | routes a caller reaches without a credential (auth public, endpoint, temp-token) | 1,000 / 500: nothing identifies the caller before the function runs, so API Gateway bounds what one route can take |
 * | signing   | routes on the HSM or a KMS signing key (grants `hsm`, `kms:sign`) | 1,000 / 500: CloudHSM and KMS Sign have their own, lower ceilings; requests beyond them would only fail later, and cost more. With the HSM configured, each `hsm` route is further bounded by its reserved concurrency (hsmCeiling): 150 reserved → 600 / 150 |
 *
 * Each is a context setting (infra/settings.ts): `throttleRate`/`throttleBurst` (default
 * group), `throttlePublicRate`/`throttlePublicBurst`, `throttleSigningRate`/
 * `throttleSigningBurst`, and `throttleRoutes` for single routes
 * (`{"POST /api/v1/crypto/sign": {"rate": 200, "burst": 100}}`).
 *
 * Emitted as the stage's MethodSettings (infra/api-stack.ts): one `/*\/*` entry with the
 * default group's limits, and one entry per route whose limit differs from it. CORS
 * preflights (OPTIONS) fall under `/*\/*`.
 */
export interface Limit {
  /** Steady-state requests per second. */
  readonly rate: number;
  /** Burst (token bucket size). */
  readonly burst: number;
}

export const ROUTE_GROUPS = ['default', 'public', 'signing'] as const;
export type RouteGroup = (typeof ROUTE_GROUPS)[number];

export interface ThrottleSettings {
  readonly groups: Readonly<Record<RouteGroup, Limit>>;
  /** Limits of single routes by route key (`POST /api/v1/crypto/sign`), over their group's. */
  readonly routes: Readonly<Record<string, Limit>>;
}

/** The account's default regional API Gateway quota. */
export const ACCOUNT_QUOTA: Limit = { rate: 10_000, burst: 5_000 };

export const DEFAULT_THROTTLING: ThrottleSettings = {
  groups: {
    default: ACCOUNT_QUOTA,
    public: { rate: 1_000, burst: 500 },
    signing: { rate: 1_000, burst: 500 },
  },
  routes: {},
};

const UNAUTHENTICATED: ReadonlySet<string> = new Set(['public', 'endpoint', 'temp-token']);

/** The group of a route (signing wins over public: a signing route is bounded by its device). */
export function routeGroup(route: Pick<Route, 'auth' | 'grants'>): RouteGroup {
  if ((route.grants as readonly string[]).some((g) => g === 'hsm' || g === 'kms:sign')) return 'signing';
  if (UNAUTHENTICATED.has(route.auth)) return 'public';
  return 'default';
}

/**
 * The p99 duration assumed of one HSM signing request in its function (table reads, the
 * PKCS#11 sign, the audit write), which turns a function's reserved concurrency into the
 * request rate it can serve: reserved / seconds per request.
 */
export const HSM_SIGN_P99_SECONDS = 0.25;

/**
 * The ceiling of an HSM signing route whose function has `reserved` concurrency: API Gateway
 * must answer 429 before Lambda refuses an invocation over the reservation (which reaches the
 * caller as a 5xx). Burst at most the reservation (a burst of simultaneous requests needs that
 * many instances), rate at most what the reservation serves at HSM_SIGN_P99_SECONDS.
 */
export function hsmCeiling(reserved: number): Limit {
  return { rate: Math.max(1, Math.floor(reserved / HSM_SIGN_P99_SECONDS)), burst: reserved };
}

/**
 * Each route's limit and where it comes from. Throws on a `throttleRoutes` key the table does
 * not have. `hsmReservedConcurrency` (set when signing runs on the HSM) bounds the group limit of
 * every `hsm` route by hsmCeiling; a `throttleRoutes` entry is the operator's own and is kept.
 */
export function routeLimits(
  routes: readonly Route[],
  throttling: ThrottleSettings,
  hsmReservedConcurrency?: number,
): Map<string, Limit & { readonly group: RouteGroup | 'route' }> {
  const keys = new Set(routes.map((r) => r.key));
  const unknown = Object.keys(throttling.routes).filter((k) => !keys.has(k));
  if (unknown.length > 0) throw new Error(`context "throttleRoutes" names routes that do not exist: ${unknown.join(', ')}`);
  const out = new Map<string, Limit & { readonly group: RouteGroup | 'route' }>();
  for (const route of routes) {
    const own = throttling.routes[route.key];
    const group = routeGroup(route);
    const limit = throttling.groups[group];
    const ceiling = hsmReservedConcurrency !== undefined && (route.grants as readonly string[]).includes('hsm') ? hsmCeiling(hsmReservedConcurrency) : undefined;
    const bounded = ceiling ? { rate: Math.min(limit.rate, ceiling.rate), burst: Math.min(limit.burst, ceiling.burst) } : limit;
    out.set(route.key, own ? { ...own, group: 'route' } : { ...bounded, group });
  }
  return out;
}

/**
 * CloudFormation's MethodSettings ResourcePath: the path with every `/` written `~1` after
 * a leading `/` (`/api/v1/secrets/{name}` -> `/~1api~1v1~1secrets~1{name}`); the root is `/`.
 */
export function encodeResourcePath(path: string): string {
  if (!path.startsWith('/')) throw new Error(`not a resource path: ${path}`);
  return path === '/' ? '/' : `/${path.replaceAll('/', '~1')}`;
}

/** What every entry repeats: a method setting replaces the stage-wide one as a whole. */
export interface CommonMethodSettings {
  readonly loggingLevel: apigw.MethodLoggingLevel;
  readonly metricsEnabled: boolean;
  readonly dataTraceEnabled: boolean;
}

/** The stage's MethodSettings (AWS::ApiGateway::Stage MethodSetting, CloudFormation casing). */
export function methodSettings(
  routes: readonly Route[],
  throttling: ThrottleSettings,
  common: CommonMethodSettings,
  hsmReservedConcurrency?: number,
): apigw.CfnStage.MethodSettingProperty[] {
  const entry = (resourcePath: string, httpMethod: string, limit: Limit): apigw.CfnStage.MethodSettingProperty => ({
    resourcePath,
    httpMethod,
    loggingLevel: common.loggingLevel,
    metricsEnabled: common.metricsEnabled,
    dataTraceEnabled: common.dataTraceEnabled,
    throttlingRateLimit: limit.rate,
    throttlingBurstLimit: limit.burst,
  });
  const base = throttling.groups.default;
  const limits = routeLimits(routes, throttling, hsmReservedConcurrency);
  const specific = [...routes]
    .sort((a, b) => a.key.localeCompare(b.key))
    .map((route) => [route, limits.get(route.key)!] as const)
    .filter(([, limit]) => limit.rate !== base.rate || limit.burst !== base.burst)
    .map(([route, limit]) => entry(encodeResourcePath(route.path), route.method, limit));
  return [entry('/*', '*', base), ...specific];
}
