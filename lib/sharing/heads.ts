import { notFound } from '../core/errors.js';
import { resourceType, type CatalogEntry } from '../catalog.js';
import { readResource, type StoredHead } from '../resources/store.js';

/**
 * Any resource's head by type and id, for the cross-type routes (`/api/v1/{type}/{id}/...`,
 * shares, temporary access, lookup): the store's read by id (lib/resources/store.ts), the
 * same for every type of the catalogue, the name-indexed generic secret included.
 */
export type Head = StoredHead<Record<string, unknown>>;

/** The registry entry of a `{type}` path segment; an unknown type is a 404. */
export function typeOrNotFound(type: string): CatalogEntry {
  const rt = resourceType(type);
  if (!rt) throw notFound('resource type');
  return rt;
}

/** A resource's head in a tenant, or undefined when it does not exist there. */
export const readHead = (tenantId: string, type: string, id: string): Promise<Head | undefined> => readResource(tenantId, type, id);
