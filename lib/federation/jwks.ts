import { createHash } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { badRequest, conflict, notFound, type FieldIssue } from '../core/errors.js';
import { newId, nowIso } from '../ids.js';
import { accountSettings } from '../settings/settings.js';
import { tableName } from '../store/client.js';
import { entity, nullable } from '../store/entity.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';
import { actorName } from '../resources/store.js';
import type { TxItem } from '../store/tx.js';
import { OutboundFailed } from '../events/outbound.js';
import { fetchJwks } from './fetch.js';
import { validateJwkSet, type PublicJwk } from './jwk.js';
import type { CreateJwksBody, UpdateJwksBody, WorkloadBinding } from './schemas.js';
import { ADMIN_SCOPE, requireScopes } from '../auth/scopes.js';
import { commitChange, deleteAt, listItems, putAt, putNew, readItem } from '../resources/items.js';

/**
 * Trusted issuer key sets (`/api/v1/oidc/jwks`): public JWKs given inline or fetched from a
 * URL through the SSRF guard, validated on every write (lib/federation/jwk.ts). A URL set
 * keeps the fetched keys with the answer's cache lifetime; a token verification past that
 * lifetime fetches again (conditionally), and a failed refetch keeps the last good keys and
 * records the error. `issuer` ties a set to the `iss` of the tokens it verifies (one set
 * per issuer in an account, else 409 `already_exists`). `publish` puts its keys in the account's `.well-known` set.
 * `workload_bindings` say which of the issuer's tokens a workload may exchange for an access
 * token and with which scopes (lib/oauth/workload.ts): the issuer's keys and what they are
 * trusted for stay in one place. A set with bindings mints access tokens, so writing one
 * (its bindings, keys, issuer or its deletion) needs `admin:*`.
 */
interface JwkSet {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly issuer: string | null;
  readonly source: 'inline' | 'url';
  readonly jwks_uri: string | null;
  readonly keys: PublicJwk[];
  readonly kids: string[];
  readonly publish: boolean;
  readonly fetched_at: string | null;
  readonly cache_until: string | null;
  readonly etag: string | null;
  readonly last_modified: string | null;
  readonly fetch_error: string | null;
  readonly workload_bindings: WorkloadBinding[];
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
}

const JwksItem = entity(
  'JWK set',
  z.object({
    id: z.string(),
    name: z.string(),
    description: z.string().default(''),
    issuer: nullable(z.string()),
    source: z.enum(['inline', 'url']),
    jwks_uri: nullable(z.string()),
    keys: z.array(z.record(z.string(), z.unknown())),
    kids: z.array(z.string()).default([]),
    publish: z.boolean().default(false),
    fetched_at: nullable(z.string()),
    cache_until: nullable(z.string()),
    etag: nullable(z.string()),
    last_modified: nullable(z.string()),
    fetch_error: nullable(z.string()),
    workload_bindings: z
      .array(
        z.object({
          name: z.string().optional(),
          subject: z.string(),
          claims: z.record(z.string(), z.string()),
          scopes: z.array(z.string()),
          lifetime_seconds: z.number().int(),
        }),
      )
      .default([]),
    version: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: nullable(z.string()),
  }),
);
const toSet = (item: Record<string, unknown>): JwkSet => JwksItem.parse(item) as JwkSet;
/** The list projection: everything but the keys themselves (their kids are listed). */
const LIST_FIELDS = JwksItem.fields.filter((f) => f !== 'keys');

const kidsOf = (ks: readonly PublicJwk[]) => ks.map((k) => k.kid).filter((k): k is string => typeof k === 'string');

const change = (verb: 'created' | 'updated' | 'deleted', s: JwkSet): Change => ({
  action: `jwks.${verb.slice(0, -1)}`,
  resource: { type: 'jwks', id: s.id, name: s.name },
  detail: { source: s.source, kids: s.kids },
  event: { type: `jwks.${verb}`, data: { id: s.id, name: s.name, issuer: s.issuer, kids: s.kids } },
});

function checked(doc: unknown, where: string): PublicJwk[] {
  const { keys: ks, issues } = validateJwkSet(doc, where);
  if (issues.length > 0) throw badRequest('invalid JWK set', issues);
  return ks;
}

/** A set that grants workload tokens (before or after the write) is written by an admin only; bindings need the set's issuer. */
function checkBindings(ctx: CallContext, before: JwkSet | undefined, after: Pick<JwkSet, 'issuer' | 'workload_bindings'>): void {
  if ((before?.workload_bindings.length ?? 0) > 0 || after.workload_bindings.length > 0) requireScopes(ctx.principal, [ADMIN_SCOPE]);
  if (after.workload_bindings.length > 0 && !after.issuer) {
    throw badRequest('workload bindings need the issuer of the tokens they admit', [{ path: 'body.issuer', message: 'set the issuer' }]);
  }
}

