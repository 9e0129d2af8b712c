import { stringify as stringifyYaml } from 'yaml';
import { ApiError, OAuthError, UnexpectedResponseError } from '../client/index.js';
import { CliError } from './api.js';

/** OpenSSL's verdicts on a certificate chain that ends in no CA the machine trusts: most often a private CA's. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
]);

/** What each failure tells the user: one line, with what to do. */
export function describeError(error: unknown, apiUrl?: string): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof ApiError) {
    const hint: Partial<Record<string, string>> = {
      unauthorized: 'run `secrets login` again (or check SECRETS_API_KEY)',
      insufficient_scope: 'use a credential with that scope',
      stale_etag: 'it changed since you read it: read it again and retry',
      not_found: 'check the name (`secrets secrets list`)',
      precondition_required: 'read it first and send its ETag (`secrets secrets get NAME -o json` shows it)',
      route_not_found: 'check SECRETS_API_URL: it is the API’s address, without /api/v1',
    };
    const extra = hint[String(error.code)];
    return `${error.error}${extra ? `: ${extra}` : ''} (${String(error.code)}, request ${error.request_id})`;
  }
  if (error instanceof OAuthError) return `${error.error_description ?? error.error} (${error.error})`;
  if (error instanceof UnexpectedResponseError) return `unexpected answer from the API (HTTP ${error.status}): check SECRETS_API_URL`;
  const code = (error as { cause?: { code?: string } })?.cause?.code;
  if (error instanceof TypeError && /fetch failed/.test(error.message) && code && UNTRUSTED_CERTIFICATE.has(code))
    return `the TLS certificate of ${apiUrl ?? 'the API'} is not trusted (${code}): if a private CA issued it, set NODE_EXTRA_CA_CERTS to that CA's PEM file (what VAULT_CACERT is to vault)`;
  if (error instanceof TypeError && /fetch failed/.test(error.message))
    return `cannot reach ${apiUrl ?? 'the API'}${code ? ` (${code})` : ''}: check SECRETS_API_URL and your network`;
  return error instanceof Error ? error.message : String(error);
}

/** A spinner on stderr while a long operation runs (only on a terminal: scripts see nothing). */
export function progress(label: string, stream: NodeJS.WriteStream = process.stderr): { stop(final?: string): void } {
  if (!stream.isTTY) return { stop: () => undefined };
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let i = 0;
  const timer = setInterval(() => stream.write(`\r${frames[i++ % frames.length]} ${label}`), 100);
  return {
    stop(final) {
      clearInterval(timer);
      stream.write(`\r\x1b[K${final ? `${final}\n` : ''}`);
    },
  };
}

export const FORMATS = ['json', 'yaml', 'table', 'env'] as const;
export type Format = (typeof FORMATS)[number];

/** An environment variable name: `db-password` → `DB_PASSWORD`. */
export const envName = (s: string) =>
  s
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .replace(/^(\d)/, '_$1');

const scalar = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** A table: one row per object (columns: the union of their keys, or `columns`), or key/value rows for one object. */
export function table(data: unknown, columns?: readonly string[]): string {
  const rows: Record<string, unknown>[] = Array.isArray(data)
    ? data.map((r) => (typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : { value: r }))
    : typeof data === 'object' && data !== null
      ? Object.entries(data).map(([key, value]) => ({ key, value }))
      : [{ value: data }];
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  if (rows.length === 0) return '(none)';
  const cells = [cols.map((c) => c.toUpperCase()), ...rows.map((r) => cols.map((c) => scalar(r[c]).replace(/\s+/g, ' ')))];
  const widths = cols.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === cols.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}

/** Dotenv lines (values double-quoted, escaped as JSON strings are; dotenv's parser reads them back). */
export const dotenv = (env: Record<string, string>) =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join('\n');

/** `--output env` of any result: an object's scalar fields as NAME=value lines. */
function envOf(data: unknown): string {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new CliError('--output env prints an object as NAME=value lines: use --output json or table for this command');
  return dotenv(Object.fromEntries(Object.entries(data).map(([k, v]) => [envName(k), scalar(v)])));
}

/** What a command prints: `human` without --output, else the data in the format asked for. */
export function render(format: Format | undefined, data: unknown, human: string, columns?: readonly string[]): string {
  switch (format) {
    case undefined:
      return human;
    case 'json':
      return JSON.stringify(data);
    case 'yaml':
      return stringifyYaml(data).replace(/\n$/, '');
    case 'table':
      return table(data, columns);
    case 'env':
      return envOf(data);
  }
}
