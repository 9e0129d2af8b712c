import { connect as netConnect, isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { AndFilter, Attribute, Change, Client, EqualityFilter, type Filter, FilterParser, OrFilter, PresenceFilter, SubstringFilter } from 'ldapts';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { recordAudit } from '../audit/audit.js';
import { BlockedDestination, guardedLookup, resolveChecked } from '../events/ssrf.js';
import { outboundTimeoutMs } from '../events/timeouts.js';
import { badRequest, notFound, serviceUnavailable } from '../core/errors.js';
import { openSecret, readResource } from '../resources/store.js';
import { exactlyOneOf } from '../schemas.js';
import { toolGuard } from './outbound.js';
import { LdifError, type LdifEntry, type LdifRecord, type LdifValue, parseLdif, writeLdif } from './ldif.js';

/**
 * LDAP over `ldapts`. A connection is an integration of provider `ldap` (POST
 * /api/v1/integrations: url, bind_dn, password — sealed in the vault —, base_dn,
 * user_filter, start_tls, ca_certificate). The service binds as that account for each
 * request; the socket resolves the host through the SSRF guard (lib/events/ssrf.ts) at
 * connection time. Search filters are built from filter objects (the caller's values are
 * never concatenated into filter text: they travel as BER octet strings, and the RFC 4515
 * string the answer shows is the library's escaped rendering), ANDed with the connection's
 * configured user_filter; size and time limits go to the server and bound the client.
 */
const Attr = z
  .string()
  .min(1)
  .max(128)
  .regex(/^([A-Za-z][A-Za-z0-9-]*(;[A-Za-z0-9-]+)*|\d+(\.\d+)+)$/, 'an LDAP attribute name');
const Dn = z.string().min(1).max(1024);
const Scope = z.enum(['base', 'one', 'sub']).default('sub');

const Condition = exactlyOneOf(
  z.strictObject({
    attribute: Attr,
    equals: z.string().max(1024).optional(),
    starts_with: z.string().min(1).max(1024).optional(),
    contains: z.string().min(1).max(1024).optional(),
    ends_with: z.string().min(1).max(1024).optional(),
    present: z.literal(true).optional(),
  }),
  ['equals', 'starts_with', 'contains', 'ends_with', 'present'],
  'give exactly one of equals, starts_with, contains, ends_with, present',
);

export const SearchBody = z.strictObject({
  base_dn: Dn.optional(),
  scope: Scope,
  where: z.array(Condition).min(1).max(16),
  match: z.enum(['all', 'any']).default('all'),
  attributes: z.array(Attr).max(64).optional(),
  size_limit: z.number().int().min(1).max(1000).default(100),
  time_limit_seconds: z.number().int().min(1).max(20).default(10),
});
type SearchBody = z.infer<typeof SearchBody>;

export const ExportQuery = z.strictObject({
  connection_id: z.uuid(),
  base_dn: Dn.optional(),
  scope: Scope,
  object_class: Attr.optional(),
  size_limit: z.coerce.number().int().min(1).max(5000).default(1000),
});
type ExportQuery = z.infer<typeof ExportQuery>;

const MAX_IMPORT_RECORDS = 500;
export const ImportBody = z.strictObject({
  connection_id: z.uuid(),
  ldif: z
    .string()
    .min(1)
    .max(512 * 1024),
  dry_run: z.boolean().default(false),
  continue_on_error: z.boolean().default(false),
});
type ImportBody = z.infer<typeof ImportBody>;

/**
 * Password attributes: never leave the service, by search or by export (an exported LDIF is a
 * file that travels: it must not carry the directory's password hashes or cleartexts). The one
 * rule both answers go through.
 */
const WITHHELD = new Set(['userpassword', 'unicodepwd', 'sambantpassword', 'sambalmpassword', 'authpassword']);

/** An entry without its password attributes (any option: `userPassword;binary` is withheld too). */
function withholdPasswords(e: LdifEntry): LdifEntry {
  return { dn: e.dn, attributes: Object.fromEntries(Object.entries(e.attributes).filter(([k]) => !WITHHELD.has(k.split(';')[0]!.toLowerCase()))) };
}

interface LdapConnection {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly bindDn: string;
  readonly password: string;
  readonly baseDn: string;
  readonly userFilter: string;
  readonly startTls: boolean;
  readonly ca?: string;
}

async function loadConnection(tenantId: string, id: string): Promise<LdapConnection> {
  const stored = await readResource<Record<string, unknown>>(tenantId, 'integration', id);
  if (!stored || stored.record.meta.provider !== 'ldap') throw notFound('LDAP connection (an integration of provider "ldap")');
  const m = stored.record.meta;
  const secret = (await openSecret<Record<string, unknown>>(tenantId, stored.record, stored.sealed)) ?? {};
  return {
    id,
    name: stored.record.name,
    url: String(m.url),
    bindDn: String(m.bind_dn),
    password: String(secret.password ?? ''),
    baseDn: String(m.base_dn),
    userFilter: typeof m.user_filter === 'string' ? m.user_filter : '(objectClass=*)',
    startTls: m.start_tls === true,
    ...(typeof m.ca_certificate === 'string' ? { ca: m.ca_certificate } : {}),
  };
}

/** Connects through the SSRF guard and binds; every failure is a 503 naming the connection, without the server's internals. */
async function withClient<T>(conn: LdapConnection, run: (client: Client) => Promise<T>): Promise<T> {
  const timeout = outboundTimeoutMs('ldap');
  const lookup = guardedLookup(toolGuard()) as never;
  const host = new URL(conn.url).hostname.replace(/^\[|\]$/g, '');
  const tlsOptions: ConnectionOptions = { ...(conn.ca ? { ca: conn.ca } : {}), ...(isIP(host) ? {} : { servername: host }) };
  const client = new Client({
    url: conn.url,
    timeout,
    connectTimeout: timeout,
    tlsOptions,
    strictDN: true,
    createConnection: ((port: number, h: string) => netConnect({ port, host: h, lookup })) as never,
    createSecureConnection: ((port: number, h: string, options: ConnectionOptions) => tlsConnect({ ...options, port, host: h, lookup })) as never,
  });
  try {
    try {
      // IP literals never reach the lookup: check the host first (names are checked again at connect time)
      await resolveChecked(host, toolGuard());
      if (conn.startTls) await client.startTLS(tlsOptions);
      await client.bind(conn.bindDn, conn.password);
    } catch (error) {
      const why =
        error instanceof BlockedDestination
          ? `destination not allowed: ${error.message}`
          : (error as Error).name === 'InvalidCredentialsError'
            ? 'the server refused the bind DN and password'
            : 'the server could not be reached';
      throw serviceUnavailable(`LDAP connection ${conn.id}: ${why}`);
    }
    return await run(client);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

function conditionFilter(c: z.infer<typeof Condition>): Filter {
  if (c.present) return new PresenceFilter({ attribute: c.attribute });
  if (c.equals !== undefined) return new EqualityFilter({ attribute: c.attribute, value: c.equals });
  return new SubstringFilter({
    attribute: c.attribute,
    initial: c.starts_with ?? '',
    any: c.contains !== undefined ? [c.contains] : [],
    final: c.ends_with ?? '',
  });
}

const values = (v: unknown): LdifValue[] => (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x : String(x)));

function searchFailure(conn: LdapConnection, error: unknown): never {
  const name = (error as Error).name;
  if (name === 'TimeLimitExceededError') throw badRequest('the search ran past its time limit: narrow it or raise time_limit_seconds');
  if (name === 'NoSuchObjectError') throw badRequest('the base DN does not exist on the server');
  if (name === 'InvalidDNSyntaxError') throw badRequest('the base DN is not a valid DN');
  throw serviceUnavailable(`LDAP connection ${conn.id}: the search failed (${name})`);
}

export async function searchDirectory(ctx: CallContext, connectionId: string, body: SearchBody) {
  const conn = await loadConnection(ctx.principal.tenantId, connectionId);
  let configured: Filter;
  try {
    configured = FilterParser.parseString(conn.userFilter);
  } catch {
    throw serviceUnavailable(`LDAP connection ${conn.id}: its user_filter is not a valid RFC 4515 filter`);
  }
  const parts = body.where.map(conditionFilter);
  const filter = new AndFilter({
    filters: [configured, body.match === 'all' ? new AndFilter({ filters: parts }) : new OrFilter({ filters: parts })],
  });
  const base = body.base_dn ?? conn.baseDn;
  return withClient(conn, async (client) => {
    let entries: LdifEntry[];
    try {
      const res = await client.search(base, {
        scope: body.scope,
        filter,
        // one more than asked: the server stops there (sizeLimitExceeded), which says whether more match
        sizeLimit: body.size_limit + 1,
        timeLimit: body.time_limit_seconds,
        ...(body.attributes ? { attributes: body.attributes } : {}),
      });
      entries = res.searchEntries.map(toEntry);
    } catch (error) {
      return searchFailure(conn, error);
    }
    const truncated = entries.length > body.size_limit;
    entries = entries.slice(0, body.size_limit);
    return {
      connection_id: conn.id,
      base_dn: base,
      filter: filter.toString(),
      entries: entries.map((e) => ({
        dn: e.dn,
        attributes: Object.fromEntries(
          Object.entries(e.attributes).map(([k, v]) => [k, v.map((x) => (Buffer.isBuffer(x) ? { base64: x.toString('base64') } : x))]),
        ),
      })),
      total: entries.length,
      truncated,
    };
  });
}

/** A search result entry as the service answers it (search and export alike): its password attributes withheld. */
function toEntry(e: Record<string, unknown>): LdifEntry {
  const { dn, ...attrs } = e;
  return withholdPasswords({ dn: String(dn), attributes: Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, values(v)])) });
}

