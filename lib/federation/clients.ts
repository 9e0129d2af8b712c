import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { badRequest, notFound } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { actorName } from '../resources/store.js';
import { jwksExists } from './jwks.js';
import type { CreateClientBody, RotateSecretBody, UpdateClientBody } from './schemas.js';
import { commitChange, deleteAt, listItems, putAt, putNew, readItem } from '../resources/items.js';

/**
 * OIDC clients of the service's own authorization server (`/api/v1/oidc/clients`): what the
 * server needs to know about a client — redirect URIs (matched exactly), grant types, the
 * token endpoint authentication method, the scopes it may ask for and, for
 * `private_key_jwt`, the JWK set of this account with its keys.
 *
 * A client authenticating with a secret gets one at creation and at each rotation, shown
 * in that answer only: `ocs_` + 256 random bits. Only its SHA-256 is stored (the secret has
 * full entropy, as API keys do). Rotation keeps the previous hash valid until
 * `previous_secret_expires_at` (the grace period the caller chose), so deployed clients can
 * switch over; `clientSecretMatches` is the check the authorization server makes.
 */
interface OidcClient {
  readonly id: string;
  readonly client_id: string;
  readonly name: string;
  readonly description: string;
  readonly redirect_uris: string[];
  readonly grant_types: string[];
  readonly token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  readonly jwks_id: string | null;
  readonly scopes: string[];
  readonly secret_prefix: string | null;
  readonly secret_rotated_at: string | null;
  readonly previous_secret_expires_at: string | null;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
}

interface Stored extends OidcClient {
  readonly secret_hash: string | null;
  readonly previous_secret_hash: string | null;
}

