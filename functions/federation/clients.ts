import { createClient, deleteClient, getClient, listClients, rotateClientSecret, updateClient } from '../../lib/federation/clients.js';
import {
  CreateClientBody,
  OidcClientAnswer,
  OidcClientCreated,
  OidcClientDeleted,
  OidcClientPage,
  OidcClientRotated,
  OidcClientUpdated,
  RotateSecretBody,
  UpdateClientBody,
} from '../../lib/federation/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** OIDC clients (lib/federation/clients.ts): a client secret appears only in the answer that made it. */
export const list = defineHandler({
  summary: 'List OIDC clients',
  responses: { 200: OidcClientPage },
  errors: ['bad_request'],
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listClients(ctx, query);
    return ok(listPage('clients', page.clients, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Register an OIDC client',
  description:
    'A client authenticating with a secret gets one (`ocs_…`) in this response only; only its hash is stored. A private_key_jwt client names a JWK set of the account.',
  responses: { 201: OidcClientCreated },
  errors: ['bad_request'],
  body: CreateClientBody,
  async handler({ ctx, body }) {
    return created(await createClient(ctx, body));
  },
});

export const get = defineHandler({
  summary: 'Get an OIDC client',
  responses: { 200: OidcClientAnswer },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ client: await getClient(ctx, params.id) });
  },
});

export const update = defineHandler({
  summary: 'Update an OIDC client',
  description: 'Switching to a secret-based authentication method issues a secret, in this response only.',
  responses: { 200: OidcClientUpdated },
  errors: ['not_found', 'bad_request'],
  params: IdParams,
  body: UpdateClientBody,
  async handler({ ctx, params, body }) {
    const out = await updateClient(ctx, params.id, body);
    return ok(out.client_secret ? out : { client: out.client });
  },
});

export const remove = defineHandler({
  summary: 'Delete an OIDC client',
  responses: { 200: OidcClientDeleted },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const c = await deleteClient(ctx, params.id);
    return ok({ deleted: true, client: { id: c.id, name: c.name } });
  },
});

export const rotateSecret = defineHandler({
  summary: 'Rotate an OIDC client’s secret',
  description: 'The new secret is in this response only; the previous one stays valid for `grace_seconds`, so deployed clients can switch over.',
  responses: { 200: OidcClientRotated },
  errors: ['not_found', 'bad_request'],
  params: IdParams,
  body: RotateSecretBody,
  async handler({ ctx, params, body }) {
    return ok(await rotateClientSecret(ctx, params.id, body));
  },
});
