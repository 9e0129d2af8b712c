import type { CallContext } from '../../lib/auth/principal.js';
import { requireScopes } from '../../lib/auth/scopes.js';
import { defineHandler, ok } from '../../lib/http/index.js';
import { notFound } from '../../lib/core/errors.js';
import { resourceType, secretReadScopes } from '../../lib/catalog.js';
import { readHead } from '../../lib/sharing/heads.js';
import { resourceView } from '../../lib/sharing/views.js';
import { findMember } from '../../lib/store/membership.js';
import { etagOf, openSecret, readVersion } from '../../lib/resources/store.js';
import { containerByRef } from '../../lib/containers/service.js';
import { LookupAnswer, LookupParams, LookupVersionAnswer, LookupVersionParams } from '../../lib/lookup/schemas.js';

/**
 * GET /api/v1/s/{container}/{key}[/{version}]: a resource found by its key (its name) inside
 * a container (by id or name), whatever its type. The scope check is the handler's, against
 * the type the key resolves to: that type's read scope, and for a version other than the
 * current one also `history:read` (an older version is history).
 */
async function resolve(ctx: CallContext, containerRef: string, key: string) {
  const tid = ctx.principal.tenantId;
  const container = await containerByRef(tid, containerRef);
  if (!container) throw notFound('container');
  const member = await findMember(tid, container.id, key);
  const rt = member && resourceType(member.type);
  if (!member || !rt) throw notFound('key');
  requireScopes(ctx.principal, secretReadScopes(rt));
  const head = await readHead(tid, member.type, member.id);
  if (!head) throw notFound('key');
  return { tid, container, head };
}

export async function lookup(ctx: CallContext, containerRef: string, key: string) {
  const { tid, container, head } = await resolve(ctx, containerRef, key);
  const data = await openSecret<unknown>(tid, head.record, head.sealed);
  return {
    container: { id: container.id, name: container.name },
    key,
    resource: resourceView(head.record),
    data: data ?? null,
    etag: etagOf(head.record),
  };
}

async function lookupVersion(ctx: CallContext, containerRef: string, key: string, version: number) {
  const { tid, container, head } = await resolve(ctx, containerRef, key);
  if (version !== head.record.version) requireScopes(ctx.principal, ['history:read']);
  const { type, id } = head.record;
  const stored = await readVersion(tid, type, id, version);
  if (!stored) throw notFound('version');
  const data = await openSecret<unknown>(tid, { type, id, version }, stored.sealed);
  return {
    container: { id: container.id, name: container.name },
    key,
    resource: {
      type,
      id,
      name: stored.record.name,
      version,
      meta: stored.record.meta,
      created_at: stored.record.created_at,
      created_by: stored.record.created_by,
    },
    current_version: head.record.version,
    data: data ?? null,
  };
}

export const get = defineHandler({
  summary: 'Read a resource by its key in a container',
  description:
    'The resource named `key` in the container (by id or name), whatever its type, with its value and ETag. Needs the read scope of the type the key resolves to.',
  responses: { 200: LookupAnswer },
  params: LookupParams,
  async handler({ ctx, params }) {
    const { etag, ...found } = await lookup(ctx, params.container, params.key);
    return ok(found, { ETag: etag });
  },
});

export const getVersion = defineHandler({
  summary: 'Read a version of a resource by its key in a container',
  description: 'One version of the resource named `key`; a version other than the current one also needs `history:read`.',
  responses: { 200: LookupVersionAnswer },
  params: LookupVersionParams,
  async handler({ ctx, params }) {
    return ok(await lookupVersion(ctx, params.container, params.key, params.version));
  },
});
