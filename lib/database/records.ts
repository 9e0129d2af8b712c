import { notFound, serviceUnavailable } from '../core/errors.js';
import { openSecret, readResource, type ResourceRecord } from '../resources/store.js';
import { checkTemplate, TemplateError, type Dialect } from './template.js';
import { dialectOf, type ConnectionSettings, type Engine } from './settings.js';
import { checkUsernameTemplate } from './usernames.js';

/**
 * The two account-owned records a lease comes from, read through lib/resources/store.ts
 * (tenant first) with the field names of the credential collections
 * (functions/credentials/integrations.ts):
 *
 * - a database role: `service_config` of kind `database-role` — connection_id,
 *   creation_statements, revocation_statements?, rotation_statements?, default_ttl_seconds,
 *   max_ttl_seconds, username_template?;
 * - its connection: an `integration` of provider postgresql / mysql / mariadb — host, port,
 *   database, username, tls_mode, tls_ca_certificate?, tls_client_certificate?,
 *   connect_timeout_seconds; sealed: password, tls_client_key?.
 */
const ENGINES: readonly Engine[] = ['postgresql', 'mysql', 'mariadb'];

export interface DatabaseRole {
  readonly id: string;
  readonly name: string;
  readonly connectionId: string;
  readonly creationStatements: readonly string[];
  readonly revocationStatements: readonly string[];
  readonly rotationStatements: readonly string[];
  readonly defaultTtlSeconds: number;
  readonly maxTtlSeconds: number;
  readonly usernameTemplate: string | undefined;
}

