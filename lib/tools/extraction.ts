import * as z from 'zod/v4';
import type { CallContext, Principal } from '../auth/principal.js';
import { ADMIN_SCOPE } from '../auth/scopes.js';
import { recordAudit } from '../audit/audit.js';
import { DatabaseError } from '../database/errors.js';
import { loadConnection } from '../database/records.js';
import { openAdminSession, type AdminSession } from '../database/session.js';
import { forbidden, HttpError, notFound } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { newId, nowIso } from '../ids.js';
import { createSecret, getSecret, updateSecret } from '../secrets/service.js';
import { getTenant } from '../store/tenants.js';
import { withTenant } from '../tenancy/scope.js';
import { sendJob } from './jobs.js';
import { type Counts, type Job, putJob, readJob, saveJob } from './store.js';

/**
 * Database extraction jobs: POST /extraction/db reads credentials out of a PostgreSQL,
 * MySQL or MariaDB database the account names through an integration (the connection
 * settings of the database-lease capability, lib/database, password sealed in the vault),
 * either a table with a column mapping or — for an account administrator — a SELECT of its
 * own (run in a READ ONLY transaction). The route records the job and queues it; the jobs
 * worker runs it: each row becomes a generic secret named `<name_prefix><name column>` with
 * data {value, username?, url?}. Idempotent: a secret that exists with the same data is
 * left unchanged (a re-run or a redelivered message duplicates nothing; the name is the
 * key, and creation is a conditional write), one with other data gets a new version. A row
 * that cannot be imported is counted and reported with its error (never its value), and the
 * job goes on. GET /extraction/jobs/{id} shows state, counts, progress and errors.
 */
const Ident = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[A-Za-z_][A-Za-z0-9_$]*$/, 'an unquoted SQL identifier (letters, digits, "_", "$")');

export const ExtractBody = z.strictObject({
  connection_id: z.uuid(),
  source: z.union([
    z.strictObject({
      schema: Ident.optional(),
      table: Ident,
      name_column: Ident,
      value_column: Ident,
      username_column: Ident.optional(),
      url_column: Ident.optional(),
    }),
    z.strictObject({
      query: z
        .string()
        .min(1)
        .max(8192)
        .regex(
          /^\s*([Ss][Ee][Ll][Ee][Cc][Tt]|[Ww][Ii][Tt][Hh])\b/,
          'a SELECT (or WITH … SELECT) returning columns name, value and optionally username, url',
        ),
    }),
  ]),
  name_prefix: z
    .string()
    .max(64)
    .regex(/^([A-Za-z0-9][A-Za-z0-9._-]*)?$/, 'letters, digits, ".", "_", "-", starting with a letter or digit')
    .default(''),
  max_rows: z.number().int().min(1).max(10_000).default(1000),
});
type ExtractBody = z.infer<typeof ExtractBody>;

const MAX_ERRORS = 100;
const JOB_RETENTION_DAYS = 30;
const PROGRESS_EVERY = 25;
const SECRET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const ZERO: Counts = { rows: 0, processed: 0, created: 0, updated: 0, unchanged: 0, failed: 0 };

const view = (j: Job) => ({
  id: j.id,
  status: j.status,
  connection_id: j.connection_id,
  engine: j.engine,
  source: j.source,
  name_prefix: j.name_prefix,
  counts: j.counts,
  progress: j.counts.rows > 0 ? Math.round((j.counts.processed / j.counts.rows) * 100) / 100 : j.status === 'succeeded' ? 1 : 0,
  truncated: j.truncated,
  errors: j.errors,
  error: j.error,
  created_at: j.created_at,
  started_at: j.started_at,
  finished_at: j.finished_at,
});