export async function exportLdif(ctx: CallContext, query: ExportQuery) {
  const conn = await loadConnection(ctx.principal.tenantId, query.connection_id);
  const base = query.base_dn ?? conn.baseDn;
  const filter = query.object_class
    ? new EqualityFilter({ attribute: 'objectClass', value: query.object_class })
    : new PresenceFilter({ attribute: 'objectClass' });
  const entries = await withClient(conn, async (client) => {
    try {
      return (await client.search(base, { scope: query.scope, filter, sizeLimit: query.size_limit + 1, timeLimit: 20 })).searchEntries.map(toEntry);
    } catch (error) {
      return searchFailure(conn, error);
    }
  });
  if (entries.length > query.size_limit) throw badRequest(`more than ${query.size_limit} entries: raise size_limit or narrow base_dn`);
  // parents before children, so that an import of the file adds them in a working order
  entries.sort((a, b) => a.dn.split(',').length - b.dn.split(',').length);
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: 'ldap.export',
    resource: { type: 'integration', id: conn.id, name: conn.name },
    detail: { base_dn: base, entries: entries.length },
  });
  return { connection_id: conn.id, base_dn: base, entries: entries.length, ldif: writeLdif(entries) };
}

type Outcome = {
  line: number;
  dn: string;
  changetype: LdifRecord['changetype'];
  status: 'applied' | 'would_apply' | 'failed' | 'skipped';
  error?: string;
};