interface StoredConnection {
  readonly settings: ConnectionSettings;
  readonly record: ResourceRecord<Record<string, unknown>>;
  /** The opened secret part (password, tls_client_key), for rotation's read-modify-write. */
  readonly secret: Record<string, unknown>;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The role, or 404 for a missing id, another account's id, or a service-config of another kind. */
export async function loadRole(tenantId: string, roleId: string): Promise<DatabaseRole> {
  const stored = await readResource<Record<string, unknown>>(tenantId, 'service_config', roleId);
  const m = stored?.record.meta;
  if (!stored || !m || m.kind !== 'database-role') throw notFound('database role');
  const connectionId = String(m.connection_id ?? '');
  rememberConnection(tenantId, roleId, connectionId);
  return {
    id: stored.record.id,
    name: stored.record.name,
    connectionId,
    creationStatements: strings(m.creation_statements),
    revocationStatements: strings(m.revocation_statements),
    rotationStatements: strings(m.rotation_statements),
    defaultTtlSeconds: Number(m.default_ttl_seconds ?? 3600),
    maxTtlSeconds: Number(m.max_ttl_seconds ?? 86_400),
    usernameTemplate: typeof m.username_template === 'string' ? m.username_template : undefined,
  };
}

/**
 * The connection each role named when this container last read it (roleId → connectionId;
 * an id, never the connection itself): the hint that lets a lease read the connection beside
 * its role. Filled at every role read; bounded (the oldest entry leaves first).
 */
const connectionHints = new Map<string, string>();
const HINTS_MAX = 1000;

function rememberConnection(tenantId: string, roleId: string, connectionId: string): void {
  const key = `${tenantId}#${roleId}`;
  connectionHints.delete(key);
  connectionHints.set(key, connectionId);
  if (connectionHints.size > HINTS_MAX) connectionHints.delete(connectionHints.keys().next().value!);
}

/**
 * The role and, read in the same round trip, the connection it is expected to name (the
 * container's hint above). The role read confirms the hint: a stale or missing hint costs
 * one more read of the connection the role does name, never a wrong connection. The
 * connection comes as a function so that the role's own answers (404, a TTL above its
 * maximum) come first, as when the two were read one after the other; a hinted read that
 * turned out stale is dropped whatever it found.
 */
export async function loadRoleAndConnection(
  tenantId: string,
  roleId: string,
): Promise<{ role: DatabaseRole; connection: () => Promise<StoredConnection> }> {
  const hinted = connectionHints.get(`${tenantId}#${roleId}`);
  const early = hinted === undefined ? undefined : settle(loadConnection(tenantId, hinted));
  const role = await loadRole(tenantId, roleId);
  if (early && hinted === role.connectionId) return { role, connection: early };
  return { role, connection: () => loadConnection(tenantId, role.connectionId) };
}

/** A promise whose rejection is kept for the caller who asks (and unhandled by nobody if none does). */
function settle<T>(p: Promise<T>): () => Promise<T> {
  const kept = p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return async () => {
    const out = await kept;
    if ('error' in out) throw out.error;
    return out.value;
  };
}

/**
 * The connection a role or lease names, with its admin password opened. A missing
 * integration or one that is not a supported database is "not configured": 503, since the
 * caller's request is fine and the account's configuration is what must change.
 */
export async function loadConnection(tenantId: string, connectionId: string): Promise<StoredConnection> {
  const stored = connectionId ? await readResource<Record<string, unknown>>(tenantId, 'integration', connectionId) : undefined;
  if (!stored) throw serviceUnavailable(`database connection ${connectionId} is not configured: create it in /api/v1/integrations`);
  const m = stored.record.meta;
  const engine = m.provider as Engine;
  if (!ENGINES.includes(engine)) {
    throw serviceUnavailable(`integration ${connectionId} is not a database connection the service issues leases for (postgresql, mysql, mariadb)`);
  }
  const secret = (await openSecret<Record<string, unknown>>(tenantId, stored.record, stored.sealed)) ?? {};
  if (typeof secret.password !== 'string' || typeof m.host !== 'string' || typeof m.username !== 'string') {
    throw serviceUnavailable(`database connection ${connectionId} is incomplete: it needs host, username and password`);
  }
  const tlsMode = (m.tls_mode ?? 'verify-full') as ConnectionSettings['tls']['mode'];
  return {
    record: stored.record,
    secret,
    settings: {
      id: connectionId,
      tenantId,
      engine,
      host: m.host,
      port: Number(m.port ?? (engine === 'postgresql' ? 5432 : 3306)),
      database: typeof m.database === 'string' ? m.database : null,
      username: m.username,
      password: secret.password,
      connectTimeoutMs: typeof m.connect_timeout_seconds === 'number' ? m.connect_timeout_seconds * 1000 : undefined,
      tls: {
        mode: tlsMode,
        ...(typeof m.tls_ca_certificate === 'string' ? { ca: m.tls_ca_certificate } : {}),
        ...(typeof m.tls_client_certificate === 'string' ? { cert: m.tls_client_certificate } : {}),
        ...(typeof secret.tls_client_key === 'string' ? { key: secret.tls_client_key } : {}),
      },
    },
  };
}

/** Each statement list and the placeholders it cannot use: revocation knows only the login, rotation the admin login and its new password. */
const STATEMENT_FIELDS = [
  ['creation_statements', []],
  ['revocation_statements', ['password', 'expiration']],
  ['rotation_statements', ['expiration']],
] as const;

interface RoleProblem {
  readonly field: string;
  readonly message: string;
}

/**
 * Checks a database role's templates against its connection's engine: every statement's
 * placeholders and quoting (lib/database/template.ts) and the username template
 * (lib/database/usernames.ts). Used when a role is stored (the service-config collection's
 * prepare hook) and again before anything runs on the server.
 */
export function databaseRoleProblems(role: Record<string, unknown>, provider: string | undefined): RoleProblem[] {
  const problems: RoleProblem[] = [];
  const dialect: Dialect | undefined = ENGINES.includes(provider as Engine) ? dialectOf(provider as Engine) : undefined;
  for (const [field, unavailable] of STATEMENT_FIELDS) {
    strings(role[field]).forEach((statement, i) => {
      try {
        checkTemplate(statement, dialect);
        for (const p of unavailable) {
          if (new RegExp(`\\{\\{\\s*${p}\\s*\\}\\}`).test(statement)) throw new TemplateError(`{{${p}}} has no value in ${field.replace('_', ' ')}`);
        }
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        problems.push({ field: `${field}.${i}`, message: error.message });
      }
    });
  }
  if (typeof role.username_template === 'string') {
    const problem = checkUsernameTemplate(role.username_template, provider as Engine | undefined);
    if (problem) problems.push({ field: 'username_template', message: problem });
  }
  return problems;
}
