import { CATALOG, type CatalogEntry } from './catalog.js';

/**
 * THE route table: the contract's 322 routes of the service and the few beyond it
 * (ROUTES_BEYOND_CONTRACT), as data (docs/architecture.md).
 *
 * Everything derives from it: the local gateway's router, the scope check at run time
 * (defineHandler looks the route up by the event's method + resource template), the CDK
 * methods and per-function IAM grants, and the test that compares it with the contract's
 * `routes.tsv` (kept as test/fixtures/routes.tsv).
 *
 * Columns of r(...): method, path template, auth kind, router-level scopes ("-" none,
 * "handler" = checked inside the handler), family, handler ("<folder>/<module>.<export>"
 * under functions/, or null while the capability is not built: such a route is served by
 * functions/not-implemented.ts and answers 501 after authentication and the scope check),
 * and what the function touches beyond the base grants (see Grant).
 * `credentialCollection(path, module)` stands for the five CRUD rows of a typed credential
 * collection (`<path>` and `<path>/{id}`, exports list/create/get/update/remove of the
 * module), with the collection's scopes from the resource catalogue (lib/catalog.ts).
 */

const AUTH_KINDS = ['public', 'endpoint', 'temp-token', 'bearer', 'operator', 'device'] as const;
type AuthKind = (typeof AUTH_KINDS)[number];

/**
 * What a function may touch. Every authenticated route also gets `table:read` and
 * `table:meter` (UpdateItem on the usage counter) for authentication and metering.
 * - table:read    GetItem, BatchGetItem, Query
 * - table:write   table:read + PutItem, UpdateItem, DeleteItem, TransactWriteItems
 * - kms:decrypt   KMS Decrypt (open a tenant data key)
 * - kms:encrypt   KMS Decrypt + GenerateDataKey (create a tenant data key on first use)
 * - queue:send    SQS SendMessage on the webhook queue
 * - jobs:send     SQS SendMessage on the jobs queue (asynchronous tool jobs: database extraction)
 * - hsm           runs in the CloudHSM VPC with the PKCS#11 layer (looks the cluster's HSMs up at start)
 * - hsm:describe  reads the CloudHSM cluster's state from the CloudHSM API (outside the VPC, no layer)
 * - kms:sign      the KMS asymmetric signing backend (lib/signing/kms.ts): CreateKey, Sign, GetPublicKey, ScheduleKeyDeletion on tenant-tagged keys
 * - payment       the payment provider (lib/billing): GetSecretValue on the provider's secret (context paymentSecretArn), PAYMENT_PROVIDER/PAYMENT_SECRET_ID
 * - documents:read   S3 GetObject on the documents bucket (sealed PDFs, lib/documents/storage.ts), with its SSE-KMS key through S3
 * - documents:write  documents:read + PutObject and DeleteObject on that bucket
 * - table:ready   GetItem on the readiness probe item (SYS / READY) only: GET /ready
 * - kms:describe  KMS DescribeKey on the envelope key only: GET /ready
 * - audit:send    SQS SendMessage on the audit queue: derived, never written in a row (r() below):
 *                 every authenticated route without table:write (a read-only route) sends its
 *                 audit entries (a denied request, a sensitive read) to the audit writer
 *                 instead of writing them (lib/audit/queue.ts)
 * Tenant routes (tenancyOf below) hold their table and envelope-key grants through the
 * tenant-access role, conditioned on the caller's account (infra/grants.ts).
 */
export const GRANTS = [
  'table:read',
  'table:ready',
  'table:meter',
  'table:write',
  'kms:decrypt',
  'kms:encrypt',
  'kms:describe',
  'queue:send',
  'jobs:send',
  'hsm',
  'hsm:describe',
  'kms:sign',
  'payment',
  'documents:read',
  'documents:write',
  'audit:send',
] as const;
export type Grant = (typeof GRANTS)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route speaks on the wire: the rule that standard endpoints speak their standard,
 * not the service's envelope (docs/api.md, "Protocol endpoints"). lib/core/responses.ts and
 * lib/http/body.ts apply it; a route takes it from PROTOCOL_WIRES below.
 * - `envelope`: JSON requests; `{"success":true,"data":…}` / `{"success":false,"error",…}`.
 * - `document`: a standard's JSON document at the top level (RFC 7517 JWK Set, RFC 8414 /
 *   OpenID Connect discovery); errors in the envelope.
 * - `oauth`: an OAuth 2.0 endpoint (RFC 6749 §3.2, §5; RFC 8628 §3.1–3.5):
 *   `application/x-www-form-urlencoded` (or JSON) requests, top-level JSON answers, errors as
 *   `{"error", "error_description"}` with the RFC's error codes, never cached.
 * - `text`: the handler's body as it is, with its own content type (ACME http-01 key
 *   authorization, SAML metadata XML); errors in the envelope.
 */
const WIRES = ['envelope', 'document', 'oauth', 'text'] as const;
export type Wire = (typeof WIRES)[number];

/** The routes that speak a protocol's own format (all others: `envelope`), built or still to be built. */
const PROTOCOL_WIRES: Readonly<Record<string, Exclude<Wire, 'envelope'>>> = {
  'GET /.well-known/acme-challenge/{token}': 'text', // RFC 8555 §8.3
  'GET /api/v1/.well-known/jwks.json': 'document', // RFC 7517 §5
  'GET /api/v1/oidc/jwks/.well-known': 'document', // RFC 7517 §5
  'GET /api/v1/auth/oauth/.well-known/openid-configuration': 'document', // OpenID Connect Discovery 1.0 §4
  'GET /api/v1/auth/oauth/jwks': 'document', // RFC 7517 §5 (the authorization server's own set)
  'GET /.well-known/oauth-authorization-server/{issuerPath+}': 'document', // RFC 8414 §3
  'POST /api/v1/auth/oauth/token': 'oauth', // RFC 6749 §3.2
  'GET /api/v1/auth/oauth/userinfo': 'oauth', // OpenID Connect Core §5.3 (RFC 6750 errors)
  'POST /api/v1/auth/oauth/userinfo': 'oauth', // OpenID Connect Core §5.3.1
  'POST /api/v1/auth/oauth/introspect': 'oauth', // RFC 7662 §2
  'POST /api/v1/auth/workload/token': 'oauth', // RFC 8693 §2
  'POST /api/v1/agent/oauth/device': 'oauth', // RFC 8628 §3.1
  'POST /api/v1/agent/oauth/token': 'oauth', // RFC 8628 §3.4
  'GET /api/v1/auth/cli/login': 'oauth', // RFC 8628 §3.1-3.2 (the device authorization response; with user_code, the sign-in page's review or decision)
  'POST /api/v1/auth/cli/login': 'oauth', // RFC 8628 §3.1 (the device authorization request as the RFC sends it)
  'POST /api/v1/auth/cli/token': 'oauth', // RFC 8628 §3.4-3.5
  'POST /api/v1/auth/cli/revoke': 'oauth', // RFC 7009 §2
  'GET /api/v1/saml/metadata/{id}/xml': 'text', // SAML 2.0 Metadata
};

/** The route's wire format; `envelope` when it has none of its own (or when no route is known). */
export const wireOf = (route: Pick<Route, 'key'> | undefined): Wire => (route ? (PROTOCOL_WIRES[route.key] ?? 'envelope') : 'envelope');

/**
 * Whose credentials a route's function works with after authentication (docs/architecture.md,
 * "Tenancy in IAM"; infra/grants.ts builds the roles from it):
 * - `tenant`: bearer, device and temp-token routes, and the self-identifying endpoint routes
 *   (SELF_IDENTIFYING_TENANT_ROUTES: the payment provider's webhook, whose signed event names
 *   the account; the agent's device-authorization token and enrol endpoints, whose approved
 *   authorization names it). Authentication runs on the function's
 *   narrow execution role (credential lookup, the projected account read; for temp-token,
 *   GET /api/v1/t/{token}, the read of the token's TEMPTOKEN# item and the per-IP limiter);
 *   from the moment the credential names the account, every table and KMS call uses an STS
 *   session of the route's tenant-access role tagged with that account (lib/tenancy), which
 *   reaches only the partition `T#<account>` and data keys whose encryption context names it.
 * - `operator`: the platform operator's routes, cross-tenant by design: the function's own
 *   role, with the route's grants on the whole table.
 * - `self`: routes that authenticate themselves inside the handler (public, endpoint:
 *   sign-in and sign-up flows, inbound webhooks, protocol endpoints) find the account from a
 *   global item (an e-mail, a token hash, a client id) first: the function's own role, with
 *   the route's grants.
 * The share-aware routes (the secrets GET and PUT, every typed credential and password GET,
 *   the document reads honouring grants) are tenant routes too: once the share or grant item
 *   has proved the access, the owner-side calls run in a nested owner scope with the owner
 *   account's session of the same role (lib/tenancy/scope.ts `ownerScope`).
 */
