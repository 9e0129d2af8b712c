import { createClient, deleteClient, getClient, listClients, rotateClientSecret, updateClient } from '../../lib/federation/clients.js';
import { CreateClientBody, RotateSecretBody, UpdateClientBody } from '../../lib/federation/schemas.js';
import { created, defineHandler, ok } from '../../lib/http/index.js';
import { IdParams, listPage, PageQuery } from '../../lib/schemas.js';

/** OIDC clients (lib/federation/clients.ts): a client secret appears only in the answer that made it. */
export const list = defineHandler({
  query: PageQuery,
  async handler({ ctx, query }) {
    const page = await listClients(ctx, query);
    return ok(listPage('clients', page.clients, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateClientBody,
  async handler({ ctx, body }) {
    return created(await createClient(ctx, body));
  },
});

export const get = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    return ok({ client: await getClient(ctx, params.id) });
  },
});

export const update = defineHandler({
  params: IdParams,
  body: UpdateClientBody,
  async handler({ ctx, params, body }) {
    const out = await updateClient(ctx, params.id, body);
    return ok(out.client_secret ? out : { client: out.client });
  },
});

export const remove = defineHandler({
  params: IdParams,
  async handler({ ctx, params }) {
    const c = await deleteClient(ctx, params.id);
    return ok({ deleted: true, client: { id: c.id, name: c.name } });
  },
});

export const rotateSecret = defineHandler({
  params: IdParams,
  body: RotateSecretBody,
  async handler({ ctx, params, body }) {
    return ok(await rotateClientSecret(ctx, params.id, body));
  },
});