export async function startExtraction(ctx: CallContext, body: ExtractBody) {
  if ('query' in body.source && !ctx.principal.scopes.includes(ADMIN_SCOPE)) {
    throw forbidden('a query of your own needs an account administrator (admin:*); others map a table and its columns', 'insufficient_scope');
  }
  const tenantId = ctx.principal.tenantId;
  // the connection must be a database integration of this account (a 404 otherwise); its password is not opened here
  const { readResource } = await import('../resources/store.js');
  const conn = await readResource<Record<string, unknown>>(tenantId, 'integration', body.connection_id);
  if (!conn || !['postgresql', 'mysql', 'mariadb'].includes(String(conn.record.meta.provider))) {
    throw notFound('database connection (an integration of provider postgresql, mysql or mariadb)');
  }
  const id = newId();
  const now = nowIso();
  const job: Job = {
    id,
    status: 'queued',
    connection_id: body.connection_id,
    engine: String(conn.record.meta.provider),
    source: 'query' in body.source ? { query: body.source.query } : (body.source as Record<string, string>),
    name_prefix: body.name_prefix,
    max_rows: body.max_rows,
    counts: ZERO,
    truncated: false,
    errors: [],
    error: null,
    principal: { kind: ctx.principal.kind, id: ctx.principal.id, user: ctx.principal.user, scopes: [...ctx.principal.scopes] },
    created_at: now,
    started_at: null,
    finished_at: null,
    attempts: 0,
  };
  const ttl = Math.floor(Date.now() / 1000) + JOB_RETENTION_DAYS * 86_400;
  await putJob(tenantId, id, job, ttl);
  await recordAudit(ctx, tenantId, {
    action: 'extraction.start',
    resource: { type: 'extraction_job', id },
    detail: { connection_id: body.connection_id, ...('query' in body.source ? { query: true } : { table: body.source.table }) },
  });
  await sendJob(JSON.stringify({ kind: 'extraction', tenant_id: tenantId, job_id: id }));
  return view(job);
}

export async function getExtractionJob(ctx: CallContext, id: string) {
  const job = await readJob(ctx.principal.tenantId, id);
  if (!job) throw notFound('extraction job');
  return view(job);
}

/** A result row: columns name, value and optionally username, url. */
type Row = Record<string, unknown>;

async function readRows(session: AdminSession, job: Job): Promise<Row[]> {
  const limit = job.max_rows + 1;
  const s = job.source;
  if (s.query !== undefined) {
    const readOnly = session.dialect === 'postgresql' ? 'BEGIN READ ONLY' : 'START TRANSACTION READ ONLY';
    await session.exec(readOnly, 'extract', 'the read-only transaction');
    try {
      return await session.query<Record<string, unknown>>(
        `SELECT * FROM (${s.query}) AS extracted LIMIT ${limit}`,
        [],
        'extract',
        'the configured query',
      );
    } finally {
      await session.exec('ROLLBACK', 'extract', 'the end of the read-only transaction').catch(() => undefined);
    }
  }
  const id = session.escape.identifier;
  const col = (c: string | undefined, as: string) => (c ? `, ${id(c)} AS ${as}` : '');
  const from = s.schema ? `${id(s.schema)}.${id(s.table!)}` : id(s.table!);
  const sql = `SELECT ${id(s.name_column!)} AS name, ${id(s.value_column!)} AS value${col(s.username_column, 'username')}${col(s.url_column, 'url')} FROM ${from} ORDER BY 1 LIMIT ${limit}`;
  return session.query<Record<string, unknown>>(sql, [], 'extract', `the read of table ${s.table}`);
}

const text = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

type RowOutcome = 'created' | 'updated' | 'unchanged';