export type Tenancy = 'tenant' | 'operator' | 'self';

/**
 * The global items a self-authenticating route (auth `public` or `endpoint`) owns, declared
 * once per route: what its function's own role may touch, and nothing else of the table
 * (infra/grants/table.ts `ownItemStatements`): `read` GetItem, BatchGetItem, Query (no index),
 * `write` Put/Update/Delete/ConditionCheck, each conditioned on these partitions
 * (`dynamodb:LeadingKeys`, StringLike); a write names no account (no `tenant_id` or
 * `owner_tenant_id`, no owner mark `T#...`, no listing key: items of a flow that has not yet
 * learnt its account), returns nothing, and the per-IP limiter (`IP#*`) meters the route.
 * The ACME http-01 answer reads its challenge item and nothing of any account; a CLI login's
 * start (RFC 8628 §3.1, the POST) writes its pending login and user code; the agent's
 * device authorization (RFC 8628) writes its pending codes, polls them, and reads its
 * enrolment token: once the authorization names the approver's account, everything else runs
 * in that account's tenant session (SELF_IDENTIFYING_TENANT_ROUTES, `own-items`). The sign-in
 * routes that mint credentials likewise (issue 31): the CLI login's decision and token,
 * refresh, the OAuth token endpoint, the workload exchange, the passkey, SRP and OIDC steps read
 * at most the global item that names the account (a refresh token, a challenge, a state, a
 * login; `{}` when the request or its credential names it) and do the rest in its session. A
 * global item naming an account is trusted only with that account's owner mark
 * (lib/tenancy/lookups.ts), which only its session can write.
 */
export interface OwnItems {
  readonly read?: readonly string[];
  readonly write?: readonly string[];
  /**
   * The handler also authenticates a sign-in session's access token (a JWT naming its account,
   * checked in that account's session): the projected account read authentication makes on the
   * execution role (infra/grants/table.ts `accountReadStatement`), no credential item.
   */
  readonly accessToken?: true;
  /**
   * Platform listings the route reads on index plat (KEYS_ONLY: the listed items' keys, nothing
   * of them) and the attributes it reads of the listed account items (BatchGetItem on `T#*`
   * naming those attributes and the keys only): a set of public parameters across accounts,
   * the authorization server's JWK set (GET /api/v1/auth/oauth/jwks: TOKENKEYS, `public`; only
   * token-signing key items carry `public`, lib/auth/store.ts).
   */
  readonly listed?: { readonly listings: readonly string[]; readonly attributes: readonly string[] };
}
export const OWN_PARTITIONS: Readonly<Record<string, OwnItems>> = {
  'GET /.well-known/acme-challenge/{token}': { read: ['ACME#*'] },
  'POST /api/v1/agent/oauth/device': { write: ['DEVAUTHZ#*', 'USERCODE#*'] },
  'POST /api/v1/auth/cli/login': { write: ['CLILOGIN#*', 'CLICODE#*'] },
  'POST /api/v1/agent/oauth/token': { read: ['DEVAUTHZ#*'], write: ['DEVAUTHZ#*'] },
  'POST /api/v1/agent/oauth/enroll': { read: ['ENROLL#*', 'DEVAUTHZ#*'] },
  'POST /api/v1/auth/refresh': { read: ['REFRESH#*'] },
  'GET /api/v1/auth/cli/login': { write: ['CLILOGIN#*', 'CLICODE#*'], accessToken: true },
  'POST /api/v1/auth/cli/token': { read: ['CLILOGIN#*'], write: ['CLILOGIN#*'] },
  'POST /api/v1/auth/webauthn/authentication/begin': {},
  'POST /api/v1/auth/webauthn/authentication/finish': { read: ['WACHAL#*'] },
  'POST /api/v1/auth/zkp/register': { accessToken: true },
  'POST /api/v1/auth/zkp/verify': { read: ['SRPCHAL#*'] },
  'POST /api/v1/auth/workload/token': {},
  'POST /api/v1/auth/oauth/token': {},
  'GET /api/v1/auth/oidc/login': {},
  'GET /api/v1/auth/oidc/callback': { read: ['OIDCSTATE#*'] },
  'GET /api/v1/auth/oauth/authorize': {},
  'POST /api/v1/auth/oauth/introspect': {},
  'POST /api/v1/auth/cli/revoke': { read: ['REFRESH#*'] },
  'GET /api/v1/auth/oauth/logout': {},
  // the read-only self-authenticating routes (issue 31): discovery and RFC 8414 metadata read
  // nothing of the table (the per-IP limiter only); the JWK set its listing and the keys' public
  // halves; userinfo reads nothing before the access token names its account, diagnostics the
  // presented API key or token's credential item and authentication's projected account read
  'GET /api/v1/auth/oauth/.well-known/openid-configuration': {},
  'GET /.well-known/oauth-authorization-server/{issuerPath+}': {},
  'GET /api/v1/auth/oauth/jwks': { listed: { listings: ['TOKENKEYS'], attributes: ['public'] } },
  'GET /api/v1/auth/oauth/userinfo': {},
  'POST /api/v1/auth/oauth/userinfo': {},
  'GET /api/v1/diagnostics/auth': { read: ['KEY#*', 'APITOKEN#*'], accessToken: true },
};

/**
 * What the operator's write routes write (POST /api/v1/admin/tenants, activate, suspend, quota,
 * reset-password; infra/grants/table.ts `OperatorWrite`): accounts' partitions (the account
 * item's status, quota and TENANTS listing, a new account's items, a user's reset, their audit
 * entries), a new account's first key's credential item, a reset token. Cross-account by design;
 * no other global item (no refresh, share, device, temporary or sign-in item), no metering
 * beyond the metering attributes (TableMeter).
 */
export const OPERATOR_WRITES: readonly string[] = ['T#*', 'KEY#*', 'PWRESET#*'];

/** What tells a route's roles apart by its own items (infra/grants.ts role keys, scripts/bench/tenancy.ts): '' without. */
export function ownItemsKey(route: Pick<Route, 'key'>): string {
  const own = OWN_PARTITIONS[route.key];
  return own
    ? ` own reads ${(own.read ?? []).join(' ') || '-'} writes ${(own.write ?? []).join(' ') || '-'}${own.accessToken ? ' access-token' : ''}${own.listed ? ` listed ${own.listed.listings.join(' ')}: ${own.listed.attributes.join(' ')}` : ''}`
    : '';
}

/**
 * Routes that authenticate themselves (auth `endpoint`) and learn exactly one account from what
 * they verified, before touching any account data: tenant routes all the same (their handler
 * calls identifyTenant once it knows the account), with what names the account:
 * - `signed-event`: `POST /webhooks/{payment_provider}`, the provider's signed event names the
 *   account (lib/billing/subscriptions.ts handleEvent);
 * - `own-items`: the route's own global items (OWN_PARTITIONS) name it once a person of the
 *   account approved them: the agent's device code (lib/agents/authorization.ts pollToken)
 *   and its enrolment token (completeEnrolment), a CLI login, a refresh token, a sign-in
 *   challenge or state; or the request names it before anything is read (a client_id, a
 *   subject token's audience, a sign-in's `tenant_id`, a sign-in session's access token; userinfo's
 *   access token; the credential GET /api/v1/diagnostics/auth explains).
 */
export const SELF_IDENTIFYING_TENANT_ROUTES: ReadonlyMap<string, 'signed-event' | 'own-items'> = new Map([
  ['POST /webhooks/{payment_provider}', 'signed-event'],
  ['POST /api/v1/agent/oauth/token', 'own-items'],
  ['POST /api/v1/agent/oauth/enroll', 'own-items'],
  ['POST /api/v1/auth/refresh', 'own-items'],
  ['GET /api/v1/auth/cli/login', 'own-items'],
  ['POST /api/v1/auth/cli/token', 'own-items'],
  ['POST /api/v1/auth/webauthn/authentication/begin', 'own-items'],
  ['POST /api/v1/auth/webauthn/authentication/finish', 'own-items'],
  ['POST /api/v1/auth/zkp/register', 'own-items'],
  ['POST /api/v1/auth/zkp/verify', 'own-items'],
  ['POST /api/v1/auth/workload/token', 'own-items'],
  ['POST /api/v1/auth/oauth/token', 'own-items'],
  ['GET /api/v1/auth/oidc/login', 'own-items'],
  ['GET /api/v1/auth/oidc/callback', 'own-items'],
  ['GET /api/v1/auth/oauth/authorize', 'own-items'],
  ['POST /api/v1/auth/oauth/introspect', 'own-items'],
  ['POST /api/v1/auth/cli/revoke', 'own-items'],
  ['GET /api/v1/auth/oauth/logout', 'own-items'],
  ['GET /api/v1/auth/oauth/userinfo', 'own-items'],
  ['POST /api/v1/auth/oauth/userinfo', 'own-items'],
  ['GET /api/v1/diagnostics/auth', 'own-items'],
]);

