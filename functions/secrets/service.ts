import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../../lib/auth/principal.js';
import { commit } from '../../lib/audit/audit.js';
import { openJson, sealJson } from '../../lib/crypto/envelope.js';
import { badRequest, conflict, forbidden, notFound } from '../../lib/http/errors.js';
import { newId, nowIso, UUID_RE } from '../../lib/ids.js';
import { sharedHead } from '../../lib/sharing/access.js';
import { db, tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { queryPage } from '../../lib/store/pagination.js';
import { membershipFailure, pushMembership, type Placement } from '../../lib/store/membership.js';
import { actorName as actor, checkIfMatch, etagOf, pruneDeletes, sealScope, versionKeys, versionPut } from '../../lib/store/resources.js';
import { TxConditionFailed, type TxItem } from '../../lib/store/tx.js';
import { counterAdd } from '../../lib/store/usage.js';
import type { CreateSecretBody, ListSecretsQuery, UpdateSecretBody } from './schemas.js';

const TYPE = 'secret';

export interface SecretMeta {
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

const META = ['id', 'name', 'description', 'tags', 'container_id', 'version', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;
const toMeta = (item: Record<string, unknown>): SecretMeta =>
  Object.fromEntries(META.map((f) => [f, item[f] ?? (f === 'tags' ? [] : f === 'description' ? '' : null)])) as unknown as SecretMeta;

export { etagOf };

const scope = (tenantId: string, id: string, version: number) => sealScope(tenantId, TYPE, id, version);

async function readHead(tenantId: string, name: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.secret(tenantId, name), ConsistentRead: true }));
  return out.Item;
}

/**
 * The head item (keyed by name, current version, value sealed) and the version item of a
 * write, in the shared version format of lib/store/resources.ts.
 */
function writeItems(tenantId: string, meta: SecretMeta, sealed: Uint8Array, keepVersions?: number): { head: Record<string, unknown>; version: TxItem } {
  const head = {
    ...keys.secret(tenantId, meta.name),
    ...keys.resourceIndex(tenantId, meta.id),
    type: TYPE,
    ...meta,
    // the history settings (PUT /api/v1/secret/{id}/history-settings) survive every write
    ...(keepVersions !== undefined ? { keep_versions: keepVersions } : {}),
    value: sealed,
  };
  const version = versionPut(
    tenantId,
    { ...meta, type: TYPE, meta: { description: meta.description, tags: meta.tags } },
    sealed,
  );
  return { head, version };
}

export async function createSecret(ctx: CallContext, body: CreateSecretBody): Promise<Secret> {
  const p = ctx.principal;
  const tid = p.tenantId;
  const at = nowIso();
  const meta: SecretMeta = {
    id: newId(),
    name: body.name,
    description: body.description ?? '',
    tags: body.tags ?? [],
    container_id: body.container_id ?? null,
    version: 1,
    created_at: at,
    updated_at: at,
    created_by: actor(ctx),
    updated_by: actor(ctx),
  };
  const sealed = await sealJson(scope(tid, meta.id, 1), body.data);
  const { head, version } = writeItems(tid, meta, sealed);
  const items: TxItem[] = [
    { Put: { TableName: tableName(), Item: head, ConditionExpression: 'attribute_not_exists(pk)' } },
    version,
    counterAdd(tid, 'secrets', 1, p.tenant.quota.max_secrets),
  ];
  const placed = pushMembership(tid, items, null, placement(meta));
  try {
    await commit(ctx, tid, items, {
      action: 'secret.create',
      resource: { type: TYPE, id: meta.id, name: meta.name },
      event: { type: 'secret.created', data: { id: meta.id, name: meta.name, version: 1 } },
    });
  } catch (error) {
    membershipFailure(error, placed, placement(meta));
    if (error instanceof TxConditionFailed) {
      if (error.index === 0) throw conflict(`a secret named "${meta.name}" already exists`, 'already_exists');
      if (error.index === 2) throw forbidden(`quota exceeded: at most ${p.tenant.quota.max_secrets} secrets`, 'quota_exceeded');
      if (error.conflict) throw conflict(`a secret named "${meta.name}" is being created concurrently`, 'already_exists');
    }
    throw error;
  }
  return { ...meta, data: body.data };
}

const placement = (meta: SecretMeta): Placement => ({ type: TYPE, id: meta.id, name: meta.name, container_id: meta.container_id });

/**
 * A secret of another account shared with the caller's user is addressed by its id in place
 * of a name (`GET /api/v1/secrets/{id}`; lib/sharing): the caller's own secret of that name
 * wins, so the path stays unambiguous for the owner.
 */
async function sharedSecret(ctx: CallContext, name: string, need: 'read' | 'write') {
  if (!UUID_RE.test(name)) return undefined;
  const shared = await sharedHead(ctx, TYPE, name, need);
  if (!shared) return undefined;
  return { tenantId: shared.tenantId, item: shared.head.item, shared: { share_id: shared.share.id, permission: shared.share.permission, owner_tenant_id: shared.tenantId } };
}

