import * as z from 'zod/v4';
import { atLeastOneField, Description, Tags } from '../schemas.js';
import type { CallContext } from '../auth/principal.js';
import type { ErrorCode } from '../http/error-codes.js';
import { validationFailed, type FieldIssue } from '../core/errors.js';
import { resourceType, type CatalogEntry } from '../catalog.js';
import type { ResourceRecord } from '../resources/store.js';
import type { TxItem } from '../store/tx.js';

/**
 * The model every typed resource is described with: its own fields as a zod schema (one
 * object, or variants on a discriminator such as `kind` or `provider`), which of them are
 * secret, how PUT treats them, and optional hooks. lib/credentials/types/ holds
 * one TypeSpec per type; the CRUD factory (handlers.ts over service.ts) serves each in its own module.
 *
 * Stored form (lib/resources/store.ts): `meta` = description, tags and the public fields;
 * the sealed secret part = the secret fields. Lists show metadata only; the single GET
 * opens the secret part.
 */
export type Fields = Record<string, unknown>;

/** A type whose fields depend on a discriminator (e.g. service-config `kind`). */
interface Variants {
  readonly key: string;
  readonly options: readonly z.ZodObject[];
  /** The discriminator's value when a create body leaves it out. */
  readonly default?: string;
}

type UpdateMode = 'replace' | 'merge';

export interface TypeSpec {
  /** Singular internal name (lib/catalog.ts): the `{type}` of cross-type routes. */
  readonly type: string;
  readonly summary: string;
  /** The type's own fields on create (name, description, tags, container_id are common). */
  readonly fields: z.ZodObject | Variants;
  /** Top-level field names stored sealed and returned only by the single GET. */
  readonly secret: readonly string[];
  /**
   * PUT semantics. `replace`: the body is the whole representation: public fields absent
   * from it are cleared, secret fields absent from it are kept (lists never show them, so a
   * client may rename without re-sending secrets). `merge`: absent fields are kept.
   */
  readonly update: UpdateMode;
  /** Explicit PUT fields (merge types that allow only some fields to change). */
  readonly updateFields?: z.ZodObject;
  /** Fields that never change after create: a PUT may repeat them unchanged, else 400. */
  readonly immutable?: readonly string[];
  /** One sentence on the type's PUT semantics (README, docs). */
  readonly updateSemantics: string;
  /** The field holding the type's expiry (ISO-8601): rendered with `expired`. */
  readonly expires?: string;
  /**
   * Validates across fields and derives stored fields (e.g. a public key from a private
   * key, a wallet address from its seed). Runs on create (current undefined) and on every
   * update with the merged fields. Throws badRequest/validationFailed.
   */
  readonly prepare?: (ctx: CallContext, fields: Fields, current: Fields | undefined) => Fields | Promise<Fields>;
  /**
   * Fields of which at least one is required (a log-in needs a password or a key): checked
   * before `prepare` on create and on every update with the merged fields, and carried by
   * the create body's description as `anyOf` of `required`.
   */
  readonly requiresOneOf?: readonly string[];
  /** Items deleted with the resource (state kept beside the head, e.g. an OTP counter). */
  readonly extraDeletes?: (tenantId: string, id: string) => TxItem[];
  /**
   * Who may open the secret part on GET /{id} when the route checks scopes in the handler
   * ("handler" in lib/routes.ts): the owner, a share recipient, or a holder of the read scope.
   */
  readonly ownerRead?: boolean;
  /**
   * Stored fields whose answer differs from what the request sends (derived by `prepare`),
   * as the answer shows them: lib/credentials/schemas.ts takes these over the request fields.
   */
  readonly shown?: Readonly<Record<string, z.ZodType>>;
  /** Error codes the type's create raises beyond every collection's (a key generated in a signing backend: the backend's). */
  readonly createErrors?: readonly ErrorCode[];
  /** Served by its own module instead of the generic collection handlers (api tokens). */
  readonly ownRoutes?: boolean;
}

