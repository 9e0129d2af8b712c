import * as z from 'zod/v4';
import { atLeastOneField, Description, ListPage, Tags, Timestamp } from '../schemas.js';
import { PageQuery } from '../schemas.js';

/** A container's name: unique in its account, usable as the `{container}` of /api/v1/s/{container}/{key}. */
const ContainerName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

export const CreateContainerBody = z.strictObject({
  name: ContainerName,
  description: Description.optional(),
  tags: Tags.optional(),
});
export type CreateContainerBody = z.infer<typeof CreateContainerBody>;

export const UpdateContainerBody = atLeastOneField(
  z.strictObject({
    name: ContainerName.optional(),
    description: Description.optional(),
    tags: Tags.optional(),
  }),
);
export type UpdateContainerBody = z.infer<typeof UpdateContainerBody>;

export const ContainerParams = z.strictObject({ id: z.uuid() });

export const ListContainersQuery = PageQuery;
export type ListContainersQuery = z.infer<typeof ListContainersQuery>;

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the container routes answer. */

/** A container as lists show it (lib/containers/service.ts `containerView`). */
export const Container = z.strictObject({
  id: z.uuid(),
  name: ContainerName,
  description: z.string().describe('Free text; empty when none.'),
  tags: z.array(z.string()),
  version: z.int().min(1).describe('Increases by one on every update; the ETag is `"<id>.<version>"`.'),
  member_count: z.int().min(0).describe('How many resources the container holds.'),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
});

/** A container with its members (their key, type and id; never values). */
const ContainerWithMembers = Container.extend({
  members: z
    .array(
      z.strictObject({
        key: z.string().describe('The member’s name, its key in /api/v1/s/{container}/{key}.'),
        type: z.string().describe('The member’s resource type (lib/catalog.ts).'),
        id: z.uuid(),
      }),
    )
    .describe('Up to 1000 members.'),
});

export const ContainerAnswer = z.strictObject({ container: Container });
export const ContainerDetail = z.strictObject({ container: ContainerWithMembers });
export const ContainerList = ListPage('containers', Container, { paged: true });
export const ContainerDeleted = z.strictObject({ deleted: z.literal(true), container: z.strictObject({ id: z.uuid(), name: z.string() }) });