const guard = (ctx: CallContext) => ({ allowLoopback: accountSettings(ctx.principal.tenant).webhooks.allow_loopback });

interface Loaded {
  readonly keys: PublicJwk[];
  readonly fetched_at: string;
  readonly cache_until: string;
  readonly etag: string | null;
  readonly last_modified: string | null;
}

/** Fetches and validates a URL's set (400 on a refused URL, a failed fetch or invalid keys). */
async function load(ctx: CallContext, uri: string, previous?: JwkSet): Promise<Loaded> {
  const issue = (message: string): FieldIssue[] => [{ path: 'body.jwks_uri', message }];
  let got: Awaited<ReturnType<typeof fetchJwks>>;
  try {
    got = await fetchJwks(uri, guard(ctx), previous ? { etag: previous.etag, lastModified: previous.last_modified } : undefined);
  } catch (error) {
    if (error instanceof OutboundFailed)
      throw badRequest(`the JWK set URL could not be fetched: ${error.message}`, issue(error.message), 'jwks_fetch_failed');
    throw error;
  }
  const base = { fetched_at: nowIso(), cache_until: got.cacheUntil, etag: got.etag, last_modified: got.lastModified };
  if (got.status === 304 && previous) return { keys: previous.keys, ...base };
  let doc: unknown;
  try {
    doc = JSON.parse(got.body ?? '');
  } catch {
    throw badRequest('the JWK set URL did not answer JSON', issue('not JSON'), 'jwks_fetch_failed');
  }
  return { keys: checked(doc, 'jwks_uri'), ...base };
}

async function read(tenantId: string, id: string): Promise<JwkSet | undefined> {
  const item = await readItem(keys.jwks(tenantId, id));
  return item ? toSet(item) : undefined;
}

export async function getJwks(ctx: CallContext, id: string): Promise<JwkSet> {
  const s = await read(ctx.principal.tenantId, id);
  if (!s) throw notFound('JWK set');
  return s;
}

/** A set of the account that exists (for references: a client's private_key_jwt keys). */
export async function jwksExists(tenantId: string, id: string): Promise<boolean> {
  return (await read(tenantId, id)) !== undefined;
}

export async function listJwks(ctx: CallContext, page: { limit: number; offset: number; cursor?: string | undefined }) {
  const out = await listItems(ctx.principal.tenantId, keys.jwksPrefix, page, LIST_FIELDS);
  return { sets: out.items.map((i) => toSet({ ...i, keys: [] })).map(({ keys: _k, ...rest }) => rest), nextCursor: out.nextCursor };
}

/** Every set of the account (bounded by what an account keeps): `.well-known`. */
async function allSets(tenantId: string): Promise<JwkSet[]> {
  return (await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.jwksPrefix } }, 1000)).map(toSet);
}

/**
 * An issuer names at most one set of an account: a `JWKSISS#<sha256(issuer)>` item claims it
 * in the set's write transaction (and is the lookup of token verification).
 */
const issuerKey = (tenantId: string, issuer: string) => keys.jwksIssuer(tenantId, createHash('sha256').update(issuer, 'utf8').digest('hex'));
const claimIssuer = (tenantId: string, issuer: string, id: string): TxItem => putNew(issuerKey(tenantId, issuer), { jwks_id: id, issuer });
const releaseIssuer = (tenantId: string, issuer: string): TxItem => ({ Delete: { TableName: tableName(), Key: issuerKey(tenantId, issuer) } });
const issuerTaken = (issuer: string | null) => conflict(`a JWK set of this account already holds the keys of issuer ${issuer}`, 'already_exists');

export async function createJwks(ctx: CallContext, body: CreateJwksBody): Promise<JwkSet> {
  const tid = ctx.principal.tenantId;
  const at = nowIso();
  checkBindings(ctx, undefined, { issuer: body.issuer ?? null, workload_bindings: body.workload_bindings ?? [] });
  const loaded: Loaded | undefined = body.jwks_uri ? await load(ctx, body.jwks_uri) : undefined;
  const ks = loaded ? loaded.keys : checked(body.jwks, 'body.jwks');
  const set: JwkSet = {
    id: newId(),
    name: body.name,
    description: body.description ?? '',
    issuer: body.issuer ?? null,
    source: body.jwks_uri ? 'url' : 'inline',
    jwks_uri: body.jwks_uri ?? null,
    keys: ks,
    kids: kidsOf(ks),
    publish: body.publish ?? false,
    fetched_at: loaded?.fetched_at ?? null,
    cache_until: loaded?.cache_until ?? null,
    etag: loaded?.etag ?? null,
    last_modified: loaded?.last_modified ?? null,
    fetch_error: null,
    workload_bindings: body.workload_bindings ?? [],
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actorName(ctx),
  };
  const items = [putNew(keys.jwks(tid, set.id), { ...set }), ...(set.issuer ? [claimIssuer(tid, set.issuer, set.id)] : [])];
  await commitChange(ctx, items, change('created', set), (i) => (i === 1 ? issuerTaken(set.issuer) : undefined));
  return set;
}

