import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import { ContainerParams, CreateContainerBody, ListContainersQuery, UpdateContainerBody } from '../../lib/containers/schemas.js';
import { createContainer, deleteContainer, etagOf, getContainer, listContainers, updateContainer } from '../../lib/containers/service.js';

export const list = defineHandler({
  query: ListContainersQuery,
  async handler({ ctx, query }) {
    const page = await listContainers(ctx, query);
    return ok(listPage('containers', page.containers, page.nextCursor, query));
  },
});

export const create = defineHandler({
  body: CreateContainerBody,
  async handler({ ctx, body }) {
    const container = await createContainer(ctx, body);
    return created({ container }, { ETag: etagOf(container) });
  },
});

/** The container with its member count and members (key, type, id; never values). */
export const get = defineHandler({
  params: ContainerParams,
  async handler({ ctx, params }) {
    const { record, container } = await getContainer(ctx, params.id);
    return ok({ container }, { ETag: etagOf(record) });
  },
});

export const update = defineHandler({
  params: ContainerParams,
  body: UpdateContainerBody,
  async handler({ ctx, params, body, headers }) {
    const { record, container } = await updateContainer(ctx, params.id, body, headers['if-match']);
    return ok({ container }, { ETag: etagOf(record) });
  },
});

export const remove = defineHandler({
  params: ContainerParams,
  async handler({ ctx, params, headers }) {
    const container = await deleteContainer(ctx, params.id, headers['if-match']);
    return ok({ deleted: true, container: { id: container.id, name: container.name } });
  },
});
