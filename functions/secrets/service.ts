import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { CallContext } from '../../lib/auth/principal.js';
import { commit } from '../../lib/audit/audit.js';
import { openJson, sealJson, type SealScope } from '../../lib/crypto/envelope.js';
import { conflict, forbidden, notFound, preconditionFailed } from '../../lib/http/errors.js';
import { newId, nowIso } from '../../lib/ids.js';
import { db, tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { queryPage } from '../../lib/store/pagination.js';
import { TxConditionFailed, type TxItem } from '../../lib/store/tx.js';
import { counterAdd } from '../../lib/store/usage.js';
import type { CreateSecretBody, ListSecretsQuery, UpdateSecretBody } from './schemas.js';

/** Versions kept per secret; older ones are pruned in the same transaction as a write. */
export const KEEP_VERSIONS = 10;
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
export type Secret = SecretMeta & { readonly data: Record<string, string> };

const META = ['id', 'name', 'description', 'tags', 'container_id', 'version', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;
const toMeta = (item: Record<string, unknown>): SecretMeta =>
  Object.fromEntries(META.map((f) => [f, item[f] ?? (f === 'tags' ? [] : f === 'description' ? '' : null)])) as unknown as SecretMeta;

/** Strong ETag of one version of one secret: a recreated name never matches an old tag. */
export const etagOf = (s: Pick<SecretMeta, 'id' | 'version'>) => `"${s.id}.${s.version}"`;

const scope = (tenantId: string, id: string, version: number): SealScope => ({ tenantId, type: TYPE, id, version });
const actor = (ctx: CallContext) => ctx.principal.user ?? `${ctx.principal.kind}:${ctx.principal.id}`;

async function readHead(tenantId: string, name: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.secret(tenantId, name), ConsistentRead: true }));
  return out.Item;
}

/** The head item (current version, value sealed) and the version item of a write. */
function writeItems(tenantId: string, meta: SecretMeta, sealed: Uint8Array): { head: Record<string, unknown>; version: TxItem } {
  const head = { ...keys.secret(tenantId, meta.name), ...keys.resourceIndex(tenantId, meta.id), type: TYPE, ...meta, value: sealed };
  const version: TxItem = {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.secretVersion(tenantId, meta.id, meta.version),
        id: meta.id,
        name: meta.name,
        version: meta.version,
        description: meta.description,
        tags: meta.tags,
        value: sealed,
        created_at: meta.updated_at,
        created_by: meta.updated_by,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
  return { head, version };
}

const containerCheck = (tenantId: string, containerId: string): TxItem => ({
  ConditionCheck: { TableName: tableName(), Key: keys.container(tenantId, containerId), ConditionExpression: 'attribute_exists(pk)' },
});

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
  if (meta.container_id) items.push(containerCheck(tid, meta.container_id));
  try {
    await commit(ctx, tid, items, {
      action: 'secret.create',
      resource: { type: TYPE, id: meta.id, name: meta.name },
      event: { type: 'secret.created', data: { id: meta.id, name: meta.name, version: 1 } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === 0) throw conflict(`a secret named "${meta.name}" already exists`, 'already_exists');
      if (error.index === 2) throw forbidden(`quota exceeded: at most ${p.tenant.quota.max_secrets} secrets`, 'quota_exceeded');
      if (error.index === 3) throw notFound('container');
      if (error.conflict) throw conflict(`a secret named "${meta.name}" is being created concurrently`, 'already_exists');
    }
    throw error;
  }
  return { ...meta, data: body.data };
}

export async function getSecret(ctx: CallContext, name: string): Promise<Secret> {
  const tid = ctx.principal.tenantId;
  const item = await readHead(tid, name);
  if (!item) throw notFound('secret');
  const meta = toMeta(item);
  const data = await openJson<Record<string, string>>(scope(tid, meta.id, meta.version), item.value as Uint8Array);
  return { ...meta, data };
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

/**
 * Checks `If-Match` against the current head. A malformed tag, or any tag when the secret
 * does not exist, cannot hold: 412. A well-formed tag of another version: 409 (stale).
 */
function checkIfMatch(ifMatch: string | undefined, head: Record<string, unknown> | undefined): void {
  if (ifMatch === undefined) {
    if (!head) throw notFound('secret');
    return;
  }
  const tags = ifMatch.split(',').map((t) => t.trim());
  if (!head) throw preconditionFailed('If-Match given for a secret that does not exist');
  if (tags.includes('*')) return;
  if (!tags.every((t) => /^"[0-9a-f-]{36}\.\d+"$/.test(t))) throw preconditionFailed('malformed ETag in If-Match');
  const current = etagOf({ id: head.id as string, version: head.version as number });
  if (!tags.includes(current)) throw conflict('stale ETag: the secret has changed; read it again before retrying', 'stale_etag');
}

const versionPrune = (tid: string, id: string, newVersion: number): TxItem[] =>
  newVersion > KEEP_VERSIONS ? [{ Delete: { TableName: tableName(), Key: keys.secretVersion(tid, id, newVersion - KEEP_VERSIONS) } }] : [];

export async function updateSecret(ctx: CallContext, name: string, body: UpdateSecretBody, ifMatch?: string): Promise<Secret> {
  const tid = ctx.principal.tenantId;
  const item = await readHead(tid, name);
  checkIfMatch(ifMatch, item);
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
  const { head, version } = writeItems(tid, meta, sealed);
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
    ...versionPrune(tid, meta.id, meta.version),
  ];
  const containerIndex = items.length;
  if (meta.container_id && meta.container_id !== current.container_id) items.push(containerCheck(tid, meta.container_id));
  try {
    await commit(ctx, tid, items, {
      action: 'secret.update',
      resource: { type: TYPE, id: meta.id, name: meta.name },
      detail: { version: meta.version, fields: Object.keys(body) },
      event: { type: 'secret.updated', data: { id: meta.id, name: meta.name, version: meta.version } },
    });
  } catch (error) {
    if (error instanceof TxConditionFailed) {
      if (error.index === containerIndex) throw notFound('container');
      throw conflict('the secret was changed concurrently; read it again before retrying', 'stale_etag');
    }
    throw error;
  }
  return { ...meta, data };
}

export async function deleteSecret(ctx: CallContext, name: string, ifMatch?: string): Promise<SecretMeta> {
  const tid = ctx.principal.tenantId;
  const item = await readHead(tid, name);
  checkIfMatch(ifMatch, item);
  const meta = toMeta(item!);
  const versions = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.tenant(tid).pk, ':p': keys.secretVersionPrefix(tid, meta.id).skPrefix },
      ProjectionExpression: 'pk, sk',
      ConsistentRead: true,
    }),
  );
  const items: TxItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: keys.secret(tid, name),
        ConditionExpression: 'id = :id AND version = :v',
        ExpressionAttributeValues: { ':id': meta.id, ':v': meta.version },
      },
    },
    ...(versions.Items ?? []).map((v): TxItem => ({ Delete: { TableName: tableName(), Key: { pk: v.pk, sk: v.sk } } })),
    counterAdd(tid, 'secrets', -1),
  ];
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
