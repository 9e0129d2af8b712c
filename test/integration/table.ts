import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../lib/store/client.js';
import { keys } from '../../lib/store/keys.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * Direct access to the suite's table for unit tests of lib/ code that reads it: the items a
 * test needs (accounts, credential auth items) written as the table holds them
 * (DESIGN.md §7: tenant-first keys), without going through the HTTP routes.
 */
export async function table() {
  useRuntimeConfig();
  const put = async (item: Record<string, unknown>) => {
    await db().send(new PutCommand({ TableName: tableName(), Item: item }));
  };
  const get = async (key: { pk: string; sk: string }) => (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
  const remove = async (key: { pk: string; sk: string }) => {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
  };
  /** A new account item; `status`, `operator` and `quota` as given. */
  const account = async (fields: { status?: 'active' | 'suspended'; operator?: boolean; quota?: Record<string, number>; settings?: Record<string, unknown> } = {}) => {
    const id = randomUUID();
    const now = new Date().toISOString();
    await put({
      pk: `T#${id}`,
      sk: 'TENANT',
      id,
      name: `unit-${id.slice(0, 8)}`,
      admin_email: `admin-${id.slice(0, 8)}@unit.example`,
      status: fields.status ?? 'active',
      operator: fields.operator ?? false,
      quota: fields.quota ?? { requests_per_minute: 6000 },
      ...(fields.settings ? { settings: fields.settings } : {}),
      created_at: now,
      updated_at: now,
    });
    return id;
  };
  return { db, tableName, put, get, remove, account };
}

/** An audit entry item of `tid` as the audit writer puts it (an export by an API key), for the relay's sealing. */
export const auditEntryItem = (tid: string, id: string, at: string) => ({
  ...keys.audit(tid, id),
  id,
  at,
  tenant_id: tid,
  actor: { type: 'api_key', id: 'k', user: null, tenant_id: tid },
  action: 'export.json',
  resource: { type: 'export', id: 'r' },
  outcome: 'success',
  request_id: 'r',
  source_ip: null,
  user_agent: null,
});
