import * as z from 'zod/v4';
import { ListPage, Timestamp } from '../schemas.js';
import type { CredentialType } from './model.js';

/*
 * Responses of the typed collections (lib/http/define-handler.ts `HandlerDoc`), derived once
 * for every type from its catalogue entry (lib/catalog.ts: type, list key, hidden, withheld
 * and expiring fields) joined with its type spec: what model.ts `render`/`renderResource`
 * send. The type's own fields are all optional in the answer (lists carry no secret field,
 * a replace PUT clears public fields left out, withheld fields never leave through these
 * routes); derived fields a type's `prepare` stores beside them pass (the objects are loose).
 */

/** The fields every typed resource shows (model.ts `render`). */
export const RESOURCE_BASE = {
  id: z.uuid().describe('The resource’s id.'),
  name: z.string().describe('The resource’s name, unique in its collection.'),
  description: z.string().describe('Free text; empty when none.'),
  tags: z.array(z.string()),
  secret_fields: z.array(z.string()).describe('The secret fields that are set (their values only on the single GET, create and update).'),
  container_id: z.uuid().nullable().describe('The container holding the resource; null when none.'),
  version: z.int().min(1).describe('Increases by one on every update; the ETag is `"<id>.<version>"`.'),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable(),
  updated_by: z.string().nullable(),
};

/**
 * A request field's schema as the answer shows its stored value: optional everywhere (lists,
 * cleared and withheld fields), and nested objects loose, since a type's `prepare` stores
 * derived facts beside what the caller sent (a keystore entry's subject and dates, a key's
 * algorithm); unions match by any option. Scalars keep their types, formats and enums.
 */
function shown(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional) return shown(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodDefault) return shown(schema.unwrap() as z.ZodType);
  if (schema instanceof z.ZodNullable) return shown(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodObject)
    return z.looseObject(Object.fromEntries(Object.entries(schema.shape).map(([k, v]) => [k, shown(v as z.ZodType).optional()])));
  if (schema instanceof z.ZodArray) return z.array(shown(schema.element as z.ZodType));
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map(shown));
  return schema;
}

/** The type's own fields as the answer shows them: all optional, hidden ones never. */
function fieldsShape(def: CredentialType, option: z.ZodObject): Record<string, z.ZodType> {
  const shownFields = Object.entries(option.shape).filter(([k]) => !(def.hidden ?? []).includes(k));
  return Object.fromEntries([
    ...shownFields.map(([k, v]) => [k, shown(v as z.ZodType).optional()]),
    ...Object.entries(def.shown ?? {}).map(([k, v]) => [k, v.optional()]),
  ]);
}

/** One resource of the type as the API shows it. */
function resourceSchema(def: CredentialType): z.ZodType {
  const base = {
    ...RESOURCE_BASE,
    type: z.literal(def.type),
    ...(def.expires ? { expired: z.boolean().describe(`Whether \`${def.expires}\` is past.`) } : {}),
  };
  const object = (fields: Record<string, z.ZodType>) => z.looseObject({ ...fields, ...base }).describe(`A ${def.label}.`);
  if (def.fields instanceof z.ZodObject) return object(fieldsShape(def, def.fields));
  const { key } = def.fields;
  return z.union(def.fields.options.map((o) => object({ ...fieldsShape(def, o), [key]: shown(o.shape[key] as z.ZodType) })));
}

/** The responses of a typed collection's five CRUD routes (lib/credentials/handlers.ts). */
export function collectionResponses(def: CredentialType) {
  const one = resourceSchema(def);
  return {
    /** One resource, for the module's own routes. */
    resource: one,
    /** `{ "<type>": {...} }`: create, get and update. */
    one: z.object({ [def.type]: one }),
    /** `{ "<list key>": [...], total, limit, offset, next_cursor }`: metadata only. */
    list: ListPage(def.listKey, one, { paged: true, describe: `The ${def.label} resources of this page, without their secret fields.` }),
    deleted: z.object({ deleted: z.literal(true), [def.type]: z.strictObject({ id: z.uuid(), name: z.string() }) }),
  };
}