/** A type's spec joined with its catalogue entry (lib/catalog.ts): path, scopes, hidden and withheld fields. */
export interface CredentialType extends TypeSpec, Omit<CatalogEntry, 'type'> {
  readonly createBody: z.ZodType<Fields>;
  readonly updateBody: z.ZodType<Fields>;
}

// ---- common fields -------------------------------------------------------------------

export const Name = z.string().trim().min(1).max(128);

const COMMON = { name: Name, description: Description.optional(), tags: Tags.optional(), container_id: z.uuid().nullable().optional() };
const COMMON_OPTIONAL = { ...COMMON, name: Name.optional() };
export const COMMON_KEYS = Object.keys(COMMON);

const optionsOf = (fields: z.ZodObject | Variants): readonly z.ZodObject[] => (fields instanceof z.ZodObject ? [fields] : fields.options);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function union(fields: z.ZodObject | Variants, options: z.ZodObject[]): z.ZodType<Fields> {
  if (fields instanceof z.ZodObject) return options[0] as z.ZodType<Fields>;
  const u = z.discriminatedUnion(fields.key, options as [z.ZodObject, ...z.ZodObject[]]) as unknown as z.ZodType<Fields>;
  const { key, default: dflt } = fields;
  if (dflt === undefined) return u;
  // the description says the same: that branch does not require the key (scripts/openapi.ts defaultDiscriminator)
  return z
    .preprocess((v) => (isObject(v) && v[key] === undefined ? { ...v, [key]: dflt } : v), u)
    .meta({ 'x-default-discriminator': { property: key, value: dflt } }) as unknown as z.ZodType<Fields>;
}

const nonEmpty = (schema: z.ZodObject) => atLeastOneField(schema) as unknown as z.ZodType<Fields>;

/** The POST body: common fields plus the type's fields (and the fields of which one is required, as the description's `anyOf`). */
const createBodyOf = (spec: TypeSpec) => {
  const body = union(
    spec.fields,
    optionsOf(spec.fields).map((o) => o.extend(COMMON)),
  );
  const oneOf = spec.requiresOneOf;
  if (!oneOf) return body;
  // inside allOf, as lib/schemas.ts crossFieldRule adds a rule: the typed client keeps the body's type
  const before = (body.meta() ?? {}) as { allOf?: unknown[] };
  return body.meta({ ...before, allOf: [...(before.allOf ?? []), { anyOf: oneOf.map((k) => ({ required: [k] })) }] }) as z.ZodType<Fields>;
};

/** The PUT body, from the type's update mode (see TypeSpec.update). */
function updateBodyOf(spec: TypeSpec): z.ZodType<Fields> {
  if (spec.updateFields) return nonEmpty(spec.updateFields.partial().extend(COMMON_OPTIONAL));
  if (spec.update === 'merge') {
    if (!(spec.fields instanceof z.ZodObject)) throw new Error(`${spec.type}: merge updates need an object schema`);
    return nonEmpty(spec.fields.partial().extend(COMMON_OPTIONAL));
  }
  const keepable = (o: z.ZodObject) =>
    Object.fromEntries(spec.secret.filter((k) => k in o.shape).map((k) => [k, true as const])) as Record<string, true> & Record<number, never>;
  return union(
    spec.fields,
    optionsOf(spec.fields).map((o) => o.partial(keepable(o)).extend(COMMON)),
  );
}

export function describeType(spec: TypeSpec): CredentialType {
  const entry = resourceType(spec.type);
  if (!entry) throw new Error(`${spec.type} is not in lib/catalog.ts`);
  const { requiresOneOf: oneOf, prepare: own } = spec;
  const prepare: TypeSpec['prepare'] = oneOf
    ? (ctx, fields, current) => {
        requireOneOf(fields, oneOf);
        return own ? own(ctx, fields, current) : fields;
      }
    : own;
  return { ...entry, ...spec, prepare, createBody: createBodyOf(spec), updateBody: updateBodyOf(spec) };
}

