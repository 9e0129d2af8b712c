import { apiTokenAuthDelete, apiTokenAuthGrace, apiTokenAuthPut, generateApiToken, hashApiToken } from '../auth/api-tokens.js';
import type { CallContext } from '../auth/principal.js';
import { missingScopes } from '../auth/scopes.js';
import type { Change } from '../audit/audit.js';
import { forbidden, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { createResource, deleteResource, etagOf, listResources, readResource, updateResource, type ResourceRecord } from '../resources/store.js';
import type { TxItem } from '../store/tx.js';
import { describeType, renderResource } from '../credentials/model.js';
import { apiToken, DEFAULT_LIFETIME_DAYS, type CreateTokenBody } from '../credentials/types/api-token.js';

/**
 * Personal API tokens over the generic resource store: the head `R#api_token#<id>` holds
 * name, prefix, scopes, expiry and the token hashes; the auth items (lib/auth/api-tokens.ts)
 * are written in the same transactions, so a created token works, and a rotated or deleted
 * one is refused, from the very next request.
 */
const TYPE = 'api_token';
const API_TOKEN = describeType(apiToken);
const def = () => API_TOKEN;

interface TokenMeta {
  readonly description: string;
  readonly tags: string[];
  readonly prefix: string;
  readonly scopes: string[];
  readonly expires_at: string;
  readonly hash: string;
  readonly previous_hash?: string;
  readonly previous_prefix?: string;
  readonly previous_valid_until?: string;
  readonly rotated_at?: string;
}
type TokenRecord = ResourceRecord<TokenMeta>;

const renderToken = (rec: TokenRecord) => renderResource(def(), rec as never);

const change = (verb: 'create' | 'update' | 'delete', rec: TokenRecord, detail?: Record<string, unknown>): Change => ({
  action: `api_token.${verb === 'update' ? 'rotate' : verb}`,
  resource: { type: TYPE, id: rec.id, name: rec.name },
  event: {
    type: `credential.${verb}d` as 'credential.created',
    data: { id: rec.id, type: TYPE, name: rec.name, ...(verb === 'delete' ? {} : { version: rec.version }) },
  },
  ...(detail ? { detail } : {}),
});

const authOf = (ctx: CallContext, id: string, meta: Pick<TokenMeta, 'scopes' | 'expires_at'>, createdBy: string | null) => ({
  tenant_id: ctx.principal.tenantId,
  token_id: id,
  scopes: meta.scopes,
  created_by: createdBy,
  expires_at: meta.expires_at,
});

/** A new token: scopes limited to the creator's own; the token is in the answer once. */
export async function createToken(ctx: CallContext, body: CreateTokenBody) {
  const p = ctx.principal;
  const missing = missingScopes(p.scopes, body.scopes);
  if (missing.length > 0) throw forbidden(`a token cannot carry scopes its creator lacks: ${missing.join(', ')}`, 'scope_escalation');
  const { token, prefix } = generateApiToken();
  const meta: TokenMeta = {
    description: body.description ?? '',
    tags: [],
    prefix,
    scopes: body.scopes,
    expires_at: body.expires_at ? new Date(body.expires_at).toISOString() : new Date(Date.now() + DEFAULT_LIFETIME_DAYS * 86_400_000).toISOString(),
    hash: hashApiToken(token),
  };
  const id = newId();
  const rec = await createResource<TokenMeta, never>(ctx, { type: TYPE, id, name: body.name, meta }, (r) => change('create', r), [
    apiTokenAuthPut(meta.hash, authOf(ctx, id, meta, p.user)),
  ]);
  return { ...renderToken(rec), token };
}

async function read(ctx: CallContext, id: string): Promise<TokenRecord> {
  const stored = await readResource<TokenMeta>(ctx.principal.tenantId, TYPE, id);
  if (!stored) throw notFound('API token');
  return stored.record;
}

export const getToken = async (ctx: CallContext, id: string) => renderToken(await read(ctx, id));

export async function listTokens(ctx: CallContext, page: { limit: number; offset: number; cursor?: string }) {
  const out = await listResources<TokenMeta>(ctx.principal.tenantId, TYPE, {
    limit: page.limit,
    offset: page.cursor ? 0 : page.offset,
    cursor: page.cursor,
  });
  return { tokens: out.items.map(renderToken), nextCursor: out.nextCursor };
}

/** Deletes of the auth items a token record still has (current, and a previous one in grace). */
const authDeletes = (meta: TokenMeta): TxItem[] => [meta.hash, meta.previous_hash].filter((h): h is string => !!h).map(apiTokenAuthDelete);

/**
 * A new secret for the token. The old one is refused from the next request on, or after
 * `graceSeconds` when asked; a token still in grace from an earlier rotation goes at once.
 * The new version is written only over the version the items were computed from.
 */
export async function rotateToken(ctx: CallContext, id: string, graceSeconds: number) {
  const current = await read(ctx, id);
  if (Date.parse(current.meta.expires_at) <= Date.now()) throw forbidden('the token has expired: create a new one', 'credentials_expired');
  const { token, prefix } = generateApiToken();
  const hash = hashApiToken(token);
  const at = nowIso();
  const until = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : undefined;
  const extraItems: TxItem[] = [
    apiTokenAuthPut(hash, authOf(ctx, id, current.meta, current.created_by)),
    until ? apiTokenAuthGrace(current.meta.hash, until) : apiTokenAuthDelete(current.meta.hash),
    ...(current.meta.previous_hash ? [apiTokenAuthDelete(current.meta.previous_hash)] : []),
  ];
  const meta: TokenMeta = {
    ...current.meta,
    prefix,
    hash,
    previous_hash: until ? current.meta.hash : undefined,
    previous_prefix: current.meta.prefix,
    previous_valid_until: until ?? at,
    rotated_at: at,
  };
  const { record } = await updateResource<TokenMeta, never>(
    ctx,
    TYPE,
    id,
    { meta: JSON.parse(JSON.stringify(meta)) as TokenMeta },
    (r) => change('update', r, { grace_seconds: graceSeconds }),
    {
      ifMatch: etagOf(current),
      extraItems,
    },
  );
  return { ...renderToken(record), token };
}

export async function deleteToken(ctx: CallContext, id: string) {
  const current = await read(ctx, id);
  const rec = await deleteResource<TokenMeta>(ctx, TYPE, id, (r) => change('delete', r), {
    ifMatch: etagOf(current),
    extraItems: authDeletes(current.meta),
  });
  return { id: rec.id, name: rec.name, prefix: rec.meta.prefix };
}