/**
 * Operator routes that act in exactly one account, the one their path names, and need nothing
 * of the platform's own (no operator-only attribute, no platform listing): tenant routes all the
 * same. The operator's credential is authenticated like any bearer (its account's session
 * meters it), the gate requires the operator flag (auth `operator`), and the handler does
 * everything in the named account's session (lib/tenancy/scope.ts `ownerScope`), so the
 * function holds no table-wide grant (issue 31).
 */
export const OPERATOR_ACCOUNT_ROUTES: ReadonlySet<string> = new Set(['PUT /api/v1/admin/tenants/{id}/sso']);

export function tenancyOf(route: Pick<Route, 'auth' | 'key'>): Tenancy {
  if (OPERATOR_ACCOUNT_ROUTES.has(route.key)) return 'tenant';
  if (route.auth === 'operator') return 'operator';
  if (SELF_IDENTIFYING_TENANT_ROUTES.has(route.key)) return 'tenant';
  if (route.auth === 'public' || route.auth === 'endpoint') return 'self';
  return 'tenant';
}

/**
 * What names a tenant route's account, which decides what its execution role reads before it
 * is known (infra/grants/table.ts identificationStatements): a bearer credential (an API key,
 * a token), a signed device request, a temporary access token, a signed provider event, or
 * the route's own global items (OWN_PARTITIONS).
 */
export type TenantCredential = 'bearer' | 'device' | 'temp-token' | 'signed-event' | 'own-items';

export function tenantCredentialOf(route: Pick<Route, 'auth' | 'key'>): TenantCredential {
  const self = SELF_IDENTIFYING_TENANT_ROUTES.get(route.key);
  if (self) return self;
  return route.auth === 'device' || route.auth === 'temp-token' ? route.auth : 'bearer';
}

export interface Route {
  /** `METHOD /path/{param}`: the route's key, unique. */
  readonly key: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: AuthKind;
  /** Scopes the router checks (all required). Empty when none or checked in the handler. */
  readonly scopes: readonly string[];
  /** True when the spec says the scope check is made inside the handler. */
  readonly handlerScopes: boolean;
  readonly family: string;
  /** `<folder>/<module>.<export>` under functions/, or null when not built yet. */
  readonly handler: string | null;
  readonly grants: readonly Grant[];
  /** Largest accepted request body in bytes (its worst-case Lambda event fits LAMBDA_REQUEST_BYTES). */
  readonly maxBodyBytes: number;
  /** Said in the 413 answer when the body is over the limit: where larger bodies go. */
  readonly bodyLimitNote?: string;
}

/**
 * Body limits that AWS can carry. A route's function is invoked synchronously, and a
 * synchronous Lambda invocation carries at most 6 MB (6,291,456 bytes) of event; a larger
 * event never reaches the function (Lambda refuses it and API Gateway answers 5xx), so a
 * route may only accept bodies whose WORST-CASE event fits.
 *
 * The REST proxy event holds the body as a JSON string: a JSON request body is at most
 * doubled by escaping (every character of a valid JSON text that needs escaping, `"`, `\`
 * and the whitespace characters, becomes two bytes; API Gateway escapes nothing else), and
 * a binary body (a binary media type; none is configured) is base64, 4/3 of its size. Bodies
 * that are not JSON text at all (raw control characters, invalid UTF-8) can grow more; the
 * function would refuse them anyway (400), Lambda may refuse them first.
 */
export const LAMBDA_REQUEST_BYTES = 6 * 1024 * 1024;
/**
 * The rest of the event. API Gateway (REST) caps the request line and headers together at
 * 10,240 bytes; the event repeats them (headers and multiValueHeaders; the query string as
 * queryStringParameters and multiValueQueryStringParameters; the path in path, pathParameters
 * and requestContext), in JSON. The worst amplification is a query string of one-letter
 * parameters: `a&` (2 bytes) becomes `"a":"",` and `"a":[""],` (16 bytes), so at most
 * 8 x 10,240 = 81,920 bytes, plus requestContext (identity, ids, times: ~3 KB). 128 KiB
 * bounds all of it.
 */
export const EVENT_OVERHEAD_BYTES = 128 * 1024;

/** The largest event a body of `bodyBytes` can produce (JSON text escaped, or binary as base64). */
export function worstCaseEventBytes(bodyBytes: number): number {
  return EVENT_OVERHEAD_BYTES + Math.max(2 * bodyBytes, 4 * Math.ceil(bodyBytes / 3));
}

/** The largest body whose worst-case event fits a synchronous invocation: 3,080,192 bytes (2.94 MiB). */
export const MAX_SAFE_BODY_BYTES = Math.floor((LAMBDA_REQUEST_BYTES - EVENT_OVERHEAD_BYTES) / 2);

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Routes that need a larger body than the default, and why; each fits (test/unit/routes-limits.test.ts). */
const BODY_LIMITS: Record<string, { readonly bytes: number; readonly note?: string }> = {
  // 1 MiB message after base64 decoding is ~1.34 MiB encoded, plus the other fields.
  'POST /api/v1/crypto/sign': { bytes: 2 * 1024 * 1024 },
  // encrypted PDF uploads (base64): as large as a synchronous invocation allows
  'POST /api/v1/documents': {
    bytes: MAX_SAFE_BODY_BYTES,
    note: 'a document is at most 2 MiB (2,097,152 bytes) before base64; larger PDFs are not accepted (no presigned S3 upload is offered)',
  },
};

function r(method: HttpMethod, path: string, auth: AuthKind, scopes: string, family: string, handler: string | null, grants = ''): Route {
  const key = `${method} ${path}`;
  const handlerScopes = scopes === 'handler';
  const base: Grant[] = auth === 'public' ? [] : ['table:read', 'table:meter'];
  const extra = grants.split(' ').filter(Boolean) as Grant[];
  if (extra.includes('audit:send')) throw new Error(`${key}: audit:send is derived from the route's other grants, not declared`);
  const declared = [...new Set([...base, ...extra])];
  // THE one place a function is read-only for the audit: it meters (authenticated) but holds
  // no table write, so its audit entries go through the audit queue (lib/audit/queue.ts)
  const readOnly = declared.includes('table:meter') && !declared.includes('table:write');
  return {
    key,
    method,
    path,
    auth,
    scopes: scopes === '-' || handlerScopes ? [] : scopes.split(' '),
    handlerScopes,
    family,
    handler,
    grants: readOnly ? [...declared, 'audit:send'] : declared,
    maxBodyBytes: BODY_LIMITS[key]?.bytes ?? DEFAULT_MAX_BODY_BYTES,
    ...(BODY_LIMITS[key]?.note ? { bodyLimitNote: BODY_LIMITS[key].note } : {}),
  };
}

/**
 * The five CRUD rows of a typed credential collection (lib/credentials/handlers.ts): list,
 * create, get, update, delete of `<path>` and `<path>/{id}`, served by the handler module
 * named in the row; their scopes are the collection's read/write/delete scopes in the
 * catalogue (lib/catalog.ts). `hsm`: its create may generate the key inside the signing
 * backend (code-signing keys).
 */
function credentialCollection(path: string, module: string, hsm = false): Route[] {
  const e = CATALOG_BY_PATH.get(path);
  if (!e) throw new Error(`${path} is not a collection of lib/catalog.ts`);
  const [read, write, del] = [e.scopes.read, e.scopes.write, e.scopes.delete].map((s) => [...s].sort().join(' ')) as [string, string, string];
  return [
    r('GET', path, 'bearer', read, e.family, `${module}.list`, 'table:read'),
    r('POST', path, 'bearer', write, e.family, `${module}.create`, `table:write kms:encrypt${hsm ? ' hsm' : ''}`),
    r('GET', `${path}/{id}`, 'bearer', read, e.family, `${module}.get`, 'table:read kms:decrypt'),
    r('PUT', `${path}/{id}`, 'bearer', write, e.family, `${module}.update`, 'table:write kms:encrypt'),
    r('DELETE', `${path}/{id}`, 'bearer', del, e.family, `${module}.remove`, 'table:write'),
  ];
}

const CATALOG_BY_PATH: ReadonlyMap<string, CatalogEntry> = new Map(Object.values(CATALOG).map((e: CatalogEntry) => [e.path, e]));

