import { createHash } from 'node:crypto';
import { Aws } from 'aws-cdk-lib';
import type { Route } from '../lib/routes.js';

/**
 * Stable names derived from the route table, so adding a route never renames another:
 * construct ids (hence logical ids) and function names come from the route's own key only.
 */

/** `GET /api/v1/secrets/{name}` -> `GetSecretsByName`; `GET /` -> `GetRoot`. */
export function routeId(route: Route): string {
  const words = route.path
    .replace(/^\/api\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith('{') ? `By-${seg.slice(1, -1)}` : seg));
  const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  return pascal(route.method.toLowerCase()) + (words.length ? words.map(pascal).join('') : 'Root') + (route.path.startsWith('/api/v1') ? '' : 'Unversioned');
}

/**
 * The Lambda function name: `<name>-<METHOD>-<path>` (`secrets-api-GET-secrets-_name`), path
 * parameters marked with `_`, at most 64 characters (longer ones end in a hash of the key).
 */
export function functionName(prefix: string, route: Route): string {
  const path = route.path.replace(/^\/api\/v1(?=\/|$)/, '') || '/';
  const slug =
    path === '/'
      ? 'root'
      : path
          .split('/')
          .filter(Boolean)
          .map((seg) => (seg.startsWith('{') ? `_${seg.slice(1, -1)}` : seg))
          .join('-')
          .replace(/[^A-Za-z0-9_-]/g, '');
  const versioned = route.path.startsWith('/api/v1') ? '' : 'x-';
  const full = `${prefix}-${route.method}-${versioned}${slug}`;
  if (full.length <= 64) return full;
  const hash = createHash('sha256').update(route.key).digest('hex').slice(0, 8);
  return `${full.slice(0, 64 - 9)}-${hash}`;
}

/** `credentials` -> `Credentials`, `certificates` -> `Certificates`. */
export function familyId(family: string): string {
  return family.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** Throws when two routes would share a name (the table must map one-to-one onto functions). */
export function assertUnique<T>(items: readonly T[], name: (item: T) => string, what: string): void {
  const seen = new Map<string, T>();
  for (const item of items) {
    const n = name(item);
    if (seen.has(n)) throw new Error(`two routes map to the same ${what} "${n}"`);
    seen.set(n, item);
  }
}

/**
 * The protected documents' bucket name: fixed per deployment name, account and region (S3
 * names are global), so that grants name its objects without a cross-stack token
 * (infra/grants.ts) and their acknowledged wildcard reads as a plain ARN.
 */
export function documentsBucketName(prefix: string): string {
  return `${prefix}-documents-${Aws.ACCOUNT_ID}-${Aws.REGION}`;
}
