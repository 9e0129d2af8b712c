import * as z from 'zod/v4';
import { CATALOG } from '../catalog.js';

const Type = z.enum(Object.keys(CATALOG) as [string, ...string[]], {
  message: 'type must be a resource type of the catalogue (e.g. secret, wifi_credential)',
});

export const TraceBody = z.strictObject({
  /** Only reads are traced: a described read of one of the caller's own resources. */
  operation: z.literal('read', { message: 'operation must be "read"' }).default('read'),
  type: Type,
  id: z.uuid({ message: 'id must be the resource id (a UUID)' }),
  /** Also open the sealed part (key provider calls); the value is never returned. */
  open: z.boolean().default(true),
});

export const ConfigureBody = z.strictObject({ secrets: z.number().int().min(1).max(50).default(3) }).default({ secrets: 3 });

export const TemplateParams = z.strictObject({
  type: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z_]+$/, 'type must be a catalogue type name (lower-case letters and _)'),
});
