import * as z from 'zod/v4';
import { Description, Tags } from '../schemas.js';
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

export const UpdateContainerBody = z
  .strictObject({
    name: ContainerName.optional(),
    description: Description.optional(),
    tags: Tags.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'at least one field to update is required' });
export type UpdateContainerBody = z.infer<typeof UpdateContainerBody>;

export const ContainerParams = z.strictObject({ id: z.uuid() });

export const ListContainersQuery = PageQuery;
export type ListContainersQuery = z.infer<typeof ListContainersQuery>;
