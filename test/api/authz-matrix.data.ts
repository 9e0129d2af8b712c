import { hasScope } from '../../lib/auth/scopes.js';
import { CATALOG, type CatalogEntry } from '../../lib/catalog.js';
import { KNOWN_SCOPES, ROUTES, type Route } from '../../lib/routes.js';

/**
 * The adversarial authorization matrix as DATA (issue 32 item 3): every route of the route
 * table against every kind of caller, the expected outcome derived from the route's auth kind
 * and scopes (lib/routes.ts) and from the resource catalogue (lib/catalog.ts). Only the routes
 * whose scopes the spec leaves to the handler ("handler" in the route table) need a row of
 * HANDLER_RULES below; `expectedOutcome` throws for such a route without one, so a new route
 * cannot skip the matrix.
 */

/** Which account a credential belongs to: A holds every object; B received shares; C is a stranger; S is suspended. */
export type AccountName = 'A' | 'B' | 'C' | 'S' | 'OP';

export type CallerKind =
  | 'scoped-key' // an API key of A holding exactly one scope, issued by A's admin (the objects' creator)
  | 'creator-key' // an API key issued by the objects' creator holding none of the data scopes (issue 32's example)
  | 'creator-session' // the creator's own sign-in session (A's admin)
  | 'other-user-session' // another user of A in a session, scopes: secrets:read only
  | 'owner-session' // a user of A who is NOT an admin, in their own session: created the matrix's own password (OWNER_SCOPES)
  | 'owner-token' // a personal API token that non-admin creator issued (OWNER_TOKEN_SCOPES): never inherits the ownership
  | 'share-recipient' // B's admin: the secret and the password were shared with them
  | 'temp-token' // the temporary-access token of A's secret, sent as a bearer credential
  | 'device' // a device of A enrolled on a profile granting the secret, signing its requests (RFC 9421)
  | 'other-account' // C's admin (admin:* of another account)
  | 'operator' // the platform operator's root key
  | 'suspended' // the admin key of a suspended account
  | 'anonymous'; // no credentials

export interface Caller {
  readonly id: string;
  readonly kind: CallerKind;
  readonly account: AccountName | null;
  readonly scopes: readonly string[];
  /** The credential is a user's own sign-in session (user_token without an OAuth client). */
  readonly session: boolean;
}

/** The scopes of the other user of A (a custom scope list on the user item). */
export const OTHER_USER_SCOPES = ['secrets:read'] as const;
/**
 * The non-admin creator: may write passwords and issue tokens, holds no read scope of
 * passwords. It created a password of its own (the password routes name that one for the
 * owner callers), which it reads only through the creator rule (lib/credentials/access.ts).
 */
export const OWNER_SCOPES = ['passwords:write', 'tokens:read', 'tokens:write'] as const;
/** The token the non-admin creator issued: a scope it holds, none that reads a password. */
export const OWNER_TOKEN_SCOPES = ['passwords:write'] as const;
/** The example: a key of the creator with unrelated scopes reads nothing of theirs. */
export const CREATOR_KEY_SCOPES = ['intelligence:read', 'audit:read', 'ldap:use'] as const;

export const CALLERS: readonly Caller[] = [
  ...KNOWN_SCOPES.map((s): Caller => ({ id: `key[${s}]`, kind: 'scoped-key', account: 'A', scopes: [s], session: false })),
  { id: 'creator-key', kind: 'creator-key', account: 'A', scopes: CREATOR_KEY_SCOPES, session: false },
  { id: 'creator-session', kind: 'creator-session', account: 'A', scopes: ['admin:*'], session: true },
  { id: 'other-user-session', kind: 'other-user-session', account: 'A', scopes: OTHER_USER_SCOPES, session: true },
  { id: 'owner-session', kind: 'owner-session', account: 'A', scopes: OWNER_SCOPES, session: true },
  { id: 'owner-token', kind: 'owner-token', account: 'A', scopes: OWNER_TOKEN_SCOPES, session: false },
  { id: 'share-recipient', kind: 'share-recipient', account: 'B', scopes: ['admin:*'], session: false },
  { id: 'temp-token', kind: 'temp-token', account: null, scopes: [], session: false },
  { id: 'device', kind: 'device', account: 'A', scopes: [], session: false },
  { id: 'other-account', kind: 'other-account', account: 'C', scopes: ['admin:*'], session: false },
  { id: 'operator', kind: 'operator', account: 'OP', scopes: ['admin:*'], session: false },
  { id: 'suspended', kind: 'suspended', account: 'S', scopes: ['admin:*'], session: false },
  { id: 'anonymous', kind: 'anonymous', account: null, scopes: [], session: false },
];