async function exists(client: Client, dn: string): Promise<boolean> {
  try {
    return (
      (await client.search(dn, { scope: 'base', filter: new PresenceFilter({ attribute: 'objectClass' }), attributes: ['1.1'] })).searchEntries
        .length > 0
    );
  } catch (error) {
    if ((error as Error).name === 'NoSuchObjectError') return false;
    throw error;
  }
}

const RESULT_NAMES: Readonly<Record<string, string>> = {
  AlreadyExistsError: 'the entry already exists',
  NoSuchObjectError: 'the entry (or its parent) does not exist',
  ObjectClassViolationError: 'object class violation (a required attribute is missing or one is not allowed)',
  UndefinedTypeError: 'an attribute type is not defined in the schema',
  InvalidDNSyntaxError: 'the DN is not valid',
  InsufficientAccessError: 'the bind account may not make this change',
  NotAllowedOnNonLeafError: 'the entry has children',
  TypeOrValueExistsError: 'the value already exists',
  NoSuchAttributeError: 'the attribute or value does not exist',
  InvalidSyntaxError: 'a value does not fit its attribute syntax',
  ConstraintViolationError: 'a constraint is violated',
  NamingViolationError: 'naming violation (the RDN is not an attribute of the entry)',
};
const describe = (error: unknown) => RESULT_NAMES[(error as Error).name] ?? `the server refused the change (${(error as Error).name})`;

export async function importLdif(ctx: CallContext, body: ImportBody) {
  let records: LdifRecord[];
  try {
    records = parseLdif(body.ldif, MAX_IMPORT_RECORDS);
  } catch (error) {
    if (error instanceof LdifError) throw badRequest(`${error.message}`, [{ path: 'ldif', message: error.message }]);
    throw error;
  }
  if (records.length === 0) throw badRequest('the LDIF holds no records', [{ path: 'ldif', message: 'no records' }]);
  const conn = await loadConnection(ctx.principal.tenantId, body.connection_id);
  const outcomes = await withClient(conn, async (client) => {
    const out: Outcome[] = [];
    let stop = false;
    for (const r of records) {
      const base = { line: r.line, dn: r.dn, changetype: r.changetype };
      if (stop) {
        out.push({ ...base, status: 'skipped' });
        continue;
      }
      try {
        if (body.dry_run) {
          const present = await exists(client, r.dn);
          const problem =
            r.changetype === 'add' ? (present ? 'the entry already exists' : undefined) : present ? undefined : 'the entry does not exist';
          out.push(problem ? { ...base, status: 'failed', error: problem } : { ...base, status: 'would_apply' });
        } else {
          if (r.changetype === 'add')
            await client.add(
              r.dn,
              Object.entries(r.attributes).map(([type, v]) => new Attribute({ type, values: v as string[] })),
            );
          else if (r.changetype === 'delete') await client.del(r.dn);
          else
            await client.modify(
              r.dn,
              r.changes.map(
                (c) => new Change({ operation: c.operation, modification: new Attribute({ type: c.attribute, values: c.values as string[] }) }),
              ),
            );
          out.push({ ...base, status: 'applied' });
        }
      } catch (error) {
        out.push({ ...base, status: 'failed', error: describe(error) });
      }
      if (out[out.length - 1]!.status === 'failed' && !body.continue_on_error && !body.dry_run) stop = true;
    }
    return out;
  });
  const count = (s: Outcome['status']) => outcomes.filter((o) => o.status === s).length;
  const summary = {
    records: records.length,
    applied: count('applied'),
    would_apply: count('would_apply'),
    failed: count('failed'),
    skipped: count('skipped'),
  };
  await recordAudit(ctx, ctx.principal.tenantId, {
    action: body.dry_run ? 'ldap.import.dry_run' : 'ldap.import',
    resource: { type: 'integration', id: conn.id, name: conn.name },
    detail: summary,
    ...(summary.failed > 0 && !body.dry_run ? { outcome: 'failure' as const } : {}),
  });
  return { connection_id: conn.id, dry_run: body.dry_run, ...summary, results: outcomes };
}