const ClientItem = entity(
  'OIDC client',
  z.object({
    id: z.string(),
    client_id: z.string(),
    name: z.string(),
    description: z.string().default(''),
    redirect_uris: z.array(z.string()),
    grant_types: z.array(z.string()),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']),
    jwks_id: nullable(z.string()),
    scopes: z.array(z.string()),
    secret_prefix: nullable(z.string()),
    secret_rotated_at: nullable(z.string()),
    previous_secret_expires_at: nullable(z.string()),
    secret_hash: nullable(z.string()),
    previous_secret_hash: nullable(z.string()),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
const HIDDEN = new Set(['secret_hash', 'previous_secret_hash']);
const LIST_FIELDS = ClientItem.fields.filter((f) => !HIDDEN.has(f));

const toStored = (item: Record<string, unknown>): Stored => ClientItem.parse(item);
const toClient = (s: Stored): OidcClient => {
  const { secret_hash: _a, previous_secret_hash: _b, ...client } = s;
  return client;
};

const hash = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
const newSecret = () => `ocs_${randomBytes(32).toString('base64url')}`;
const usesSecret = (method: string) => method === 'client_secret_basic' || method === 'client_secret_post';

/** Whether `secret` is the client's current secret, or its previous one inside the grace period. */
export function clientSecretMatches(
  stored: Pick<Stored, 'secret_hash' | 'previous_secret_hash' | 'previous_secret_expires_at'>,
  secret: string,
  now = new Date(),
): boolean {
  const given = Buffer.from(hash(secret), 'hex');
  const same = (h: string | null) => h !== null && timingSafeEqual(Buffer.from(h, 'hex'), given);
  if (same(stored.secret_hash)) return true;
  return stored.previous_secret_expires_at !== null && stored.previous_secret_expires_at > now.toISOString() && same(stored.previous_secret_hash);
}

/**
 * A client's public `client_id` is `<account id>.<client id>`: the authorization server's
 * endpoints are the same for every account (one issuer), and the client_id is what each of
 * their requests names, so it tells the account.
 */
const CLIENT_ID_RE =
  /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The account a client_id names (`<account id>.<client id>`), or undefined for one of no client. */
export const clientAccountOf = (clientId: string | undefined): string | undefined =>
  clientId === undefined ? undefined : CLIENT_ID_RE.exec(clientId)?.[1];

/** A registered client by its public client_id, with its secret hashes (the authorization server's lookup); undefined when unknown. */
export async function clientByClientId(clientId: string): Promise<(Stored & { readonly tenantId: string }) | undefined> {
  const m = CLIENT_ID_RE.exec(clientId);
  if (!m) return undefined;
  const s = await read(m[1]!, m[2]!);
  return s && s.client_id === clientId ? { ...s, tenantId: m[1]! } : undefined;
}

const change = (verb: 'created' | 'updated' | 'deleted' | 'secret_rotated', c: OidcClient, data: Record<string, unknown> = {}): Change => ({
  action: `oidc_client.${verb === 'secret_rotated' ? 'rotate_secret' : verb.slice(0, -1)}`,
  resource: { type: 'oidc_client', id: c.id, name: c.name },
  event: { type: `oidc_client.${verb}`, data: { id: c.id, name: c.name, ...data } },
});

async function read(tenantId: string, id: string): Promise<Stored | undefined> {
  const item = await readItem(keys.oidcClient(tenantId, id));
  return item ? toStored(item) : undefined;
}

async function found(ctx: CallContext, id: string): Promise<Stored> {
  const s = await read(ctx.principal.tenantId, id);
  if (!s) throw notFound('OIDC client');
  return s;
}

export async function getClient(ctx: CallContext, id: string): Promise<OidcClient> {
  return toClient(await found(ctx, id));
}

export async function listClients(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.oidcClientPrefix, page, LIST_FIELDS);
  return { clients: out.items.map((i) => toClient(toStored(i))), nextCursor: out.nextCursor };
}

async function checkJwks(ctx: CallContext, method: string, jwksId: string | null): Promise<void> {
  if (method === 'private_key_jwt' && (jwksId === null || !(await jwksExists(ctx.principal.tenantId, jwksId)))) {
    throw badRequest('private_key_jwt needs a JWK set of this account', [{ path: 'body.jwks_id', message: 'no such JWK set' }]);
  }
}

export async function createClient(ctx: CallContext, body: CreateClientBody): Promise<{ client: OidcClient; client_secret: string | null }> {
  await checkJwks(ctx, body.token_endpoint_auth_method, body.jwks_id);
  const id = newId();
  const at = nowIso();
  const secret = usesSecret(body.token_endpoint_auth_method) ? newSecret() : null;
  const stored: Stored = {
    id,
    client_id: `${ctx.principal.tenantId}.${id}`,
    name: body.name,
    description: body.description,
    redirect_uris: body.redirect_uris,
    grant_types: body.grant_types,
    token_endpoint_auth_method: body.token_endpoint_auth_method,
    jwks_id: body.token_endpoint_auth_method === 'private_key_jwt' ? body.jwks_id : null,
    scopes: body.scopes,
    secret_prefix: secret ? secret.slice(0, 8) : null,
    secret_rotated_at: null,
    previous_secret_expires_at: null,
    secret_hash: secret ? hash(secret) : null,
    previous_secret_hash: null,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
  };
  const client = toClient(stored);
  await commitChange(ctx, [putNew(keys.oidcClient(ctx.principal.tenantId, id), { ...stored })], change('created', client));
  return { client, client_secret: secret };
}

/**
 * Changes a client. Switching to `private_key_jwt` drops its secrets; switching from it to a
 * secret method issues a first secret (returned once, as at creation).
 */
export async function updateClient(
  ctx: CallContext,
  id: string,
  body: UpdateClientBody,
): Promise<{ client: OidcClient; client_secret: string | null }> {
  const current = await found(ctx, id);
  const method = body.token_endpoint_auth_method ?? current.token_endpoint_auth_method;
  const jwksId = method === 'private_key_jwt' ? (body.jwks_id !== undefined ? body.jwks_id : current.jwks_id) : null;
  await checkJwks(ctx, method, jwksId);
  const grants = body.grant_types ?? current.grant_types;
  const redirects = body.redirect_uris ?? current.redirect_uris;
  if (grants.includes('authorization_code') && redirects.length === 0) {
    throw badRequest('authorization_code needs at least one redirect URI', [{ path: 'body.redirect_uris', message: 'at least one is required' }]);
  }
  if (method === 'none' && grants.includes('client_credentials')) {
    throw badRequest('a public client (none) cannot use client_credentials', [{ path: 'body.grant_types', message: 'it has no credential' }]);
  }
  const fresh = usesSecret(method) && current.secret_hash === null ? newSecret() : null;
  const secretFields = !usesSecret(method)
    ? { secret_hash: null, previous_secret_hash: null, previous_secret_expires_at: null, secret_prefix: null }
    : fresh
      ? { secret_hash: hash(fresh), secret_prefix: fresh.slice(0, 8), secret_rotated_at: nowIso() }
      : {};
  const next: Stored = {
    ...current,
    name: body.name ?? current.name,
    description: body.description ?? current.description,
    redirect_uris: redirects,
    grant_types: grants,
    token_endpoint_auth_method: method,
    jwks_id: jwksId,
    scopes: body.scopes ?? current.scopes,
    ...secretFields,
    version: current.version + 1,
    updated_at: nowIso(),
  };
  const client = toClient(next);
  await commitChange(ctx, [putAt(keys.oidcClient(ctx.principal.tenantId, id), { ...next }, current.version)], change('updated', client));
  return { client, client_secret: fresh };
}

export async function deleteClient(ctx: CallContext, id: string): Promise<OidcClient> {
  const current = await found(ctx, id);
  const client = toClient(current);
  await commitChange(ctx, [deleteAt(keys.oidcClient(ctx.principal.tenantId, id), current.version)], change('deleted', client));
  return client;
}

/** A new secret; the current one stays valid for `grace_seconds` (0: replaced at once). */
export async function rotateClientSecret(
  ctx: CallContext,
  id: string,
  body: RotateSecretBody,
): Promise<{ client: OidcClient; client_secret: string; previous_secret_valid_until: string | null }> {
  const current = await found(ctx, id);
  if (!usesSecret(current.token_endpoint_auth_method)) {
    throw badRequest(`a ${current.token_endpoint_auth_method} client has no secret to rotate`, [
      { path: 'params.id', message: 'the client authenticates with keys, or is public' },
    ]);
  }
  const secret = newSecret();
  const at = new Date();
  const until = body.grace_seconds > 0 && current.secret_hash ? new Date(at.getTime() + body.grace_seconds * 1000).toISOString() : null;
  const next: Stored = {
    ...current,
    secret_hash: hash(secret),
    secret_prefix: secret.slice(0, 8),
    previous_secret_hash: until ? current.secret_hash : null,
    previous_secret_expires_at: until,
    secret_rotated_at: at.toISOString(),
    version: current.version + 1,
    updated_at: at.toISOString(),
  };
  const client = toClient(next);
  await commitChange(
    ctx,
    [putAt(keys.oidcClient(ctx.principal.tenantId, id), { ...next }, current.version)],
    change('secret_rotated', client, { grace_until: until }),
  );
  return { client, client_secret: secret, previous_secret_valid_until: until };
}
