import { CreateMetadataBody, UpdateMetadataBody } from '../../lib/federation/saml-schemas.js';
import { createMetadata, deleteMetadata, getMetadata, getMetadataXml, listMetadata, updateMetadata } from '../../lib/federation/saml.js';
import { created, defineHandler, download, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** SAML metadata (lib/federation/saml.ts): parsed fields as JSON, the XML as given at .../xml. */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listMetadata(ctx, query);
    return ok(listPage('metadata', page.metadata, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateMetadataBody,
  async handler({ ctx, body }) {
    return created({ metadata: await createMetadata(ctx, body) });
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ metadata: await getMetadata(ctx, params.id) });
  },
});

export const xml = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return download(await getMetadataXml(ctx, params.id), 'application/samlmetadata+xml');
  },
});

export const update = defineHandler({
  params: IdParams,
  body: UpdateMetadataBody,
  async handler({ ctx, params, body }) {
    return ok({ metadata: await updateMetadata(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const m = await deleteMetadata(ctx, params.id);
    return ok({ deleted: true, metadata: { id: m.id, entity_id: m.entity_id } });
  },
});