// biome-ignore format: the route table is read as a table, one route a line
const CONTRACT_ROUTES: readonly Route[] = [
  r("GET",    "/",                                                   "public",     "-",                                   "public",       "public/health.welcome"),
  r("GET",    "/.well-known/acme-challenge/{token}",                 "public",     "-",                                   "certificates", "certificates/challenge.challenge", "table:read"),
  r("GET",    "/health",                                             "public",     "-",                                   "public",       "public/health.health"),
  r("GET",    "/healthz",                                            "public",     "-",                                   "public",       "public/health.healthz"),
  r("GET",    "/ready",                                              "public",     "-",                                   "public",       "public/health.ready", "table:ready kms:describe"),
  r("POST",   "/webhooks/{payment_provider}",                        "endpoint",   "-",                                   "billing",      "billing/webhooks.receive", "table:write payment"),
  r("GET",    "/api/v1/billing/pricing",                             "public",     "-",                                   "billing",      "billing/pricing.pricing"),
  r("GET",    "/api/v1/diagnostics/auth",                            "endpoint",   "-",                                   "diagnostics",  "diagnostics/auth.explain"),
  r("GET",    "/api/v1/t/{token}",                                   "temp-token", "-",                                   "sharing",      "sharing/temp-access.redeem", "table:write kms:decrypt"),
  r("GET",    "/api/v1/secrets",                                     "bearer",     "secrets:read",                        "secrets",      "secrets/secrets.list", "table:read"),
  r("POST",   "/api/v1/secrets",                                     "bearer",     "secrets:write",                       "secrets",      "secrets/secrets.create", "table:write kms:encrypt"),
  r("GET",    "/api/v1/secrets/{name}",                              "bearer",     "secrets:read",                        "secrets",      "secrets/secrets.get", "table:read kms:decrypt"),
  r("PUT",    "/api/v1/secrets/{name}",                              "bearer",     "secrets:write",                       "secrets",      "secrets/secrets.update", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/secrets/{name}",                              "bearer",     "secrets:delete",                      "secrets",      "secrets/secrets.remove", "table:write"),
  r("GET",    "/api/v1/s/{container}/{key}",                         "bearer",     "handler",                             "secrets",      "lookup/lookup.get", "kms:decrypt"),
  r("GET",    "/api/v1/s/{container}/{key}/{version}",               "bearer",     "handler",                             "secrets",      "lookup/lookup.getVersion", "kms:decrypt"),
  r("POST",   "/api/v1/search/semantic",                             "bearer",     "secrets:read",                        "secrets",      "lookup/search.search"),
  r("GET",    "/api/v1/key-catalog",                                 "bearer",     "secrets:read",                        "secrets",      "lookup/catalog.list"),
  r("GET",    "/api/v1/{type}/{id}/history",                         "bearer",     "history:read",                        "sharing",      "sharing/history.list"),
  r("GET",    "/api/v1/{type}/{id}/history/{version}",               "bearer",     "history:read",                        "sharing",      "sharing/history.get", "kms:decrypt"),
  r("GET",    "/api/v1/{type}/{id}/history-settings",                "bearer",     "history:read",                        "sharing",      "sharing/history.getSettings"),
  r("PUT",    "/api/v1/{type}/{id}/history-settings",                "bearer",     "sharing:manage",                      "sharing",      "sharing/history.putSettings", "table:write"),
  r("GET",    "/api/v1/{type}/{id}/shares",                          "bearer",     "sharing:manage",                      "sharing",      "sharing/shares.list"),
  r("POST",   "/api/v1/{type}/{id}/shares",                          "bearer",     "sharing:manage",                      "sharing",      "sharing/shares.create", "table:write"),
  r("GET",    "/api/v1/{type}/{id}/temp-access",                     "bearer",     "sharing:manage",                      "sharing",      "sharing/temp-access.list"),
  r("POST",   "/api/v1/{type}/{id}/temp-access",                     "bearer",     "temp-access:create",                  "sharing",      "sharing/temp-access.create", "table:write"),
  r("DELETE", "/api/v1/shares/{share_id}",                           "bearer",     "sharing:manage",                      "sharing",      "sharing/shares.remove", "table:write"),
  r("DELETE", "/api/v1/temp-access/{grant_id}",                      "bearer",     "sharing:manage",                      "sharing",      "sharing/temp-access.remove", "table:write"),
  r("GET",    "/api/v1/shared-with-me",                              "bearer",     "handler",                             "sharing",      "sharing/shares.sharedWithMe"),
  ...credentialCollection("/api/v1/computer-credentials",                        "credentials/computer-credentials"),
  ...credentialCollection("/api/v1/code-signing-keys",                           "credentials/code-signing-keys", true),
  ...credentialCollection("/api/v1/disk-credentials",                            "credentials/disk-credentials"),
  ...credentialCollection("/api/v1/integrations",                                "credentials/integrations"),
  ...credentialCollection("/api/v1/jks-keystores",                               "credentials/jks-keystores"),
  ...credentialCollection("/api/v1/ldap-bind-credentials",                       "credentials/ldap-bind-credentials"),
  ...credentialCollection("/api/v1/ntlm",                                        "credentials/ntlm"),
  ...credentialCollection("/api/v1/radius-credentials",                          "credentials/radius-credentials"),
  ...credentialCollection("/api/v1/root-credentials",                            "credentials/root-credentials"),
  ...credentialCollection("/api/v1/service-config",                              "credentials/service-config"),
  ...credentialCollection("/api/v1/social-credentials",                          "credentials/social-credentials"),
  ...credentialCollection("/api/v1/software-licenses",                           "credentials/software-licenses"),
  ...credentialCollection("/api/v1/totp-tokens",                                 "credentials/totp-tokens"),
  ...credentialCollection("/api/v1/vpn-credentials",                             "credentials/vpn-credentials"),
  ...credentialCollection("/api/v1/wifi-credentials",                            "credentials/wifi-credentials"),
  ...credentialCollection("/api/v1/windows-credentials",                         "credentials/windows-credentials"),
  ...credentialCollection("/api/v1/yubikeys",                                    "credentials/yubikeys"),
  r("GET",    "/api/v1/code-signing-keys/{id}/export",               "bearer",     "credentials:read export:read",        "credentials",  "credentials/code-signing-keys.exportKey", "table:read kms:decrypt"),
  r("GET",    "/api/v1/jks-keystores/{id}/entries",                  "bearer",     "credentials:read",                    "credentials",  "credentials/jks-keystores.listEntries", "table:read"),
  r("POST",   "/api/v1/jks-keystores/{id}/entries",                  "bearer",     "credentials:read credentials:write",  "credentials",  "credentials/jks-keystores.addEntry", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/jks-keystores/{id}/entries/{alias}",          "bearer",     "credentials:read credentials:write",  "credentials",  "credentials/jks-keystores.removeEntry", "table:write kms:encrypt"),
  r("GET",    "/api/v1/jks-keystores/{id}/export",                   "bearer",     "credentials:read export:read",        "credentials",  "credentials/jks-keystores.exportKeystore", "table:read kms:decrypt"),
  r("GET",    "/api/v1/totp-tokens/{id}/export",                     "bearer",     "credentials:read",                    "credentials",  "credentials/totp-tokens.exportUri", "table:read kms:decrypt"),
  r("POST",   "/api/v1/totp-tokens/{id}/generate",                   "bearer",     "credentials:read",                    "credentials",  "credentials/totp-tokens.generate", "table:read kms:decrypt"),
  r("POST",   "/api/v1/totp-tokens/import",                          "bearer",     "credentials:read credentials:write",  "credentials",  "credentials/totp-tokens.importUris", "table:write kms:encrypt"),
  r("POST",   "/api/v1/yubikeys/{id}/validate",                      "bearer",     "credentials:read",                    "credentials",  "credentials/yubikeys.validate", "table:write kms:decrypt"),
  r("GET",    "/api/v1/integration-providers",                       "bearer",     "credentials:read",                    "credentials",  "credentials/integrations.providers"),
  r("GET",    "/api/v1/containers",                                  "bearer",     "containers:read",                     "containers",   "containers/containers.list"),
  r("GET",    "/api/v1/containers/{id}",                             "bearer",     "containers:read",                     "containers",   "containers/containers.get"),
  r("POST",   "/api/v1/containers",                                  "bearer",     "containers:read containers:write",    "containers",   "containers/containers.create", "table:write"),
  r("PUT",    "/api/v1/containers/{id}",                             "bearer",     "containers:read containers:write",    "containers",   "containers/containers.update", "table:write"),
  r("DELETE", "/api/v1/containers/{id}",                             "bearer",     "containers:read containers:write",    "containers",   "containers/containers.remove", "table:write"),
  r("GET",    "/api/v1/crypto-wallets",                              "bearer",     "passwords:read",                      "passwords",    "passwords/crypto-wallets.list", "table:read"),
  r("GET",    "/api/v1/crypto-wallets/{id}",                         "bearer",     "passwords:read",                      "passwords",    "passwords/crypto-wallets.get", "table:read kms:decrypt"),
  r("POST",   "/api/v1/crypto-wallets",                              "bearer",     "passwords:read passwords:write",      "passwords",    "passwords/crypto-wallets.create", "table:write kms:encrypt"),
  r("PUT",    "/api/v1/crypto-wallets/{id}",                         "bearer",     "passwords:read passwords:write",      "passwords",    "passwords/crypto-wallets.update", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/crypto-wallets/{id}",                         "bearer",     "passwords:read passwords:write",      "passwords",    "passwords/crypto-wallets.remove", "table:write"),
  r("GET",    "/api/v1/api-tokens",                                  "bearer",     "tokens:read",                         "tokens",       "tokens/api-tokens.list", "table:read"),
  r("GET",    "/api/v1/api-tokens/{id}",                             "bearer",     "tokens:read",                         "tokens",       "tokens/api-tokens.get", "table:read"),
  r("POST",   "/api/v1/api-tokens",                                  "bearer",     "tokens:read tokens:write",            "tokens",       "tokens/api-tokens.create", "table:write"),
  r("DELETE", "/api/v1/api-tokens/{id}",                             "bearer",     "tokens:read tokens:write",            "tokens",       "tokens/api-tokens.remove", "table:write"),
  r("POST",   "/api/v1/api-tokens/{id}/rotate",                      "bearer",     "tokens:read tokens:write",            "tokens",       "tokens/api-tokens.rotate", "table:write"),
  r("GET",    "/api/v1/passwords",                                   "bearer",     "passwords:read",                      "passwords",    "passwords/passwords.list", "table:read"),
  r("POST",   "/api/v1/passwords",                                   "bearer",     "passwords:write",                     "passwords",    "passwords/passwords.create", "table:write kms:encrypt"),
  r("PUT",    "/api/v1/passwords/{id}",                              "bearer",     "passwords:write",                     "passwords",    "passwords/passwords.update", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/passwords/{id}",                              "bearer",     "passwords:write",                     "passwords",    "passwords/passwords.remove", "table:write"),
  r("POST",   "/api/v1/passwords/generate",                          "bearer",     "passwords:write",                     "passwords",    "passwords/generate.generate"),
  r("GET",    "/api/v1/passwords/{id}",                              "bearer",     "handler",                             "passwords",    "passwords/passwords.get", "table:read kms:decrypt"),
  r("GET",    "/api/v1/ssh-keys",                                    "bearer",     "ssh:read",                            "keys",         "keys/ssh-keys.list", "table:read"),
  r("PUT",    "/api/v1/ssh-keys/{id}",                               "bearer",     "ssh:write",                           "keys",         "keys/ssh-keys.update", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/ssh-keys/{id}",                               "bearer",     "ssh:write",                           "keys",         "keys/ssh-keys.remove", "table:write"),
  r("POST",   "/api/v1/ssh-keys/generate",                           "bearer",     "ssh:write",                           "keys",         "keys/ssh-keys.generate", "table:write kms:encrypt"),
  r("POST",   "/api/v1/ssh-keys/import",                             "bearer",     "ssh:write",                           "keys",         "keys/ssh-keys.importKey", "table:write kms:encrypt"),
  r("GET",    "/api/v1/ssh-keys/{id}",                               "bearer",     "handler",                             "keys",         "keys/ssh-keys.get", "table:read"),
  r("GET",    "/api/v1/ssh-keys/{id}/export",                        "bearer",     "handler",                             "keys",         "keys/ssh-keys.exportKey", "table:write kms:decrypt"),
  r("GET",    "/api/v1/gpg-keys",                                    "bearer",     "gpg:read",                            "keys",         "keys/gpg-keys.list", "table:read"),
  r("PUT",    "/api/v1/gpg-keys/{id}",                               "bearer",     "gpg:write",                           "keys",         "keys/gpg-keys.update", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/gpg-keys/{id}",                               "bearer",     "gpg:write",                           "keys",         "keys/gpg-keys.remove", "table:write"),
  r("POST",   "/api/v1/gpg-keys/generate",                           "bearer",     "gpg:write",                           "keys",         "keys/gpg-keys.generate", "table:write kms:encrypt"),
  r("POST",   "/api/v1/gpg-keys/import",                             "bearer",     "gpg:write",                           "keys",         "keys/gpg-keys.importKey", "table:write kms:encrypt"),
  r("GET",    "/api/v1/gpg-keys/{id}",                               "bearer",     "handler",                             "keys",         "keys/gpg-keys.get", "table:read"),
  r("GET",    "/api/v1/gpg-keys/{id}/export",                        "bearer",     "handler",                             "keys",         "keys/gpg-keys.exportKey", "table:write kms:decrypt"),
  r("GET",    "/api/v1/openssl-keys",                                "bearer",     "credentials:read",                    "keys",         "keys/openssl-keys.list", "table:read"),
  r("GET",    "/api/v1/openssl-keys/{id}",                           "bearer",     "credentials:read",                    "keys",         "keys/openssl-keys.get", "table:read"),
  r("DELETE", "/api/v1/openssl-keys/{id}",                           "bearer",     "credentials:delete credentials:read", "keys",         "keys/openssl-keys.remove", "table:write"),
  r("GET",    "/api/v1/openssl-keys/{id}/export",                    "bearer",     "credentials:read export:read",        "keys",         "keys/openssl-keys.exportKey", "table:write kms:decrypt"),
  r("POST",   "/api/v1/openssl-keys/generate",                       "bearer",     "credentials:read credentials:write",  "keys",         "keys/openssl-keys.generate", "table:write kms:encrypt"),
  r("POST",   "/api/v1/openssl-keys/import",                         "bearer",     "credentials:read credentials:write",  "keys",         "keys/openssl-keys.importKey", "table:write kms:encrypt"),
  r("POST",   "/api/v1/generate-material",                           "bearer",     "credentials:write",                   "keys",         "keys/material.generateMaterial", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/age/{id}",                               "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/age/generate",                           "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateAge", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/dkim/{id}",                              "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/dkim/generate",                          "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateDkim", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/jwt-signing/{id}",                       "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/jwt-signing/generate",                   "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateJwtSigning", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/minisign/{id}",                          "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/minisign/generate",                      "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateMinisign", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/piv/{id}",                               "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/piv/generate",                           "bearer",     "credentials:write",                   "keys",         "keys/kinds.generatePiv", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/smime/{id}",                             "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/smime/generate",                         "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateSmime", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/wireguard/{id}",                         "bearer",     "credentials:write",                   "keys",         "keys/kinds.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/keys/wireguard/generate",                     "bearer",     "credentials:write",                   "keys",         "keys/kinds.generateWireguard", "table:write kms:encrypt"),
  r("GET",    "/api/v1/keys/smime/{id}/pkcs12",                      "bearer",     "credentials:write export:read",       "keys",         "keys/kinds.smimePkcs12", "table:write kms:decrypt"),
  r("GET",    "/api/v1/certificates",                                "bearer",     "certs:read",                          "certificates", "certificates/certificates.list", "table:read"),
  r("GET",    "/api/v1/certificates/{id}",                           "bearer",     "handler",                             "certificates", "certificates/certificates.get", "table:read"),
  r("GET",    "/api/v1/certificates/{id}/download",                  "bearer",     "handler",                             "certificates", "certificates/downloads.downloadGet", "table:write kms:decrypt"),
  r("POST",   "/api/v1/certificates/{id}/download",                  "bearer",     "handler",                             "certificates", "certificates/downloads.downloadPost", "table:write kms:decrypt"),
  r("POST",   "/api/v1/certificates/{id}/renew",                     "bearer",     "certs:write",                         "certificates", "certificates/lifecycle.renewCertificate", "table:write kms:encrypt"),
  r("POST",   "/api/v1/certificates/{id}/revoke",                    "bearer",     "certs:revoke",                        "certificates", "certificates/lifecycle.revokeCertificate", "table:write kms:encrypt"),
  r("POST",   "/api/v1/certificates/enroll",                         "bearer",     "certs:write",                         "certificates", "certificates/lifecycle.enrollCertificate", "table:write kms:encrypt"),
  r("GET",    "/api/v1/.well-known/jwks.json",                       "bearer",     "handler",                             "certificates", "certificates/jwks.jwks", "table:read"),
  r("GET",    "/api/v1/crypto/backends",                             "bearer",     "credentials:read",                    "signing",      "signing/crypto.backends", "hsm:describe"),
  r("GET",    "/api/v1/crypto/signing-keys",                         "bearer",     "keys:sign",                           "signing",      "signing/crypto.signingKeys", "table:read"),
  r("POST",   "/api/v1/crypto/sign",                                 "bearer",     "keys:sign",                           "signing",      "signing/crypto.sign", "table:write kms:encrypt hsm"),
  r("POST",   "/api/v1/database/roles/{id}/credentials",             "bearer",     "database:issue",                      "database",     "database/database.issue", "table:write kms:decrypt"),
  r("POST",   "/api/v1/database/roles/{id}/rotate",                  "bearer",     "database:rotate",                     "database",     "database/database.rotate", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/database/leases/{id}",                        "bearer",     "database:revoke",                     "database",     "database/database.revoke", "table:write kms:decrypt"),
  r("GET",    "/api/v1/variables",                                   "bearer",     "variables:read",                      "variables",    "variables/variables.list", "table:read"),
  r("GET",    "/api/v1/variables/{name}",                            "bearer",     "variables:read",                      "variables",    "variables/variables.get", "table:read"),
  r("PUT",    "/api/v1/variables/{name}",                            "bearer",     "variables:write",                     "variables",    "variables/variables.put", "table:write kms:decrypt"),
  r("DELETE", "/api/v1/variables/{name}",                            "bearer",     "variables:write",                     "variables",    "variables/variables.remove", "table:write"),
  r("POST",   "/api/v1/variables/resolve",                           "bearer",     "handler",                             "variables",    "variables/variables.resolve", "table:read kms:decrypt"),
  r("GET",    "/api/v1/agents/devices",                              "bearer",     "admin:*",                             "agents",       "agents/devices.list", "table:read"),
  r("POST",   "/api/v1/agents/devices",                              "bearer",     "admin:*",                             "agents",       "agents/devices.create", "table:write"),
  r("DELETE", "/api/v1/agents/devices/{id}",                         "bearer",     "admin:*",                             "agents",       "agents/devices.revoke", "table:write"),
  r("GET",    "/api/v1/agents/profiles",                             "bearer",     "admin:*",                             "agents",       "agents/profiles.list", "table:read"),
  r("PUT",    "/api/v1/agents/profiles/{id}",                        "bearer",     "admin:*",                             "agents",       "agents/profiles.put", "table:write"),
  r("POST",   "/api/v1/agents/oauth/approve",                        "bearer",     "agents:approve",                      "agents",       "agents/oauth.approve", "table:write"),
  r("POST",   "/api/v1/agents/oauth/review",                         "bearer",     "agents:approve",                      "agents",       "agents/oauth.review", "table:read"),
  r("POST",   "/api/v1/agent/oauth/device",                          "endpoint",   "-",                                   "agents",       "agents/oauth.device", "table:write"),
  r("POST",   "/api/v1/agent/oauth/token",                           "endpoint",   "-",                                   "agents",       "agents/oauth.token", "table:write"),
  r("POST",   "/api/v1/agent/oauth/enroll",                          "endpoint",   "-",                                   "agents",       "agents/oauth.enroll", "table:write"),
  r("GET",    "/api/v1/agent/identity",                              "device",     "-",                                   "agents",       "agents/identity.identity", "table:write"),
  r("POST",   "/api/v1/agent/access/{alias}",                        "device",     "-",                                   "agents",       "agents/access.access", "table:write kms:decrypt"),
  r("POST",   "/api/v1/agent/variables/resolve",                     "device",     "-",                                   "agents",       "agents/variables.resolveVariables", "table:write kms:decrypt"),
  r("GET",    "/api/v1/documents",                                   "bearer",     "handler",                             "documents",    "documents/documents.list", "table:read"),
  r("POST",   "/api/v1/documents",                                   "bearer",     "handler",                             "documents",    "documents/upload.create", "table:write kms:encrypt documents:write"),
  r("GET",    "/api/v1/documents/{id}",                              "bearer",     "handler",                             "documents",    "documents/documents.get", "table:read"),
  r("GET",    "/api/v1/documents/{id}/download",                     "bearer",     "handler",                             "documents",    "documents/documents.download", "table:read kms:decrypt documents:read"),
  r("GET",    "/api/v1/documents/{id}/grants",                       "bearer",     "handler",                             "documents",    "documents/grants.list", "table:read"),
  r("POST",   "/api/v1/documents/{id}/grants",                       "bearer",     "handler",                             "documents",    "documents/grants.create", "table:write"),
  r("DELETE", "/api/v1/documents/{id}/grants/{grant}",               "bearer",     "handler",                             "documents",    "documents/grants.remove", "table:write"),
  r("GET",    "/api/v1/documents/{id}/pages/{page}",                 "bearer",     "handler",                             "documents",    "documents/pages.render", "table:read kms:decrypt documents:read"),
  r("GET",    "/api/v1/oidc/clients",                                "bearer",     "oidc:read",                           "federation",   "federation/clients.list", "table:read"),
  r("GET",    "/api/v1/oidc/clients/{id}",                           "bearer",     "oidc:read",                           "federation",   "federation/clients.get", "table:read"),
  r("POST",   "/api/v1/oidc/clients",                                "bearer",     "oidc:read oidc:write",                "federation",   "federation/clients.create", "table:write"),
  r("PUT",    "/api/v1/oidc/clients/{id}",                           "bearer",     "oidc:read oidc:write",                "federation",   "federation/clients.update", "table:write"),
  r("DELETE", "/api/v1/oidc/clients/{id}",                           "bearer",     "oidc:read oidc:write",                "federation",   "federation/clients.remove", "table:write"),
  r("POST",   "/api/v1/oidc/clients/{id}/rotate-secret",             "bearer",     "oidc:read oidc:write",                "federation",   "federation/clients.rotateSecret", "table:write"),
  r("GET",    "/api/v1/oidc/jwks",                                   "bearer",     "oidc:read",                           "federation",   "federation/jwks.list", "table:read"),
  r("GET",    "/api/v1/oidc/jwks/{id}",                              "bearer",     "oidc:read",                           "federation",   "federation/jwks.get", "table:read"),
  r("GET",    "/api/v1/oidc/jwks/.well-known",                       "bearer",     "oidc:read",                           "federation",   "federation/jwks.wellKnown", "table:read"),
  r("POST",   "/api/v1/oidc/jwks",                                   "bearer",     "oidc:read oidc:write",                "federation",   "federation/jwks.create", "table:write"),
  r("PUT",    "/api/v1/oidc/jwks/{id}",                              "bearer",     "oidc:read oidc:write",                "federation",   "federation/jwks.update", "table:write"),
  r("DELETE", "/api/v1/oidc/jwks/{id}",                              "bearer",     "oidc:read oidc:write",                "federation",   "federation/jwks.remove", "table:write"),
  r("GET",    "/api/v1/oidc/tokens",                                 "bearer",     "oidc:read",                           "federation",   "federation/tokens.list", "table:read"),
  r("GET",    "/api/v1/oidc/tokens/{id}",                            "bearer",     "oidc:read",                           "federation",   "federation/tokens.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/oidc/tokens",                                 "bearer",     "oidc:read oidc:write",                "federation",   "federation/tokens.store", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/oidc/tokens/{id}",                            "bearer",     "oidc:read oidc:write",                "federation",   "federation/tokens.remove", "table:write"),
  r("POST",   "/api/v1/oidc/tokens/{id}/revoke",                     "bearer",     "oidc:read oidc:write",                "federation",   "federation/tokens.revoke", "table:write"),
  r("GET",    "/api/v1/saml/assertions",                             "bearer",     "saml:read",                           "federation",   "federation/assertions.list", "table:read"),
  r("GET",    "/api/v1/saml/assertions/{id}",                        "bearer",     "saml:read",                           "federation",   "federation/assertions.get", "table:read"),
  r("POST",   "/api/v1/saml/assertions",                             "bearer",     "saml:read saml:write",                "federation",   "federation/assertions.store", "table:write"),
  r("DELETE", "/api/v1/saml/assertions/{id}",                        "bearer",     "saml:read saml:write",                "federation",   "federation/assertions.remove", "table:write"),
  r("POST",   "/api/v1/saml/assertions/check-replay",                "bearer",     "saml:read saml:write",                "federation",   "federation/assertions.replay", "table:write"),
  r("GET",    "/api/v1/saml/metadata",                               "bearer",     "saml:read",                           "federation",   "federation/metadata.list", "table:read"),
  r("GET",    "/api/v1/saml/metadata/{id}",                          "bearer",     "saml:read",                           "federation",   "federation/metadata.get", "table:read"),
  r("GET",    "/api/v1/saml/metadata/{id}/xml",                      "bearer",     "saml:read",                           "federation",   "federation/metadata.xml", "table:read"),
  r("POST",   "/api/v1/saml/metadata",                               "bearer",     "saml:read saml:write",                "federation",   "federation/metadata.create", "table:write"),
  r("PUT",    "/api/v1/saml/metadata/{id}",                          "bearer",     "saml:read saml:write",                "federation",   "federation/metadata.update", "table:write"),
  r("DELETE", "/api/v1/saml/metadata/{id}",                          "bearer",     "saml:read saml:write",                "federation",   "federation/metadata.remove", "table:write"),
  r("GET",    "/api/v1/auth/cli/login",                              "endpoint",   "-",                                   "auth",         "auth/cli.login", "table:write"),
  r("POST",   "/api/v1/auth/cli/revoke",                             "endpoint",   "-",                                   "auth",         "auth/cli.revoke", "table:write"),
  r("POST",   "/api/v1/auth/cli/token",                              "endpoint",   "-",                                   "auth",         "auth/cli.token", "table:write kms:encrypt"),
  r("GET",    "/api/v1/auth/oauth/.well-known/openid-configuration", "endpoint",   "-",                                   "auth",         "auth/oauth.discovery"),
  r("GET",    "/api/v1/auth/oauth/authorize",                        "endpoint",   "-",                                   "auth",         "auth/oauth.authorize", "table:write"),
  r("POST",   "/api/v1/auth/oauth/token",                            "endpoint",   "-",                                   "auth",         "auth/oauth.token", "table:write kms:encrypt"),
  r("GET",    "/api/v1/auth/oidc/callback",                          "endpoint",   "-",                                   "auth",         "auth/oidc.callback", "table:write kms:encrypt"),
  r("GET",    "/api/v1/auth/oidc/login",                             "endpoint",   "-",                                   "auth",         "auth/oidc.login", "table:write kms:encrypt"),
  r("POST",   "/api/v1/auth/oidc/logout",                            "bearer",     "-",                                   "auth",         "auth/sessions.logout", "table:write"),
  r("POST",   "/api/v1/auth/refresh",                                "endpoint",   "-",                                   "auth",         "auth/sessions.refresh", "table:write kms:encrypt"),
  r("POST",   "/api/v1/auth/webauthn/authentication/begin",          "endpoint",   "-",                                   "auth",         "auth/webauthn.authenticationBegin", "table:write"),
  r("POST",   "/api/v1/auth/webauthn/authentication/finish",         "endpoint",   "-",                                   "auth",         "auth/webauthn.authenticationFinish", "table:write kms:encrypt"),
  r("POST",   "/api/v1/auth/webauthn/registration/begin",            "bearer",     "-",                                   "auth",         "auth/webauthn.registrationBegin", "table:write"),
  r("POST",   "/api/v1/auth/webauthn/registration/finish",           "bearer",     "-",                                   "auth",         "auth/webauthn.registrationFinish", "table:write"),
  r("POST",   "/api/v1/auth/workload/token",                         "endpoint",   "-",                                   "auth",         "auth/workload.token", "table:write kms:encrypt"),
  r("POST",   "/api/v1/auth/zkp/register",                           "endpoint",   "-",                                   "auth",         "auth/zkp.register", "table:write kms:encrypt"),
  r("POST",   "/api/v1/auth/zkp/verify",                             "endpoint",   "-",                                   "auth",         "auth/zkp.verify", "table:write kms:encrypt"),
  r("GET",    "/api/v1/webauthn/credentials",                        "bearer",     "handler",                             "auth",         "auth/webauthn.list"),
  r("DELETE", "/api/v1/webauthn/credentials/{id}",                   "bearer",     "handler",                             "auth",         "auth/webauthn.remove", "table:write"),
  r("GET",    "/api/v1/api-keys",                                    "bearer",     "admin:*",                             "account",      "account/api-keys.list", "table:read"),
  r("POST",   "/api/v1/api-keys",                                    "bearer",     "admin:*",                             "account",      "account/api-keys.create", "table:write kms:decrypt"),
  r("DELETE", "/api/v1/api-keys/{id}",                               "bearer",     "admin:*",                             "account",      "account/api-keys.revoke", "table:write"),
  r("GET",    "/api/v1/audit/logs",                                  "bearer",     "audit:read",                          "audit",        "audit/audit.list", "table:read"),
  r("GET",    "/api/v1/audit/logs/export",                           "bearer",     "audit:read",                          "audit",        "audit/audit.exportLogs", "table:write kms:encrypt"),
  r("GET",    "/api/v1/webhooks",                                    "bearer",     "webhooks:manage",                     "webhooks",     "webhooks/webhooks.list", "table:read"),
  r("POST",   "/api/v1/webhooks",                                    "bearer",     "webhooks:manage",                     "webhooks",     "webhooks/webhooks.create", "table:write kms:encrypt"),
  r("GET",    "/api/v1/webhooks/{id}/deliveries",                    "bearer",     "webhooks:manage",                     "webhooks",     "webhooks/webhooks.deliveries", "table:read"),
  r("POST",   "/api/v1/webhooks/{id}/test",                          "bearer",     "webhooks:manage",                     "webhooks",     "webhooks/webhooks.test", "table:write"),
  r("PUT",    "/api/v1/settings",                                    "bearer",     "settings:write",                      "account",      "account/settings.update", "table:write"),
  r("GET",    "/api/v1/quotas",                                      "bearer",     "handler",                             "account",      "account/usage.quotas", "table:read"),
  r("GET",    "/api/v1/usage",                                       "bearer",     "handler",                             "account",      "account/usage.usage", "table:read"),
  r("GET",    "/api/v1/cli/sync",                                    "bearer",     "admin:*",                             "account",      "account/cli-sync.sync", "table:write kms:decrypt"),
  r("POST",   "/api/v1/billing/checkout",                            "bearer",     "admin:*",                             "billing",      "billing/subscriptions.checkout", "table:write payment"),
  r("POST",   "/api/v1/billing/subscription/cancel",                 "bearer",     "admin:*",                             "billing",      "billing/subscriptions.cancel", "table:write payment"),
  r("POST",   "/api/v1/billing/subscription/update",                 "bearer",     "admin:*",                             "billing",      "billing/subscriptions.update", "table:write payment"),
  r("GET",    "/api/v1/admin/audit",                                 "operator",   "admin:*",                             "operator",     "audit/audit.adminList", "table:read"),
  r("GET",    "/api/v1/admin/tenants",                               "operator",   "admin:*",                             "operator",     "operator/tenants.list", "table:read"),
  r("POST",   "/api/v1/admin/tenants",                               "operator",   "admin:*",                             "operator",     "operator/tenants.create", "table:write"),
  r("PATCH",  "/api/v1/admin/tenants/{id}/activate",                 "operator",   "admin:*",                             "operator",     "operator/tenants.activate", "table:write"),
  r("PATCH",  "/api/v1/admin/tenants/{id}/suspend",                  "operator",   "admin:*",                             "operator",     "operator/tenants.suspend", "table:write"),
  r("PUT",    "/api/v1/admin/tenants/{id}/quota",                    "operator",   "admin:*",                             "operator",     "operator/tenants.setQuota", "table:write"),
  r("PUT",    "/api/v1/admin/tenants/{id}/sso",                      "operator",   "admin:*",                             "operator",     "operator/sso.put", "table:write kms:encrypt"),
  r("GET",    "/api/v1/admin/tenants/{id}/users",                    "operator",   "admin:*",                             "operator",     "operator/users.list"),
  r("POST",   "/api/v1/admin/users/reset-password",                  "operator",   "admin:*",                             "operator",     "operator/users.resetPassword", "table:write"),
  r("GET",    "/api/v1/diagnostics",                                 "bearer",     "admin:*",                             "diagnostics",  "diagnostics/diagnostics.get", "table:read kms:decrypt hsm:describe"),
  r("POST",   "/api/v1/diagnostics/trace",                           "bearer",     "admin:*",                             "diagnostics",  "diagnostics/trace.trace", "table:read kms:decrypt"),
  r("POST",   "/api/v1/mock/configure",                              "bearer",     "admin:*",                             "diagnostics",  "diagnostics/mock.configure", "table:write kms:encrypt"),
  r("GET",    "/api/v1/mock/templates/{type}",                       "bearer",     "admin:*",                             "diagnostics",  "diagnostics/mock.templates"),
  r("GET",    "/api/v1/skey-otps",                                   "bearer",     "secrets:read",                        "tools",        "tools/skey.list", "table:read"),
  r("POST",   "/api/v1/skey-otps",                                   "bearer",     "secrets:write",                       "tools",        "tools/skey.create", "table:write kms:encrypt"),
  r("DELETE", "/api/v1/skey-otps/{id}",                              "bearer",     "secrets:delete",                      "tools",        "tools/skey.remove", "table:write"),
  r("GET",    "/api/v1/skey-otps/{id}",                              "bearer",     "handler",                             "tools",        "tools/skey.get", "table:read"),
  r("POST",   "/api/v1/skey-otps/{id}/verify",                       "bearer",     "handler",                             "tools",        "tools/skey.verify", "table:write kms:encrypt"),
  r("POST",   "/api/v1/timelocks",                                   "bearer",     "secrets:read secrets:write",          "tools",        "tools/timelocks.action", "table:write kms:encrypt"),
  r("GET",    "/api/v1/timelocks/{id}",                              "bearer",     "secrets:read",                        "tools",        "tools/timelocks.get", "table:write kms:decrypt"),
  r("POST",   "/api/v1/escrow/split",                                "bearer",     "secrets:read",                        "tools",        "tools/escrow.split"),
  r("POST",   "/api/v1/escrow/combine",                              "bearer",     "secrets:read",                        "tools",        "tools/escrow.combine"),
  r("POST",   "/api/v1/steg/encode",                                 "bearer",     "secrets:read",                        "tools",        "tools/steg.encode"),
  r("POST",   "/api/v1/steg/decode",                                 "bearer",     "secrets:read",                        "tools",        "tools/steg.decode"),
  r("POST",   "/api/v1/ipfs/fetch",                                  "bearer",     "secrets:read",                        "tools",        "tools/ipfs.fetch", "table:read kms:decrypt"),
  r("POST",   "/api/v1/ipfs/store",                                  "bearer",     "secrets:write",                       "tools",        "tools/ipfs.store", "table:read kms:encrypt"),
  r("POST",   "/api/v1/transform/encode",                            "bearer",     "transform:use",                       "tools",        "tools/transform.encode"),
  r("POST",   "/api/v1/transform/decode",                            "bearer",     "transform:use",                       "tools",        "tools/transform.decode"),
  r("POST",   "/api/v1/transform/detect",                            "bearer",     "transform:use",                       "tools",        "tools/transform.detect"),
  r("POST",   "/api/v1/export/credential-manager",                   "bearer",     "export:read",                         "tools",        "tools/exports.credentialManager", "kms:decrypt"),
  r("POST",   "/api/v1/export/json",                                 "bearer",     "export:read",                         "tools",        "tools/exports.json", "kms:decrypt"),
  r("POST",   "/api/v1/export/keychain",                             "bearer",     "export:read",                         "tools",        "tools/exports.keychain", "kms:decrypt"),
  r("POST",   "/api/v1/extraction/db",                               "bearer",     "extract:run",                         "tools",        "tools/extraction.start", "table:write jobs:send"),
  r("GET",    "/api/v1/extraction/jobs/{id}",                        "bearer",     "extract:run",                         "tools",        "tools/extraction.get"),
  r("POST",   "/api/v1/intelligence/check-breach",                   "bearer",     "intelligence:read",                   "tools",        "tools/breach.check", "table:read kms:decrypt"),
  r("POST",   "/api/v1/ldap/connections/{id}/search",                "bearer",     "ldap:use",                            "tools",        "tools/ldap.search", "table:read kms:decrypt"),
  r("GET",    "/api/v1/ldap/export",                                 "bearer",     "ldap:use",                            "tools",        "tools/ldap.exportDirectory", "table:read kms:decrypt"),
  r("POST",   "/api/v1/ldap/import",                                 "bearer",     "ldap:use",                            "tools",        "tools/ldap.importDirectory", "table:read kms:decrypt"),
];

/**
 * The routes beyond the contract's: each one a standard needs at a path no contract route
 * can serve, as few as possible (API Gateway's resource quota), declared and deployed like
 * every other route.
 * - GET /api/v1/auth/oauth/jwks: the authorization server's own JWK set, its discovery
 *   `jwks_uri` (RFC 8414 §2): public, only the keys the service signs tokens with. The
 *   contract's GET /api/v1/.well-known/jwks.json needs a credential and holds keys users can
 *   export, so a verifier trusting it would accept tokens users sign.
 * - POST /api/v1/auth/cli/login: the RFC 8628 §3.1 device authorization request as the RFC
 *   sends it (POST, form-encoded); the contract's GET of the same path stays.
 * - GET and POST /api/v1/auth/oauth/userinfo: the OpenID Connect userinfo endpoint (OIDC
 *   Core §5.3, both methods required), RFC 6750 bearer errors; no contract route answers a
 *   person's claims in that format.
 * - POST /api/v1/auth/oauth/introspect: RFC 7662 introspection, client-authenticated.
 * - GET /api/v1/auth/oauth/logout: the discovery `end_session_endpoint` (RP-Initiated Logout
 *   1.0), a browser navigation with the sign-in cookie; the contract's sign-out is a bearer POST.
 * - GET /.well-known/oauth-authorization-server/{issuerPath+}: RFC 8414 §3 metadata, at the
 *   well-known path formed from the issuer (the suffix inserted between the host and the
 *   issuer's path `/api/v1/auth/oauth`). One greedy parameter, not the four literal segments:
 *   two API Gateway resources instead of five keeps the API under its 300-resource quota
 *   (test/infra/app.test.ts); any other issuer path is a 404.
 * Revocation at the authorization server is the contract's RFC 7009 route,
 * POST /api/v1/auth/cli/revoke: no route of its own.
 */
// biome-ignore format: the route table is read as a table, one route a line
export const ROUTES_BEYOND_CONTRACT: readonly Route[] = [
  r("GET",    "/api/v1/auth/oauth/jwks",                             "endpoint",   "-",                                   "auth",         "auth/oauth.jwks"),
  r("POST",   "/api/v1/auth/cli/login",                              "endpoint",   "-",                                   "auth",         "auth/cli.start", "table:write"),
  r("GET",    "/api/v1/auth/oauth/userinfo",                         "endpoint",   "-",                                   "auth",         "auth/oauth.userinfo"),
  r("POST",   "/api/v1/auth/oauth/userinfo",                         "endpoint",   "-",                                   "auth",         "auth/oauth.userinfoPost"),
  r("POST",   "/api/v1/auth/oauth/introspect",                       "endpoint",   "-",                                   "auth",         "auth/oauth.introspect", "table:write"),
  r("GET",    "/api/v1/auth/oauth/logout",                           "endpoint",   "-",                                   "auth",         "auth/oauth.endSession", "table:write"),
  r("GET",    "/.well-known/oauth-authorization-server/{issuerPath+}", "endpoint", "-",                                   "auth",         "auth/oauth.authorizationServerMetadata"),
];

/** The route's path as OpenAPI templates it: API Gateway's greedy `{name+}` (the rest of the path) is `{name}` there. */
export const openApiPath = (route: Pick<Route, 'path'>): string => route.path.replace(/\{(\w+)\+\}/g, '{$1}');

/** Every route: the contract's, in its order, then those beyond it. */
export const ROUTES: readonly Route[] = [...CONTRACT_ROUTES, ...ROUTES_BEYOND_CONTRACT];

const ROUTES_BY_KEY: ReadonlyMap<string, Route> = new Map(ROUTES.map((route) => [route.key, route]));

export function routeByKey(method: string, path: string): Route | undefined {
  return ROUTES_BY_KEY.get(`${method.toUpperCase()} ${path}`);
}

/** Every scope name the service knows: the router-level ones, the catalogue's, and those checked in handlers. */
export const KNOWN_SCOPES: readonly string[] = [
  ...new Set([
    ...ROUTES.flatMap((route) => route.scopes),
    ...Object.values(CATALOG).flatMap((e: CatalogEntry) => [...e.scopes.read, ...e.scopes.write, ...e.scopes.delete, ...e.scopes.export]),
    // checked inside handlers (spec, Authentication rule 4) and not a resource type's
    'admin:*',
    'history:read',
    'sharing:manage',
    'temp-access:create',
    'keys:sign',
    'database:issue',
    'database:rotate',
    'database:revoke',
    'variables:read',
    'variables:write',
    'agents:approve',
    'audit:read',
    'webhooks:manage',
    'settings:write',
    'oidc:read',
    'oidc:write',
    'saml:read',
    'saml:write',
    'ldap:use',
    'transform:use',
    'extract:run',
    'intelligence:read',
    // protected documents (lib/documents/access.ts): the owner's scopes; a grant is the grantee's permission
    'documents:read',
    'documents:write',
  ]),
].sort();
