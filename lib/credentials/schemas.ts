import * as z from 'zod/v4';
import { ListPage, Timestamp } from '../schemas.js';
import type { CredentialType } from './model.js';

/*
 * Responses of the typed collections (lib/http/define-handler.ts `HandlerDoc`), derived once
 * for every type from its catalogue entry (lib/catalog.ts: type, list key, hidden, withheld
 * and expiring fields) joined with its type spec: what model.ts `render`/`renderResource`
 * send. The type's own fields are all optional in the answer (lists carry no secret field,
 * a replace PUT clears public fields left out, withheld fields never leave through these
 * routes); derived fields a type's `prepare` stores beside them pass (the object is not strict).
 */

/** The fields every typed resource shows (model.ts `render`). */
const RESOURCE_BASE = {
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

/** The type's own fields as the answer shows them: all optional, hidden ones never. */
function fieldsShape(def: CredentialType, option: z.ZodObject): Record<string, z.ZodType> {
  const shown = Object.entries(option.shape).filter(([k]) => !(def.hidden ?? []).includes(k));
  return Object.fromEntries(shown.map(([k, v]) => [k, (v as z.ZodType).optional()]));
}

/** One resource of the type as the API shows it. */
function resourceSchema(def: CredentialType): z.ZodType {
  const base = {
    ...RESOURCE_BASE,
    type: z.literal(def.type),
    ...(def.expires ? { expired: z.boolean().describe(`Whether \`${def.expires}\` is past.`) } : {}),
  };
  const object = (fields: Record<string, z.ZodType>) => z.object({ ...fields, ...base }).describe(`A ${def.label}.`);
  if (def.fields instanceof z.ZodObject) return object(fieldsShape(def, def.fields));
  const { key } = def.fields;
  return z.union(def.fields.options.map((o) => object({ ...fieldsShape(def, o), [key]: o.shape[key] as z.ZodType })));
}

/** The responses of a typed collection's five CRUD routes (lib/credentials/handlers.ts). */
export function collectionResponses(def: CredentialType) {
  const one = resourceSchema(def);
  return {
    /** `{ "<type>": {...} }`: create, get and update. */
    one: z.object({ [def.type]: one }),
    /** `{ "<list key>": [...], total, limit, offset, next_cursor }`: metadata only. */
    list: ListPage(def.listKey, one, { paged: true, describe: `The ${def.label} resources of this page, without their secret fields.` }),
    deleted: z.object({ deleted: z.literal(true), [def.type]: z.strictObject({ id: z.uuid(), name: z.string() }) }),
  };
}
