import * as z from 'zod/v4';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { open, seal } from '../crypto/envelope.js';
import { badRequest, conflict, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { actorName } from '../resources/store.js';
import { VERIFY_ALGS } from './jwk.js';
import { keysForIssuer } from './jwks.js';
import type { RevokeTokenBody, StoreTokenBody } from './schemas.js';
import { commitChange, deleteAt, listItems, putAt, putNew, readItem } from '../resources/items.js';

/**
 * Tokens a client hands in (`/api/v1/oidc/tokens`). On store, the compact JWS is decoded and,
 * when a JWK set of the account names its `iss`, its signature is verified against that set
 * (asymmetric algorithms only): `verification` is `valid`, `invalid` (with the reason), or
 * `unverified` when no set names the issuer (or there is no `iss`). `iss`, `sub`, `aud`,
 * `exp`, `nbf`, `iat`, `jti`, `alg` and `kid` are recorded; the raw token is sealed with the
 * account's data key and leaves only through GET of the one token while it is neither
 * revoked nor expired — never in a list, an event or a log.
 *
 * `status` is computed on each read: `revoked` once revoked (effective on the next read),
 * else `expired` past `exp`, else `active`. The first read of an expired token emits
 * `oidc_token.expired` (once: a conditional write marks it).
 */
export type Verification = 'valid' | 'invalid' | 'unverified';

export interface TokenRecord {
  readonly id: string;
  readonly description: string;
  readonly iss: string | null;
  readonly sub: string | null;
  readonly aud: string[];
  readonly exp: string | null;
  readonly nbf: string | null;
  readonly iat: string | null;
  readonly jti: string | null;
  readonly alg: string | null;
  readonly kid: string | null;
  readonly verification: Verification;
  readonly verification_error: string | null;
  readonly jwks_id: string | null;
  readonly revoked_at: string | null;
  readonly revoke_reason: string | null;
  readonly expired_event_at: string | null;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
}
export type Token = Omit<TokenRecord, 'expired_event_at'> & { readonly status: 'active' | 'revoked' | 'expired' };

const TokenItem = entity(
  'OIDC token',
  z.object({
    id: z.string(),
    description: z.string().default(''),
    iss: nullable(z.string()),
    sub: nullable(z.string()),
    aud: z.array(z.string()).default([]),
    exp: nullable(z.string()),
    nbf: nullable(z.string()),
    iat: nullable(z.string()),
    jti: nullable(z.string()),
    alg: nullable(z.string()),
    kid: nullable(z.string()),
    verification: z.enum(['valid', 'invalid', 'unverified']),
    verification_error: nullable(z.string()),
    jwks_id: nullable(z.string()),
    revoked_at: nullable(z.string()),
    revoke_reason: nullable(z.string()),
    expired_event_at: nullable(z.string()),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
/** Lists read the metadata only: never the sealed token. */
const LIST_FIELDS = TokenItem.fields;
const toRecord = (item: Record<string, unknown>): TokenRecord => TokenItem.parse(item);

const statusOf = (t: TokenRecord, now = nowIso()): Token['status'] =>
  t.revoked_at ? 'revoked' : t.exp !== null && t.exp <= now ? 'expired' : 'active';
const view = (t: TokenRecord): Token => {
  const { expired_event_at: _e, ...rest } = t;
  return { ...rest, status: statusOf(t) };
};

const sealScope = (tenantId: string, id: string) => ({ tenantId, type: 'oidc_token', id, version: 1 });

const change = (verb: 'stored' | 'revoked' | 'expired' | 'deleted', t: TokenRecord): Change => ({
  action: `oidc_token.${verb === 'stored' ? 'store' : verb === 'revoked' ? 'revoke' : verb === 'expired' ? 'expire' : 'delete'}`,
  resource: { type: 'oidc_token', id: t.id },
  detail: { iss: t.iss, verification: t.verification },
  event: { type: `oidc_token.${verb}`, data: { id: t.id, iss: t.iss, sub: t.sub, jti: t.jti, status: t.verification } },
});

const time = (s: unknown) => (typeof s === 'number' && Number.isFinite(s) ? new Date(s * 1000).toISOString() : null);
const str = (s: unknown) => (typeof s === 'string' ? s : null);

/** Decodes, then verifies against the issuer's set when the account has one. */
async function verify(ctx: CallContext, token: string) {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw badRequest('not a JWT: the header or payload does not decode', [{ path: 'body.token', message: 'not a decodable JWT' }]);
  }
  const base = { header, claims };
  if (typeof claims.iss !== 'string') return { ...base, verification: 'unverified' as const, error: 'the token has no iss claim', jwksId: null };
  const set = await keysForIssuer(ctx, claims.iss);
  if (!set) return { ...base, verification: 'unverified' as const, error: 'no JWK set of this account names the issuer', jwksId: null };
  try {
    await compactVerify(token, createLocalJWKSet({ keys: set.keys }), { algorithms: VERIFY_ALGS });
    return { ...base, verification: 'valid' as const, error: null, jwksId: set.id };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    return { ...base, verification: 'invalid' as const, error: `${e.code ?? 'ERR'}: ${String(e.message ?? '').slice(0, 200)}`, jwksId: set.id };
  }
}

export async function storeToken(ctx: CallContext, body: StoreTokenBody): Promise<Token> {
  const tid = ctx.principal.tenantId;
  const v = await verify(ctx, body.token);
  const aud = v.claims.aud;
  const at = nowIso();
  const record: TokenRecord = {
    id: newId(),
    description: body.description ?? '',
    iss: str(v.claims.iss),
    sub: str(v.claims.sub),
    aud: typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [],
    exp: time(v.claims.exp),
    nbf: time(v.claims.nbf),
    iat: time(v.claims.iat),
    jti: str(v.claims.jti),
    alg: str(v.header.alg),
    kid: str(v.header.kid),
    verification: v.verification,
    verification_error: v.error,
    jwks_id: v.jwksId,
    revoked_at: null,
    revoke_reason: null,
    expired_event_at: null,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
  };
  const sealed = await seal(sealScope(tid, record.id), body.token);
  await commitChange(ctx, [putNew(keys.oidcToken(tid, record.id), { ...record, token: sealed })], change('stored', record));
  return view(record);
}

async function found(ctx: CallContext, id: string): Promise<{ record: TokenRecord; sealed: Uint8Array }> {
  const item = await readItem(keys.oidcToken(ctx.principal.tenantId, id));
  if (!item) throw notFound('token');
  return { record: toRecord(item), sealed: item.token as Uint8Array };
}

/** One token; its raw form only while active. The first read past `exp` emits the expiry event. */
export async function getToken(ctx: CallContext, id: string): Promise<Token & { token: string | null }> {
  const tid = ctx.principal.tenantId;
  let { record, sealed } = await found(ctx, id);
  const status = statusOf(record);
  if (status === 'expired' && record.expired_event_at === null) {
    const next = { ...record, expired_event_at: nowIso(), version: record.version + 1 };
    try {
      await commitChange(ctx, [putAt(keys.oidcToken(tid, id), { ...next, token: sealed }, record.version)], change('expired', next));
      record = next;
    } catch {
      // a concurrent read or revoke won: it emitted or made the event moot
    }
  }
  const token = status === 'active' ? (await open(sealScope(tid, id), sealed)).toString('utf8') : null;
  return { ...view(record), token };
}

export async function listTokens(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.oidcTokenPrefix, page, LIST_FIELDS);
  return { tokens: out.items.map((i) => view(toRecord(i))), nextCursor: out.nextCursor };
}

export async function revokeToken(ctx: CallContext, id: string, body: RevokeTokenBody): Promise<Token> {
  const { record, sealed } = await found(ctx, id);
  if (record.revoked_at) throw conflict('the token is already revoked', 'already_revoked');
  const at = nowIso();
  const next: TokenRecord = { ...record, revoked_at: at, revoke_reason: body.reason ?? null, version: record.version + 1, updated_at: at };
  await commitChange(ctx, [putAt(keys.oidcToken(ctx.principal.tenantId, id), { ...next, token: sealed }, record.version)], change('revoked', next));
  return view(next);
}

export async function deleteToken(ctx: CallContext, id: string): Promise<Token> {
  const { record } = await found(ctx, id);
  await commitChange(ctx, [deleteAt(keys.oidcToken(ctx.principal.tenantId, id), record.version)], change('deleted', record));
  return view(record);
}
