import type { ResourceRecord } from '../resources/store.js';

/** The public view of any resource's head (metadata; never the sealed value). */
export const resourceView = (r: ResourceRecord) => ({
  type: r.type,
  id: r.id,
  name: r.name,
  version: r.version,
  meta: r.meta,
  container_id: r.container_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
  created_by: r.created_by,
  updated_by: r.updated_by,
});
