import type { CallContext } from '../auth/principal.js';
import { hasScope, requireScopes } from '../auth/scopes.js';
import { commit } from '../audit/audit.js';
import { conflict, notFound } from '../core/errors.js';
import { secretReadScopes, type CatalogEntry } from '../catalog.js';
import { readHead, typeOrNotFound, type Head } from './heads.js';
import { tableName } from '../store/client.js';
import { DEFAULT_KEEP_VERSIONS, listVersions, openSecret, readVersion, versionKeys } from '../resources/store.js';
import { TxConditionFailed, type TxItem } from '../store/tx.js';
import { MAX_KEEP_VERSIONS } from './schemas.js';

/**
 * History of any stored resource type (lib/catalog.ts), through the shared version
 * format of lib/resources/store.ts. History is the owner's: a share or a temporary grant
 * never opens it. Listing shows metadata only; one version's value is shown only to a
 * caller holding both `history:read` (the route) and the type's read scope.
 */
async function ownHead(ctx: CallContext, type: string, id: string): Promise<{ rt: CatalogEntry; head: Head }> {
  const rt = typeOrNotFound(type);
  const head = await readHead(ctx.principal.tenantId, type, id);
  if (!head) throw notFound(type.replace(/_/g, ' '));
  return { rt, head };
}

const keepOf = (head: Head) => head.record.keep_versions ?? DEFAULT_KEEP_VERSIONS;

export async function listHistory(ctx: CallContext, type: string, id: string) {
  const { head } = await ownHead(ctx, type, id);
  const versions = await listVersions(ctx.principal.tenantId, type, id);
  return {
    type,
    id,
    name: head.record.name,
    current_version: head.record.version,
    keep_versions: keepOf(head),
    versions: versions.map((v) => ({
      version: v.version,
      name: v.name,
      meta: v.meta,
      created_at: v.created_at,
      created_by: v.created_by,
      has_value: v.has_secret,
      current: v.version === head.record.version,
    })),
    total: versions.length,
  };
}

export async function getHistoryVersion(ctx: CallContext, type: string, id: string, version: number) {
  const { rt } = await ownHead(ctx, type, id);
  const tid = ctx.principal.tenantId;
  const stored = await readVersion(tid, type, id, version);
  if (!stored) throw notFound('version');
  const needed = secretReadScopes(rt);
  const mayRead = needed.every((s) => hasScope(ctx.principal.scopes, s));
  const base = {
    type,
    id,
    version,
    name: stored.record.name,
    meta: stored.record.meta,
    created_at: stored.record.created_at,
    created_by: stored.record.created_by,
    has_value: stored.record.has_secret,
  };
  if (!stored.record.has_secret) return { ...base, value_redacted: false };
  if (!mayRead) return { ...base, value_redacted: true, missing_scopes: needed.filter((s) => !hasScope(ctx.principal.scopes, s)) };
  // opened with the version's own scope: a ciphertext copied from another item does not open
  const data = await openSecret<unknown>(tid, { type, id, version }, stored.sealed);
  return { ...base, value_redacted: false, data };
}

export async function getHistorySettings(ctx: CallContext, type: string, id: string) {
  const { head } = await ownHead(ctx, type, id);
  const versions = await versionKeys(ctx.principal.tenantId, type, id);
  return {
    type,
    id,
    keep_versions: keepOf(head),
    default_keep_versions: DEFAULT_KEEP_VERSIONS,
    max_keep_versions: MAX_KEEP_VERSIONS,
    current_version: head.record.version,
    stored_versions: versions.length,
  };
}

const versionOfKey = (sk: string) => Number(sk.slice(sk.lastIndexOf('#') + 1));

/**
 * Sets how many versions a resource keeps. Not a new version of the resource (its ETag does
 * not change): one conditional UpdateItem of the head's `keep_versions`, the deletes of the
 * versions that fall outside the new window, the audit entry and the event, in one
 * transaction. A write that lands in between makes the head's version differ: retried.
 */
export async function putHistorySettings(ctx: CallContext, type: string, id: string, keep: number) {
  const tid = ctx.principal.tenantId;
  for (let attempt = 0; attempt < 3; attempt++) {
    const { rt, head } = await ownHead(ctx, type, id);
    // shrinking the window deletes history: the type's write scope as well as sharing:manage
    requireScopes(ctx.principal, rt.scopes.write);
    const previous = keepOf(head);
    const oldestKept = head.record.version - keep + 1;
    const prune = (await versionKeys(tid, type, id)).filter((k) => versionOfKey(k.sk!) < oldestKept);
    const items: TxItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: head.key,
          UpdateExpression: 'SET keep_versions = :k',
          ConditionExpression: 'id = :id AND version = :v',
          ExpressionAttributeValues: { ':k': keep, ':id': id, ':v': head.record.version },
        },
      },
      ...prune.map((k): TxItem => ({ Delete: { TableName: tableName(), Key: { pk: k.pk!, sk: k.sk! } } })),
    ];
    const pruned = prune.map((k) => versionOfKey(k.sk!)).sort((a, b) => a - b);
    try {
      await commit(ctx, tid, items, {
        action: 'history.settings_update',
        resource: { type, id, name: head.record.name },
        detail: { keep_versions: keep, previous_keep_versions: previous, pruned_versions: pruned },
        event: {
          type: 'history.settings_changed',
          data: { type, id, keep_versions: keep, previous_keep_versions: previous, pruned_versions: pruned },
        },
      });
    } catch (error) {
      if (error instanceof TxConditionFailed && (error.index === 0 || error.conflict)) continue;
      throw error;
    }
    return { type, id, keep_versions: keep, previous_keep_versions: previous, pruned_versions: pruned, current_version: head.record.version };
  }
  throw conflict(`the ${type.replace(/_/g, ' ')} is being written concurrently; retry`, 'conflict');
}