/**
 * An expected outcome: `allowed` (authorization let the caller through: any answer but 401,
 * 403 and 5xx other than an unbuilt route's 501), a refusal with its status and code, or
 * `not-found` (the object is not the caller's: 404; a body route may refuse the body first
 * with 400, which reaches no object either). `same-as-anonymous`: a route that authenticates
 * itself ignores the bearer credential: the status equals the anonymous caller's.
 */
export type Outcome =
  | { readonly kind: 'allowed' }
  | { readonly kind: 'refused'; readonly status: 401 | 403; readonly code: string }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'same-as-anonymous' };

const allowed: Outcome = { kind: 'allowed' };
const notFound: Outcome = { kind: 'not-found' };
const refused = (status: 401 | 403, code: string): Outcome => ({ kind: 'refused', status, code });
const scope403 = refused(403, 'insufficient_scope');

export const describeOutcome = (o: Outcome): string =>
  o.kind === 'refused' ? `${o.status} ${o.code}` : o.kind === 'not-found' ? '404 (or 400 before any lookup)' : o.kind;

/**
 * What the handler checks on a "handler" route (the spec leaves the check to it), for the
 * matrix's object on that route:
 * - `scopes`: every one required (admin:* implies all);
 * - `any`: any valid credential of the account;
 * - `passkeys`: a user's own session, or admin:* (lib/users/passkeys.ts);
 * - `creatorSession`: the object's creator in their own session also reads it;
 * - `shared`: a user it was shared with reads it (the share recipient);
 * - `query`/`body`: what the matrix sends (the strongest variant: private exports);
 * - `variants`: the route's weaker variants (a public export, a PEM download), each needing
 *   fewer scopes: every caller is sent each of them too, so a variant that needs another
 *   scope than the strongest one is proven as well.
 */
export interface HandlerRule {
  readonly need: readonly string[] | 'any' | 'passkeys';
  readonly creatorSession?: boolean;
  readonly shared?: boolean;
  readonly query?: string;
  readonly variants?: readonly Variant[];
  /**
   * Why the route validates a request before it can tell what the caller needs (the object
   * decides it): the matrix then sends refused callers a valid request, not UNKNOWN_QUERY/BODY.
   */
  readonly validatesFirst?: string;
  /** Checked after `need`, on what the object refers to, refused with its own code (variables: the bound credential's read scope). */
  readonly bound?: { readonly need: readonly string[]; readonly code: string };
}

/** A weaker variant of a handler route: its own query or path parameters (the body is the test's, test/api/authz-matrix.test.ts `bodyFor`) and the scopes it needs. */
export interface Variant {
  readonly name: string;
  readonly need: readonly string[];
  readonly query?: string;
  /** Path parameters of its own (another version). */
  readonly params?: Readonly<Record<string, string>>;
  /** A body of its own (what the handler's decision reads). */
  readonly body?: unknown;
}

