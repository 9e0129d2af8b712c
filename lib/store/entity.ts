import type * as z from 'zod/v4';
import { internalError } from '../core/errors.js';

/**
 * An item kind of the single table, declared once: its zod schema, checked on every read
 * (an item that does not match is an internal error, never a half-read record), and its
 * field names (the projection of its lists). Keys are in lib/store/keys.ts.
 */
interface Entity<T> {
  readonly fields: readonly string[];
  parse(item: Record<string, unknown>): T;
}

export function entity<S extends z.ZodObject>(name: string, schema: S): Entity<z.output<S>> {
  return {
    fields: Object.keys(schema.shape),
    parse(item) {
      const parsed = schema.safeParse(item);
      if (!parsed.success) throw internalError(new Error(`stored ${name} ${String(item.sk)} does not match its entity: ${parsed.error.message}`));
      return parsed.data;
    },
  };
}

/** A nullable attribute that reads as null when absent. */
export const nullable = <T extends z.ZodType>(t: T) => t.nullable().default(null);
