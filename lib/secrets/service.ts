import type { CallContext } from '../auth/principal.js';
import type { Change } from '../audit/audit.js';
import { badRequest, forbidden, notFound } from '../core/errors.js';
import { UUID_RE } from '../ids.js';
import { sharedHead } from '../sharing/access.js';
import {
  createResource,
  deleteResource,
  etagOf,
  listResources,
  openSecret,
  readResourceByName,
  updateResource,
  type ResourceRecord,
  type StoredResource,
} from '../resources/store.js';
import { TxConditionFailed } from '../store/tx.js';
import { counterAdd } from '../store/usage.js';
import { ownerScope } from '../tenancy/scope.js';
import type { CreateSecretBody, ListSecretsQuery, UpdateSecretBody } from './schemas.js';

/**
 * Generic secrets: one more type of the versioned resource store (lib/resources/store.ts),
 * name-indexed — the head is `SECRET#<name>`, so a read by name is one GetItem — with the
 * `data` object as the sealed secret part and description and tags as `meta`. Its own rules
 * beside the store's: the account's secret quota (a counter in the same transaction) and
 * addressing a secret shared from another account by its id in place of a name.
 */
const TYPE = 'secret';

interface SecretMeta {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly tags: string[];
  readonly container_id: string | null;
  readonly version: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly created_by: string | null;
  readonly updated_by: string | null;
}
export type Secret = SecretMeta & {
  readonly data: Record<string, string>;
  /** Present when the caller reads or writes another account's secret through a share. */
  readonly shared?: { readonly share_id: string; readonly permission: string; readonly owner_tenant_id: string };
};

interface SecretStoredMeta {
  readonly description: string;
  readonly tags: string[];
}
type SecretRecord = ResourceRecord<SecretStoredMeta>;

const secretMeta = (m: Record<string, unknown>): SecretStoredMeta => ({
  description: typeof m.description === 'string' ? m.description : '',
  tags: Array.isArray(m.tags) ? m.tags.filter((t): t is string => typeof t === 'string') : [],
});

const toMeta = (r: SecretRecord): SecretMeta => ({
  id: r.id,
  name: r.name,
  description: r.meta.description ?? '',
  tags: r.meta.tags ?? [],
  container_id: r.container_id,
  version: r.version,
  created_at: r.created_at,
  updated_at: r.updated_at,
  created_by: r.created_by,
  updated_by: r.updated_by,
});

export { etagOf };

const change = (verb: 'create' | 'update' | 'delete', r: SecretRecord, detail?: Record<string, unknown>): Change => ({
  action: `secret.${verb}`,
  resource: { type: TYPE, id: r.id, name: r.name },
  ...(detail ? { detail } : {}),
  event:
    verb === 'delete'
      ? { type: 'secret.deleted', data: { id: r.id, name: r.name } }
      : { type: verb === 'create' ? 'secret.created' : 'secret.updated', data: { id: r.id, name: r.name, version: r.version } },
});

export async function createSecret(ctx: CallContext, body: CreateSecretBody): Promise<Secret> {
  const { quota } = ctx.principal.tenant;
  try {
    const record = await createResource<SecretStoredMeta, Record<string, string>>(
      ctx,
      {
        type: TYPE,
        name: body.name,
        meta: { description: body.description ?? '', tags: body.tags ?? [] },
        secret: body.data,
        container_id: body.container_id ?? null,
      },
      (r) => change('create', r),
      [counterAdd(ctx.principal.tenantId, 'secrets', 1, quota.max_secrets)],
    );
    return { ...toMeta(record), data: body.data };
  } catch (error) {
    // the quota counter is the one extra item
    if (error instanceof TxConditionFailed && error.index === 0)
      throw forbidden(`quota exceeded: at most ${quota.max_secrets} secrets`, 'quota_exceeded');
    throw error;
  }
}

interface Found {
  readonly tenantId: string;
  readonly stored: StoredResource<SecretStoredMeta>;
  readonly shared?: Secret['shared'];
}