async function importRow(ctx: CallContext, job: Job, row: Row): Promise<RowOutcome> {
  const rawName = text(row.name);
  const value = text(row.value);
  if (!rawName) throw new RowError(null, 'the name column is empty');
  const name = `${job.name_prefix}${rawName}`;
  if (!SECRET_NAME.test(name)) throw new RowError(null, `"${name.slice(0, 64)}" is not a secret name (1-128 letters, digits, ".", "_", "-")`);
  if (!value) throw new RowError(name, 'the value column is empty');
  const data: Record<string, string> = { value };
  const username = text(row.username);
  const url = text(row.url);
  if (username) data.username = username;
  if (url) data.url = url;
  try {
    await createSecret(ctx, { name, data, description: `extracted by job ${job.id}` });
    return 'created';
  } catch (error) {
    if (!(error instanceof HttpError) || error.code !== 'already_exists') throw error;
  }
  const current = await getSecret(ctx, name);
  const same = JSON.stringify(Object.entries(current.data).sort()) === JSON.stringify(Object.entries(data).sort());
  if (same) return 'unchanged';
  await updateSecret(ctx, name, { data });
  return 'updated';
}

class RowError extends Error {
  constructor(
    readonly name_: string | null,
    message: string,
  ) {
    super(message);
  }
}

function rowError(error: unknown): string {
  if (error instanceof RowError) return error.message;
  if (error instanceof HttpError && error.expose) return error.message;
  return 'the row could not be stored';
}

/**
 * The jobs worker's step: runs one queued job to its end, in the tenant session of the account
 * the message names (infra/background.ts JobsWorker, tenantAccess 'grants'). A finished job's
 * message is a no-op (redelivery).
 */
export async function runExtractionJob(message: { tenant_id: string; job_id: string }): Promise<void> {
  return withTenant(message.tenant_id, () => runJob(message));
}

async function runJob(message: { tenant_id: string; job_id: string }): Promise<void> {
  const tenantId = message.tenant_id;
  const job = await readJob(tenantId, message.job_id);
  if (!job || job.status === 'succeeded' || job.status === 'failed') return;
  const tenant = await getTenant(tenantId);
  const started = nowIso();
  await saveJob(tenantId, job.id, { status: 'running', started_at: started, attempts: job.attempts + 1 });
  if (!tenant || tenant.status !== 'active') {
    await saveJob(tenantId, job.id, { status: 'failed', error: 'the account is not active', finished_at: nowIso() });
    return;
  }
  const principal = { ...job.principal, kind: job.principal.kind as Principal['kind'], tenantId, tenant, operator: false };
  const ctx: CallContext = { principal, requestId: `job-${job.id}`, sourceIp: null, userAgent: 'extraction-job' };
  let session: AdminSession | undefined;
  const counts: Counts = { ...ZERO };
  const errors: Job['errors'] = [];
  try {
    const conn = await loadConnection(tenantId, job.connection_id);
    session = await openAdminSession(conn.settings);
    const rows = await readRows(session, job);
    await session.close();
    session = undefined;
    const truncated = rows.length > job.max_rows;
    const take = rows.slice(0, job.max_rows);
    counts.rows = take.length;
    await saveJob(tenantId, job.id, { counts, truncated });
    for (const [i, row] of take.entries()) {
      try {
        counts[await importRow(ctx, job, row)] += 1;
      } catch (error) {
        counts.failed += 1;
        if (errors.length < MAX_ERRORS)
          errors.push({ row: i + 1, name: error instanceof RowError ? error.name_ : (text(row.name) ?? null), error: rowError(error) });
      }
      counts.processed += 1;
      if (counts.processed % PROGRESS_EVERY === 0) await saveJob(tenantId, job.id, { counts, errors });
    }
    await saveJob(tenantId, job.id, { status: 'succeeded', counts, errors, finished_at: nowIso() });
    await recordAudit(ctx, tenantId, { action: 'extraction.finish', resource: { type: 'extraction_job', id: job.id }, detail: { ...counts } });
  } catch (error) {
    const why =
      error instanceof DatabaseError
        ? error.message
        : error instanceof HttpError && error.expose
          ? error.message
          : 'the job failed on an internal error';
    if (!(error instanceof DatabaseError) && !(error instanceof HttpError))
      logger.error('extraction job failed', { job_id: job.id, error: (error as Error).name });
    await saveJob(tenantId, job.id, { status: 'failed', counts, errors, error: why, finished_at: nowIso() });
  } finally {
    await session?.close();
  }
}