const C = CATALOG;
export const HANDLER_RULES: Readonly<Record<string, HandlerRule>> = {
  'GET /api/v1/s/{container}/{key}': { need: C.secret.scopes.read },
  // the matrix's secret has two versions: version 1 is history (history:read too), version 2 the current one
  'GET /api/v1/s/{container}/{key}/{version}': {
    need: [...C.secret.scopes.read, 'history:read'],
    variants: [{ name: 'current', need: C.secret.scopes.read, params: { version: '2' } }],
  },
  'GET /api/v1/shared-with-me': { need: 'any' },
  'GET /api/v1/passwords/{id}': { need: C.password.scopes.read, creatorSession: true, shared: true },
  'GET /api/v1/ssh-keys/{id}': { need: C.ssh_key.scopes.read },
  // the private key leaves only with the export scopes (the public part with ssh:read: the spec's "export" of a public key)
  'GET /api/v1/ssh-keys/{id}/export': {
    need: C.ssh_key.scopes.export,
    query: '?private=true',
    variants: [{ name: 'public', need: C.ssh_key.scopes.read, query: '' }],
  },
  'GET /api/v1/gpg-keys/{id}': { need: C.gpg_key.scopes.read },
  'GET /api/v1/gpg-keys/{id}/export': {
    need: C.gpg_key.scopes.export,
    query: '?private=true',
    variants: [{ name: 'public', need: C.gpg_key.scopes.read, query: '' }],
  },
  'GET /api/v1/certificates/{id}': { need: C.certificate.scopes.read },
  'GET /api/v1/certificates/{id}/download': {
    need: C.certificate.scopes.export,
    query: '?format=key',
    variants: [{ name: 'pem', need: C.certificate.scopes.read, query: '?format=pem' }],
  },
  // the body's default format is pkcs12 (private: the export scopes); PEM needs certs:read only
  'POST /api/v1/certificates/{id}/download': { need: C.certificate.scopes.export, variants: [{ name: 'pem', need: C.certificate.scopes.read }] },
  'GET /api/v1/.well-known/jwks.json': { need: 'any' },
  // the matrix's variable is bound to the secret: resolving it needs that type's read scope too (403 `forbidden` naming the variable)
  'POST /api/v1/variables/resolve': { need: ['variables:read'], bound: { need: C.secret.scopes.read, code: 'forbidden' } },
  // `?shared=true` lists what other accounts granted the caller's user: no scope of its own
  'GET /api/v1/documents': { need: ['documents:read'], variants: [{ name: 'shared', need: [], query: '?shared=true' }] },
  'POST /api/v1/documents': { need: ['documents:write'] },
  'GET /api/v1/documents/{id}': { need: ['documents:read'] },
  'GET /api/v1/documents/{id}/download': { need: ['documents:read'] },
  'GET /api/v1/documents/{id}/grants': { need: ['documents:read'] },
  'POST /api/v1/documents/{id}/grants': { need: ['documents:write'] },
  'DELETE /api/v1/documents/{id}/grants/{grant}': { need: ['documents:write'] },
  'GET /api/v1/documents/{id}/pages/{page}': {
    need: ['documents:read'],
    validatesFirst: 'a grantee of any account renders a page without a scope: only the document tells (lib/documents/access.ts)',
  },
  'GET /api/v1/webauthn/credentials': { need: 'passkeys' },
  'DELETE /api/v1/webauthn/credentials/{id}': { need: 'passkeys' },
  'GET /api/v1/quotas': { need: 'any' },
  'GET /api/v1/usage': { need: 'any' },
  'GET /api/v1/skey-otps/{id}': { need: ['secrets:read'] },
  'POST /api/v1/skey-otps/{id}/verify': { need: ['secrets:read'] },
};

/**
 * Routes that authenticate themselves (public, endpoint) but read the bearer credential as
 * their standard says: their answer depends on the caller, so the matrix checks only that no
 * credential kind gets a 5xx there. Everything else of that kind answers as to no credential.
 */
const SELF_AUTH_READS_BEARER = new Set([
  'GET /api/v1/auth/oauth/userinfo',
  'POST /api/v1/auth/oauth/userinfo',
  'GET /api/v1/diagnostics/auth',
  'POST /api/v1/auth/cli/revoke',
  'POST /api/v1/auth/oauth/introspect',
]);

/**
 * Bearer routes (no scope) that act on the caller's own sign-in session: an API key or any
 * credential that is not a user's session is refused (lib/users/sessions.ts, lib/users/passkeys.ts).
 */
const SESSION_ONLY = new Set([
  'POST /api/v1/auth/oidc/logout',
  'POST /api/v1/auth/webauthn/registration/begin',
  'POST /api/v1/auth/webauthn/registration/finish',
]);

/** Routes that end the caller's own credential when allowed: the matrix sends them after every other case. */
export const ENDS_CREDENTIAL = new Set(['POST /api/v1/auth/oidc/logout']);

/** Path parameters naming an object of account A (the rest name a kind, a page, a provider). */
const OBJECT_PARAMS = new Set(['id', 'name', 'share_id', 'grant_id', 'container', 'key', 'alias', 'grant']);

/** The route reaches an object of A through its path. */
export const touchesObject = (route: Route): boolean => [...route.path.matchAll(/\{(\w+)\}/g)].some((m) => OBJECT_PARAMS.has(m[1]!));

