import { z } from 'zod';

/** A container's name: unique in its account, usable as the `{container}` of /api/v1/s/{container}/{key}. */
export const ContainerName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

const Description = z.string().max(1024);
const Tags = z
  .array(z.string().min(1).max(64).regex(/^[\p{L}\p{N} _.:/=+@-]+$/u, 'printable tag characters only'))
  .max(50)
  .transform((t) => [...new Set(t)]);

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

export const ListContainersQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  cursor: z.string().min(1).max(2048).optional(),
});
export type ListContainersQuery = z.infer<typeof ListContainersQuery>;