export async function getSecret(ctx: CallContext, name: string): Promise<Secret> {
  let tid = ctx.principal.tenantId;
  let item = await readHead(tid, name);
  let shared: Secret['shared'];
  if (!item) {
    const hit = await sharedSecret(ctx, name, 'read');
    if (!hit) throw notFound('secret');
    ({ tenantId: tid, item, shared } = hit);
  }
  const meta = toMeta(item);
  const data = await openJson<Record<string, string>>(scope(tid, meta.id, meta.version), item.value as Uint8Array);
  return { ...meta, data, ...(shared ? { shared } : {}) };
}

export async function listSecrets(ctx: CallContext, query: ListSecretsQuery) {
  const page = await queryPage<Record<string, unknown>>({
    pk: keys.tenant(ctx.principal.tenantId).pk,
    prefix: keys.secretPrefix,
    limit: query.limit,
    offset: query.cursor ? 0 : query.offset,
    cursor: query.cursor,
    projection: META,
  });
  return { secrets: page.items.map(toMeta), nextCursor: page.nextCursor };
}

export async function updateSecret(ctx: CallContext, name: string, body: UpdateSecretBody, ifMatch?: string): Promise<Secret> {
  let tid = ctx.principal.tenantId;
  let item = await readHead(tid, name);
  let shared: Secret['shared'];
  if (!item) {
    // a `write` share lets its recipient update the description, tags and value (never the container)
    const hit = await sharedSecret(ctx, name, 'write');
    if (hit) {
      if (body.container_id !== undefined) {
        throw badRequest('container_id cannot be changed through a share', [{ path: 'body.container_id', message: 'not allowed through a share' }]);
      }
      ({ tenantId: tid, item, shared } = hit);
    }
  }
  checkIfMatch(ifMatch, item && toMeta(item), 'secret');
  const current = toMeta(item!);
  const data = body.data ?? (await openJson<Record<string, string>>(scope(tid, current.id, current.version), item!.value as Uint8Array));
  const meta: SecretMeta = {
    ...current,
    description: body.description ?? current.description,
    tags: body.tags ?? current.tags,
    container_id: body.container_id === undefined ? current.container_id : body.container_id,
    version: current.version + 1,
    updated_at: nowIso(),
    updated_by: actor(ctx),
  };
  const sealed = await sealJson(scope(tid, meta.id, meta.version), data);
  const keepVersions = item!.keep_versions as number | undefined;
  const { head, version } = writeItems(tid, meta, sealed, keepVersions);
  const items: TxItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: head,
        ConditionExpression: 'id = :id AND version = :v',
        ExpressionAttributeValues: { ':id': current.id, ':v': current.version },
      },
    },
    version,
    ...pruneDeletes(tid, { type: TYPE, id: meta.id, version: meta.version, keep_versions: keepVersions }),
  ];
  const placed = pushMembership(tid, items, placement(current), placement(meta));
  try {
    await commit(ctx, tid, items, {
      action: 'secret.update',
      resource: { type: TYPE, id: meta.id, name: meta.name },
      detail: { version: meta.version, fields: Object.keys(body), ...(shared ? { via: 'share', share_id: shared.share_id } : {}) },
      event: { type: 'secret.updated', data: { id: meta.id, name: meta.name, version: meta.version } },
    });
  } catch (error) {
    membershipFailure(error, placed, placement(meta));
    if (error instanceof TxConditionFailed) {
      throw conflict('the secret was changed concurrently; read it again before retrying', 'stale_etag');
    }
    throw error;
  }
  return { ...meta, data, ...(shared ? { shared } : {}) };
}

export async function deleteSecret(ctx: CallContext, name: string, ifMatch?: string): Promise<SecretMeta> {
  const tid = ctx.principal.tenantId;
  const item = await readHead(tid, name);
  checkIfMatch(ifMatch, item && toMeta(item), 'secret');
  const meta = toMeta(item!);
  const versions = await versionKeys(tid, TYPE, meta.id);
  const items: TxItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: keys.secret(tid, name),
        ConditionExpression: 'id = :id AND version = :v',
        ExpressionAttributeValues: { ':id': meta.id, ':v': meta.version },
      },
    },
    ...versions.map((k): TxItem => ({ Delete: { TableName: tableName(), Key: k } })),
    counterAdd(tid, 'secrets', -1),
  ];
  pushMembership(tid, items, placement(meta), null);
  try {
    await commit(ctx, tid, items, {
      action: 'secret.delete',
      resource: { type: TYPE, id: meta.id, name: meta.name },
      event: { type: 'secret.deleted', data: { id: meta.id, name: meta.name } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) throw conflict('the secret was changed concurrently; read it again before retrying', 'stale_etag');
    throw error;
  }
  return meta;
}
