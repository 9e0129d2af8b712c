import { created, defineHandler, ok } from '../../lib/http/index.js';
import { listPage } from '../../lib/schemas.js';
import {
  ContainerAnswer,
  ContainerDeleted,
  ContainerDetail,
  ContainerList,
  ContainerParams,
  CreateContainerBody,
  ListContainersQuery,
  UpdateContainerBody,
} from '../../lib/containers/schemas.js';
import { createContainer, deleteContainer, etagOf, getContainer, listContainers, updateContainer } from '../../lib/containers/service.js';

export const list = defineHandler({
  summary: 'List containers',
  description: 'The account’s containers with their member counts.',
  responses: { 200: ContainerList },
  errors: ['bad_request'],
  query: ListContainersQuery,
  async handler({ ctx, query }) {
    const page = await listContainers(ctx, query);
    return ok(listPage('containers', page.containers, page.nextCursor, query));
  },
});

export const create = defineHandler({
  summary: 'Create a container',
  description: 'A named group of resources; its name is unique in the account and addresses it in /api/v1/s/{container}/{key}.',
  responses: { 201: ContainerAnswer },
  errors: ['already_exists'],
  body: CreateContainerBody,
  async handler({ ctx, body }) {
    const container = await createContainer(ctx, body);
    return created({ container }, { ETag: etagOf(container) });
  },
});

/** The container with its member count and members (key, type, id; never values). */
export const get = defineHandler({
  summary: 'Read a container',
  description: 'The container with its members (key, type and id; never values) and its ETag.',
  responses: { 200: ContainerDetail },
  params: ContainerParams,
  async handler({ ctx, params }) {
    const { record, container } = await getContainer(ctx, params.id);
    return ok({ container }, { ETag: etagOf(record) });
  },
});

export const update = defineHandler({
  summary: 'Update a container',
  description:
    'Renames or re-describes the container. `If-Match` is required: the ETag of a GET (a newer version: 409 `stale_etag`), or `*`; without it 428 `precondition_required`.',
  responses: { 200: ContainerAnswer },
  errors: ['already_exists', 'precondition_required'],
  ifMatch: 'required',
  params: ContainerParams,
  body: UpdateContainerBody,
  async handler({ ctx, params, body, headers }) {
    const { record, container } = await updateContainer(ctx, params.id, body, headers['if-match']);
    return ok({ container }, { ETag: etagOf(record) });
  },
});

export const remove = defineHandler({
  summary: 'Delete a container',
  description: 'Only an empty container can be deleted (409 `container_not_empty`).',
  responses: { 200: ContainerDeleted },
  errors: ['container_not_empty'],
  params: ContainerParams,
  async handler({ ctx, params, headers }) {
    const container = await deleteContainer(ctx, params.id, headers['if-match']);
    return ok({ deleted: true, container: { id: container.id, name: container.name } });
  },
});
