import { CreateMetadataBody, MetadataAnswer, MetadataDeleted, MetadataPage, UpdateMetadataBody } from '../../lib/federation/saml-schemas.js';
import { createMetadata, deleteMetadata, getMetadata, getMetadataXml, listMetadata, updateMetadata } from '../../lib/federation/saml.js';
import { created, defineHandler, download, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** SAML metadata (lib/federation/saml.ts): parsed fields as JSON, the XML as given at .../xml. */
export const list = defineHandler({
  summary: 'List SAML metadata',
  responses: { 200: MetadataPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listMetadata(ctx, query);
    return ok(listPage('metadata', page.metadata, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Store SAML metadata',
  description:
    'One md:EntityDescriptor (XML, or base64 of it), kept byte for byte with what was parsed from it: entityID (unique in the account), roles, endpoints, certificates. DTDs and entity declarations are refused.',
  responses: { 201: MetadataAnswer },
  errors: ['invalid_xml', 'already_exists'],
  body: CreateMetadataBody,
  async handler({ ctx, body }) {
    return created({ metadata: await createMetadata(ctx, body) });
  },
});

export const get = defineHandler({
  summary: 'Get SAML metadata',
  responses: { 200: MetadataAnswer },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ metadata: await getMetadata(ctx, params.id) });
  },
});

export const xml = defineHandler({
  summary: 'Get SAML metadata as XML',
  description: 'The metadata XML exactly as stored (application/samlmetadata+xml).',
  responses: { 200: null },
  media: { 200: ['application/samlmetadata+xml'] },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return download(await getMetadataXml(ctx, params.id), 'application/samlmetadata+xml');
  },
});

export const update = defineHandler({
  summary: 'Update SAML metadata',
  responses: { 200: MetadataAnswer },
  errors: ['not_found', 'invalid_xml', 'already_exists'],
  params: IdParams,
  body: UpdateMetadataBody,
  async handler({ ctx, params, body }) {
    return ok({ metadata: await updateMetadata(ctx, params.id, body) });
  },
});

export const remove = defineHandler({
  summary: 'Delete SAML metadata',
  responses: { 200: MetadataDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const m = await deleteMetadata(ctx, params.id);
    return ok({ deleted: true, metadata: { id: m.id, entity_id: m.entity_id } });
  },
});
