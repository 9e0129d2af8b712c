import * as z from 'zod/v4';

/**
 * Request atoms shared by every family, each rule in one place: the page of a list
 * (`limit` 1..1000, default 100; `offset`; `cursor` as returned in `next_cursor`) and the
 * `{id}` path parameter of resources addressed by UUID.
 */
const PAGE_LIMIT_MAX = 1000;

export const Limit = (dflt = 100) => z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(dflt);
export const Offset = z.coerce.number().int().min(0).max(1_000_000).default(0);
/** The opaque cursor of lib/store/pagination.ts. */
export const Cursor = z.string().min(1).max(2048);
/** A cursor where an empty value means the first page (audit, tenants). */
export const OptionalCursor = z.string().max(2048).optional();

/** `?limit&offset&cursor` of every list that pages by offset or cursor. */
export const PageQuery = z.strictObject({ limit: Limit(), offset: Offset, cursor: Cursor.optional() });
export type PageQuery = z.infer<typeof PageQuery>;

/**
 * The body of a mutation that takes no fields: none, or `{}` (a client that always sends a JSON
 * object). Anything else is 400 naming the field, so the description and the server agree on
 * what such a route takes.
 */
export const NoFieldsBody = z.strictObject({}).optional();

export const Uuid = z.uuid();
export const IdParams = z.strictObject({ id: Uuid });
export type IdParams = z.infer<typeof IdParams>;

export const Description = z.string().max(1024);
/** Up to 50 tags of printable characters, duplicates dropped. */
export const Tags = z
  .array(
    z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\p{L}\p{N} _.:/=+@-]+$/u, 'printable tag characters only'),
  )
  .max(50)
  .transform((t) => [...new Set(t)]);

/**
 * A page of a list as the API shows it: the items under their key, `total` (the number in
 * this page, as the specification says), `limit` and `offset` for lists paged by offset, and
 * `next_cursor` (null on the last page).
 */
export const listPage = <T>(key: string, items: readonly T[], nextCursor: string | null | undefined, paged?: { limit: number; offset: number }) => ({
  [key]: items,
  total: items.length,
  ...(paged ? { limit: paged.limit, offset: paged.offset } : {}),
  next_cursor: nextCursor ?? null,
});

/*
 * Response atoms (the `responses` of lib/http/define-handler.ts `HandlerDoc`): what the API
 * sends, for the OpenAPI document and the tests that hold every response to it.
 */

/** An instant as the API writes it (ISO 8601, UTC). */
export const Timestamp = z.iso.datetime({ offset: true });

/**
 * The schema of a `listPage` answer: the items under `key`, `total`, `next_cursor`, and
 * `limit`/`offset` when the list pages by offset (`paged`).
 */
export const ListPage = <K extends string, T extends z.ZodType>(key: K, item: T, options: { paged?: boolean; describe?: string } = {}) =>
  z.object({
    ...({ [key]: z.array(item).describe(options.describe ?? 'The items of this page.') } as Record<K, z.ZodArray<T>>),
    total: z.int().min(0).describe('The number of items in this page.'),
    ...(options.paged
      ? { limit: z.int().min(1).describe('The page size asked for.'), offset: z.int().min(0).describe('Items skipped before this page.') }
      : {}),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
  });

/**
 * Cross-field rules, each stated once: the check the server runs and the JSON Schema keyword
 * the API description carries for it (z.toJSONSchema copies a schema's metadata into its
 * output, scripts/openapi.ts), so the document cannot call valid what the server refuses.
 * Apply them last: a later `.refine` makes a new schema without this metadata.
 */
export const atLeastOneField = <T extends z.ZodType<object>>(schema: T, message = 'at least one field to update is required'): T =>
  schema.refine((b) => Object.keys(b).length > 0, { message }).meta({ ...metaOf(schema), minProperties: 1 }) as T;

/** Exactly one of `keys` is present: `oneOf` of one `required` each (both, or neither, match no branch but one). */
export const exactlyOneOf = <T extends z.ZodType<object>>(schema: T, keys: readonly string[], message: string, path?: string): T =>
  schema
    .refine((b) => keys.filter((k) => (b as Record<string, unknown>)[k] !== undefined).length === 1, { message, ...(path ? { path: [path] } : {}) })
    .meta({ ...metaOf(schema), oneOf: keys.map((k) => ({ required: [k] })) }) as T;

/**
 * Any other cross-field rule: the server's `check` (on the parsed value, defaults applied) and
 * the JSON Schema `keywords` that say the same of the request as sent, added to the schema's
 * `allOf` (so several rules, and the metadata set before, stay together).
 */
export const crossFieldRule = <T extends z.ZodType<object>>(
  schema: T,
  check: (b: z.output<T>) => boolean,
  keywords: Record<string, unknown>,
  message: string,
  path?: string,
): T => {
  const before = metaOf(schema);
  return schema
    .refine(check, { message, ...(path ? { path: [path] } : {}) })
    .meta({ ...before, allOf: [...((before.allOf as unknown[] | undefined) ?? []), keywords] }) as T;
};

/** The metadata a rule was given before (a `.refine` makes a new schema without it). */
const metaOf = (schema: z.ZodType): Record<string, unknown> => (schema.meta() ?? {}) as Record<string, unknown>;