export async function updateJwks(ctx: CallContext, id: string, body: UpdateJwksBody): Promise<JwkSet> {
  const tid = ctx.principal.tenantId;
  const current = await getJwks(ctx, id);
  checkBindings(ctx, current, {
    issuer: body.issuer !== undefined ? body.issuer : current.issuer,
    workload_bindings: body.workload_bindings ?? current.workload_bindings,
  });
  if (body.refresh && !body.jwks_uri && current.source !== 'url') {
    throw badRequest('only a set with a jwks_uri can be refreshed', [{ path: 'body.refresh', message: 'the set is inline' }]);
  }
  let source = current.source;
  let uri = current.jwks_uri;
  let ks = current.keys;
  let loaded: Loaded | undefined;
  if (body.jwks) [source, uri, ks] = ['inline', null, checked(body.jwks, 'body.jwks')];
  else if (body.jwks_uri || body.refresh) {
    uri = body.jwks_uri ?? current.jwks_uri!;
    loaded = await load(ctx, uri, body.jwks_uri && body.jwks_uri !== current.jwks_uri ? undefined : current);
    [source, ks] = ['url', loaded.keys];
  }
  const next: JwkSet = {
    ...current,
    name: body.name ?? current.name,
    description: body.description ?? current.description,
    issuer: body.issuer !== undefined ? body.issuer : current.issuer,
    publish: body.publish ?? current.publish,
    workload_bindings: body.workload_bindings ?? current.workload_bindings,
    source,
    jwks_uri: uri,
    keys: ks,
    kids: kidsOf(ks),
    ...(source === 'inline' ? { fetched_at: null, cache_until: null, etag: null, last_modified: null, fetch_error: null } : {}),
    ...(loaded ? { ...loaded, fetch_error: null } : {}),
    version: current.version + 1,
    updated_at: nowIso(),
  };
  const items: TxItem[] = [putAt(keys.jwks(tid, id), { ...next }, current.version)];
  if (next.issuer !== current.issuer) {
    if (next.issuer) items.push(claimIssuer(tid, next.issuer, id));
    if (current.issuer) items.push(releaseIssuer(tid, current.issuer));
  }
  await commitChange(ctx, items, change('updated', next), (i) => (i === 1 && next.issuer ? issuerTaken(next.issuer) : undefined));
  return next;
}

export async function deleteJwks(ctx: CallContext, id: string): Promise<JwkSet> {
  const current = await getJwks(ctx, id);
  checkBindings(ctx, current, { issuer: null, workload_bindings: [] });
  const tid = ctx.principal.tenantId;
  const items = [deleteAt(keys.jwks(tid, id), current.version), ...(current.issuer ? [releaseIssuer(tid, current.issuer)] : [])];
  await commitChange(ctx, items, change('deleted', current));
  return current;
}

/** The account's published public keys as one RFC 7517 set (the first set's key wins a kid). */
export async function publishedJwks(ctx: CallContext): Promise<{ keys: PublicJwk[] }> {
  const out: PublicJwk[] = [];
  const seen = new Set<string>();
  for (const s of await allSets(ctx.principal.tenantId)) {
    if (!s.publish) continue;
    for (const k of s.keys) {
      if (k.kid !== undefined && seen.has(k.kid)) continue;
      if (k.kid !== undefined) seen.add(k.kid);
      out.push(k);
    }
  }
  return { keys: out };
}

/**
 * The set that verifies tokens of `issuer`, its keys fresh: a URL set past its cache
 * lifetime is fetched again (conditionally) and the result saved; a failed refetch keeps the
 * stored keys and records why. Undefined when no set names the issuer.
 */
export async function keysForIssuer(ctx: CallContext, issuer: string): Promise<JwkSet | undefined> {
  const tid = ctx.principal.tenantId;
  const claim = await readItem(issuerKey(tid, issuer));
  const found = claim ? await read(tid, claim.jwks_id as string) : undefined;
  if (!found || found.source !== 'url' || (found.cache_until && found.cache_until > nowIso())) return found;
  let next: JwkSet;
  try {
    const loaded = await load(ctx, found.jwks_uri!, found);
    next = { ...found, ...loaded, kids: kidsOf(loaded.keys), fetch_error: null };
  } catch (error) {
    next = { ...found, fetch_error: (error as Error).message.slice(0, 300) };
  }
  next = { ...next, version: found.version + 1, updated_at: nowIso() };
  try {
    await commitChange(ctx, [putAt(keys.jwks(tid, found.id), { ...next }, found.version)], {
      ...change('updated', next),
      action: 'jwks.refresh',
      ...(next.fetch_error ? { outcome: 'failure' as const, event: undefined } : {}),
    });
  } catch {
    // a concurrent refresh or edit won: verify with what this call fetched
  }
  return next;
}