/**
 * The caller's secret by name; else a secret of another account shared with the caller's
 * user, addressed by its id in place of a name (`GET /api/v1/secrets/{id}`; lib/sharing): the
 * caller's own secret of that name wins, so the path stays unambiguous for the owner.
 */
async function find(ctx: CallContext, name: string, need: 'read' | 'write'): Promise<Found | undefined> {
  const own = await readResourceByName<SecretStoredMeta>(ctx.principal.tenantId, TYPE, name);
  if (own) return { tenantId: ctx.principal.tenantId, stored: own };
  if (!UUID_RE.test(name)) return undefined;
  const hit = await sharedHead(ctx, TYPE, name, need);
  if (!hit) return undefined;
  return {
    tenantId: hit.tenantId,
    stored: { record: { ...hit.head.record, meta: secretMeta(hit.head.record.meta) }, sealed: hit.head.sealed },
    shared: { share_id: hit.share.id, permission: hit.share.permission, owner_tenant_id: hit.tenantId },
  };
}

export async function getSecret(ctx: CallContext, name: string): Promise<Secret> {
  const found = await find(ctx, name, 'read');
  if (!found) throw notFound('secret');
  const { record, sealed } = found.stored;
  // a shared secret is opened with its owner's data key, in the owner's scope (lib/tenancy/scope.ts)
  const data = (await ownerScope(found.tenantId, () => openSecret<Record<string, string>>(found.tenantId, record, sealed))) ?? {};
  return { ...toMeta(record), data, ...(found.shared ? { shared: found.shared } : {}) };
}

export async function listSecrets(ctx: CallContext, query: ListSecretsQuery) {
  const page = await listResources<SecretStoredMeta>(ctx.principal.tenantId, TYPE, {
    limit: query.limit,
    offset: query.cursor ? 0 : query.offset,
    cursor: query.cursor,
  });
  return { secrets: page.items.map(toMeta), nextCursor: page.nextCursor };
}

export async function updateSecret(ctx: CallContext, name: string, body: UpdateSecretBody, ifMatch?: string): Promise<Secret> {
  // a `write` share lets its recipient update the description, tags and value (never the container)
  const found = await find(ctx, name, 'write');
  if (found?.shared && body.container_id !== undefined) {
    throw badRequest('container_id cannot be changed through a share', [{ path: 'body.container_id', message: 'not allowed through a share' }]);
  }
  const shared = found?.shared;
  // through a write share, the owner's secret is updated (and its change audited) in the owner's scope
  const { record, secret } = await ownerScope(found?.tenantId ?? ctx.principal.tenantId, () =>
    updateResource<SecretStoredMeta, Record<string, string>>(
      ctx,
      TYPE,
      found?.stored.record.id ?? '',
      (current) => ({
        meta: { description: body.description ?? current.meta.description, tags: body.tags ?? current.meta.tags },
        ...(body.data ? { secret: body.data } : {}),
        ...(body.container_id !== undefined ? { container_id: body.container_id } : {}),
      }),
      (r) => change('update', r, { version: r.version, fields: Object.keys(body), ...(shared ? { via: 'share', share_id: shared.share_id } : {}) }),
      { ifMatch, tenantId: found?.tenantId, stored: found?.stored ?? null },
    ),
  );
  return { ...toMeta(record), data: secret ?? {}, ...(shared ? { shared } : {}) };
}

export async function deleteSecret(ctx: CallContext, name: string, ifMatch?: string): Promise<SecretMeta> {
  const tid = ctx.principal.tenantId;
  const stored = await readResourceByName<SecretStoredMeta>(tid, TYPE, name);
  const record = await deleteResource<SecretStoredMeta>(ctx, TYPE, stored?.record.id ?? '', (r) => change('delete', r), {
    ifMatch,
    stored: stored ?? null,
    extraItems: [counterAdd(tid, 'secrets', -1)],
  });
  return toMeta(record);
}