/** Routes where the share recipient reads A's object (lib/sharing: share-aware reads). */
const SHARE_AWARE = new Set(['GET /api/v1/secrets/{name}', 'GET /api/v1/passwords/{id}']);

const holdsAll = (caller: Caller, need: readonly string[]) => need.every((s) => hasScope(caller.scopes, s));

/** The catalogue entry whose collection the route belongs to, if any. */
export function entryOf(route: Route): CatalogEntry | undefined {
  let best: CatalogEntry | undefined;
  for (const e of Object.values(CATALOG) as CatalogEntry[]) {
    if ((route.path === e.path || route.path.startsWith(`${e.path}/`)) && (!best || e.path.length > best.path.length)) best = e;
  }
  return best;
}

/**
 * Stronger variants of routes whose scopes the route table checks: a query for which the
 * handler asks for more than the route's scopes (a kind of key's private view needs its
 * export scopes). `need` is on top of the route's own scopes; the matrix sends the route
 * without the query as well.
 */
export const ROUTE_VARIANTS: Readonly<Record<string, readonly Variant[]>> = {
  ...Object.fromEntries(
    ROUTES.filter((r) => r.handler === 'keys/kinds.get').map((r) => [
      r.key,
      [{ name: 'private', need: entryOf(r)!.scopes.export, query: '?include_private=true' }] as const,
    ]),
  ),
  // generated material stored as a secret is a secrets write as well
  'POST /api/v1/generate-material': [
    { name: 'shown', need: [], body: { type: 'password' } },
    { name: 'stored', need: ['secrets:write'], body: { type: 'password', store: { name: 'authz-matrix-generated' } } },
  ],
};

/** Every variant of a route beyond the one the matrix sends by default. */
export const variantsOf = (route: Route): readonly Variant[] => HANDLER_RULES[route.key]?.variants ?? ROUTE_VARIANTS[route.key] ?? [];

/** The variant of a route named `name` (undefined: the default, the rule itself). */
export function variantOf(route: Route, name: string | undefined): Variant | undefined {
  if (name === undefined) return undefined;
  const v = variantsOf(route).find((x) => x.name === name);
  if (!v) throw new Error(`${route.key}: no variant ${name} in HANDLER_RULES or ROUTE_VARIANTS`);
  return v;
}

/** The expected outcome of `caller` on `route` (on its variant `variant`, else its strongest); throws when the route has no derivation. */
export function expectedOutcome(route: Route, caller: Caller, variant?: string): Outcome {
  switch (route.auth) {
    case 'public':
    case 'endpoint':
      return { kind: 'same-as-anonymous' };
    case 'temp-token':
      // the path's token is the credential: the temp token's own URL is allowed, any other caller gets another token's answer
      return caller.kind === 'temp-token' ? allowed : { kind: 'same-as-anonymous' };
    case 'device':
      if (caller.kind === 'device') return allowed;
      return refused(401, 'unauthorized');
    case 'operator':
      if (caller.kind === 'anonymous' || caller.kind === 'temp-token' || caller.kind === 'device') return refused(401, 'unauthorized');
      if (caller.kind === 'suspended') return refused(403, 'tenant_suspended');
      return caller.kind === 'operator' ? allowed : refused(403, 'operator_required');
    case 'bearer':
      break;
    default:
      throw new Error(`${route.key}: auth kind ${String(route.auth)} has no derivation in the authorization matrix`);
  }
  if (caller.kind === 'anonymous' || caller.kind === 'temp-token' || caller.kind === 'device') return refused(401, 'unauthorized');
  if (caller.kind === 'suspended') return refused(403, 'tenant_suspended');
  const foreign = caller.account !== 'A' && touchesObject(route);
  if (SESSION_ONLY.has(route.key)) return caller.session ? allowed : refused(403, 'forbidden');
  if (!route.handlerScopes) {
    if (!holdsAll(caller, route.scopes)) return scope403;
    if (foreign) return caller.kind === 'share-recipient' && SHARE_AWARE.has(route.key) ? allowed : notFound;
    const v = variantOf(route, variant);
    return v && !holdsAll(caller, v.need) ? scope403 : allowed;
  }
  const found = HANDLER_RULES[route.key];
  if (!found)
    throw new Error(`${route.key}: its scopes are checked in the handler and HANDLER_RULES has no row for it (test/api/authz-matrix.data.ts)`);
  const v = variantOf(route, variant);
  const rule: HandlerRule = v ? { ...found, need: v.need } : found;
  // the handler looks the object up first: another account's caller never learns it exists
  if (foreign) return caller.kind === 'share-recipient' && rule.shared ? allowed : notFound;
  if (rule.need === 'any') return allowed;
  if (rule.need === 'passkeys') return caller.session || hasScope(caller.scopes, 'admin:*') ? allowed : scope403;
  if (holdsAll(caller, rule.need)) return rule.bound && !holdsAll(caller, rule.bound.need) ? refused(403, rule.bound.code) : allowed;
  // the creator in their own session: A's admin (allowed by admin:* anyway) and the non-admin owner of its own password
  if (rule.creatorSession && (caller.kind === 'creator-session' || caller.kind === 'owner-session')) return allowed;
  return scope403;
}

