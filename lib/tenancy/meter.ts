import { METERING_ATTRIBUTES } from './attributes.js';
import type { PartitionAccess } from './leading-keys.js';

/**
 * What every tenant-access role may do on its account's metering partition `METER#<tid>`
 * (lib/store/keys.ts `meterPk`: usage per day and the rate-limit buckets), and nothing more
 * (infra/grants.ts): read it (`TenantRead`: the usage report) and UpdateItem naming only
 * METERING_ATTRIBUTES (`TenantMeter`: the limiter). No PutItem, DeleteItem or
 * ConditionCheckItem, no other attribute. lib/store/client.ts applies the same rule to the
 * tenant clients, so the local runtimes (whose DynamoDB ignores IAM) refuse what AWS would.
 */
export const METER_ACTIONS = ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem'] as const;

const KEYWORDS = new Set(['SET', 'ADD', 'REMOVE', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN']);

/**
 * The top-level attributes an UpdateItem names, as `dynamodb:Attributes` sees them: the key's
 * and those of its update and condition expressions (`#name` placeholders resolved; values,
 * keywords, functions and nested path elements left out). Undefined when it cannot tell (the
 * legacy AttributeUpdates / Expected parameters, an unresolved placeholder).
 */
export function updatedAttributes(update: Record<string, unknown>): string[] | undefined {
  if (update.AttributeUpdates !== undefined || update.Expected !== undefined) return undefined;
  const names = (update.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const found = new Set(Object.keys((update.Key ?? {}) as object));
  for (const expression of [update.UpdateExpression, update.ConditionExpression]) {
    if (expression === undefined) continue;
    if (typeof expression !== 'string') return undefined;
    // a token, what precedes it (a path's `.`), and whether a `(` follows (a function)
    for (const m of expression.matchAll(/(\.?)\s*([#:]?[A-Za-z_][\w]*)(\s*\()?/g)) {
      const [, dot, token, call] = m as unknown as [string, string, string, string | undefined];
      if (dot || call || token.startsWith(':') || KEYWORDS.has(token.toUpperCase())) continue;
      const name = token.startsWith('#') ? names[token] : token;
      if (name === undefined) return undefined;
      found.add(name);
    }
  }
  return [...found];
}

/** Whether an attribute name matches METERING_ATTRIBUTES the way IAM's StringLike does (`*` any suffix). */
export const isMeteringAttribute = (name: string): boolean =>
  METERING_ATTRIBUTES.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));

/** Whether the tenant-access role may make `access` on its metering partition (the rule above). */
export function meterAllows(access: PartitionAccess): boolean {
  if (!(METER_ACTIONS as readonly string[]).includes(access.action)) return false;
  if (access.action !== 'UpdateItem') return true;
  return updatedAttributes(access.request)?.every(isMeteringAttribute) === true;
}