// ---- stored form and rendering --------------------------------------------------------

export interface StoredMeta {
  readonly description?: string;
  readonly tags?: string[];
  readonly [field: string]: unknown;
}

/** Splits the type's fields into public metadata and the secret part. */
export function split(def: TypeSpec, fields: Fields, common: { description?: string; tags?: string[] }): { meta: StoredMeta; secret: Fields } {
  const meta: Record<string, unknown> = { description: common.description ?? '', tags: common.tags ?? [] };
  const secret: Fields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    if (def.secret.includes(k)) secret[k] = v;
    else meta[k] = v;
  }
  meta.secret_fields = Object.keys(secret);
  return { meta, secret };
}

/** The type's fields of a stored resource (public from meta, secret from the opened part). */
export function fieldsOf(meta: StoredMeta, secret: Fields | undefined): Fields {
  const { description: _d, tags: _t, secret_fields: _s, ...pub } = meta;
  return { ...pub, ...secret };
}

type RenderableRecord = Pick<ResourceRecord<StoredMeta>, 'id' | 'name' | 'version' | 'meta'> & Partial<ResourceRecord<StoredMeta>>;

/**
 * A resource as the API shows it. Without `secret` (lists, metadata views) no secret field
 * appears; `secret_fields` names the secret fields that are set, never their values.
 */
export function render(
  def: Pick<CredentialType, 'type' | 'hidden' | 'expires'>,
  rec: RenderableRecord,
  secret?: Fields,
  now = Date.now(),
): Record<string, unknown> {
  const { description, tags, ...pub } = rec.meta as Record<string, unknown>;
  for (const h of def.hidden ?? []) delete pub[h];
  const out: Record<string, unknown> = {
    id: rec.id,
    type: def.type,
    name: rec.name,
    description: description ?? '',
    tags: tags ?? [],
    ...pub,
  };
  if (secret) Object.assign(out, secret);
  const setSecrets = secret ? Object.keys(secret) : ((rec.meta.secret_fields as string[] | undefined) ?? []);
  out.secret_fields = setSecrets;
  if (def.expires) {
    const at = (pub[def.expires] ?? secret?.[def.expires]) as string | undefined;
    out.expired = typeof at === 'string' ? Date.parse(at) <= now : false;
  }
  out.container_id = rec.container_id ?? null;
  out.version = rec.version;
  for (const f of ['created_at', 'updated_at', 'created_by', 'updated_by'] as const) if (rec[f] !== undefined) out[f] = rec[f];
  return out;
}

/**
 * A stored resource as the API shows it: metadata only without `secret`; with it, the
 * secret fields except the type's withheld ones (e.g. a non-exportable private key).
 */
export function renderResource(
  def: Pick<CredentialType, 'type' | 'hidden' | 'withheld' | 'expires'>,
  rec: RenderableRecord,
  secret?: Fields,
  now = Date.now(),
): Record<string, unknown> {
  if (!secret) return render(def, rec, undefined, now);
  const visible = { ...secret };
  for (const f of def.withheld ?? []) delete visible[f];
  return { ...render(def, rec, visible, now), secret_fields: Object.keys(secret) };
}

// ---- validation helpers for prepare hooks ----------------------------------------------

/** Collects field problems and throws one 400 validation_failed with all of them. */
export class Problems {
  private readonly issues: FieldIssue[] = [];
  add(field: string, message: string): this {
    this.issues.push({ path: `body.${field}`, message });
    return this;
  }
  check(ok: boolean, field: string, message: string): this {
    return ok ? this : this.add(field, message);
  }
  throwIfAny(): void {
    if (this.issues.length > 0) throw validationFailed(this.issues);
  }
}

/** Requires at least one of the named fields. */
function requireOneOf(fields: Fields, names: readonly string[]): Fields {
  if (!names.some((n) => fields[n] !== undefined && fields[n] !== ''))
    new Problems().add(names[0]!, `one of ${names.join(', ')} is required`).throwIfAny();
  return fields;
}