export const SELF_AUTH_READS = SELF_AUTH_READS_BEARER;

/** Refusals of the credential itself, decided before anything of the request is read. */
const CREDENTIAL_REFUSALS = new Set(['unauthorized', 'tenant_suspended', 'operator_required']);

/**
 * Whether a case is sent a request no route takes (UNKNOWN_QUERY/BODY in the test), to prove
 * the order authentication, then authorization, then validation: a caller refused for its
 * credential (401, a suspended account, not the operator) or for a scope it lacks on every
 * variant of the route. A caller that holds some variant's scopes may learn the request's
 * shape (it is admitted to the route), and so may any caller where only the object tells
 * (`validatesFirst`). A session-only route's 403 `forbidden` is the credential's too; the
 * handlers' other 403 `forbidden` (a variable bound to a credential the caller may not read)
 * is decided on the validated request.
 */
export function probesValidation(route: Route, caller: Caller, expected: Outcome): boolean {
  if (expected.kind !== 'refused') return false;
  if (CREDENTIAL_REFUSALS.has(expected.code)) return true;
  // a session-only route refuses any other credential before it reads the request
  if (SESSION_ONLY.has(route.key)) return true;
  if (expected.code !== 'insufficient_scope') return false;
  const rule = HANDLER_RULES[route.key];
  // the route table's scopes are checked before anything of the request; a variant's are the handler's
  if (!rule) return !holdsAll(caller, route.scopes);
  if (rule.validatesFirst) return false;
  const needs = [rule.need, ...(rule.variants ?? []).map((v) => v.need)];
  return !needs.some((need) => Array.isArray(need) && holdsAll(caller, need));
}

/**
 * The single-scope keys a route is probed with. A router-level check (missingScopes) treats
 * every scope outside the route's own alike, so those form one class: the matrix sends each
 * scope the route or its catalogue entry names, the handler rule's scopes, admin:*, and one
 * member of the rest, rotating with the route's index so that across the table every scope is
 * sent (AUTHZ_MATRIX_FULL=1 sends every scope on every route). The skipped cases keep their
 * derivation: the printed size counts them.
 */
export function probedScopes(route: Route, index: number, full: boolean): Set<string> {
  if (full) return new Set(KNOWN_SCOPES);
  // a route that is not a bearer route never reads a key's scopes: the admin key stands for all
  if (route.auth !== 'bearer' && route.auth !== 'operator') return new Set(['admin:*']);
  const e = entryOf(route);
  const rule = HANDLER_RULES[route.key];
  const own = new Set<string>([
    'admin:*',
    ...route.scopes,
    ...(Array.isArray(rule?.need) ? rule.need : []),
    ...variantsOf(route).flatMap((v) => v.need),
  ]);
  // a sibling: a scope of the same catalogue entry the route does not ask for (read on a write route, ...)
  const siblings = e ? [...new Set([...e.scopes.read, ...e.scopes.write, ...e.scopes.delete, ...e.scopes.export])].filter((s) => !own.has(s)) : [];
  const rest = KNOWN_SCOPES.filter((s) => !own.has(s) && !siblings.includes(s));
  const probes = new Set(own);
  if (siblings.length > 0) probes.add(siblings[index % siblings.length]!);
  // the handler-checked routes decide in code the route table does not see: two others, rotating
  for (let i = 0; i < (route.handlerScopes ? 2 : 1) && rest.length > 0; i++) probes.add(rest[(index * 2 + i) % rest.length]!);
  return probes;
}

export { ROUTES };
