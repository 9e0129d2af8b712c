import type { CallContext } from '../../lib/auth/principal.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * In-process access to the suite's table for the history / sharing / container / lookup
 * tests: writing typed resources through lib/resources/store.ts directly (for types whose
 * routes another capability builds), reading the outbox and audit entries a change wrote,
 * and tampering with items to prove a copied ciphertext does not open.
 */
export async function store() {
  useRuntimeConfig();
  const [resources, tenants, client, keys, ddb, access] = await Promise.all([
    import('../../lib/resources/store.js'),
    import('../../lib/store/tenants.js'),
    import('../../lib/store/client.js'),
    import('../../lib/store/keys.js'),
    import('@aws-sdk/lib-dynamodb'),
    import('../../lib/sharing/access.js'),
  ]);
  const db = client.db();
  const table = client.tableName();

  async function ctxFor(tenantId: string, user: string | null, scopes: string[] = ['admin:*']): Promise<CallContext> {
    const tenant = await tenants.getTenant(tenantId);
    if (!tenant) throw new Error(`no tenant ${tenantId}`);
    return {
      principal: { kind: 'api_key', tenantId, tenant, id: 'in-process-test', user, scopes, operator: false },
      requestId: 'in-process-test',
      sourceIp: null,
      userAgent: 'vitest',
    };
  }

  async function partition(tenantId: string, prefix: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.send(
        new ddb.QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': keys.tenantPk(tenantId), ':p': prefix },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** The outbox events of an account (type and data), oldest first. */
  const events = async (tenantId: string) =>
    (await partition(tenantId, 'OUTBOX#')).map((i) => ({ type: i.type as string, data: i.data as Record<string, unknown> }));

  /** The audit entries of an account, oldest first. */
  const audits = async (tenantId: string) =>
    (await partition(tenantId, 'AUDIT#')).map((i) => ({
      action: i.action as string,
      resource: i.resource as { type: string; id: string },
      actor: i.actor as { type: string; id: string; user: string | null; tenant_id: string },
      detail: i.detail as Record<string, unknown> | undefined,
    }));

  async function getItem(key: { pk: string; sk: string }) {
    return (await db.send(new ddb.GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  }

  async function setAttribute(key: { pk: string; sk: string }, name: string, value: unknown) {
    await db.send(
      new ddb.UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET #a = :v',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#a': name },
        ExpressionAttributeValues: { ':v': value },
      }),
    );
  }

  return { resources, keys: keys.keys, tenantPk: keys.tenantPk, db, table, ddb, access, ctxFor, partition, events, audits, getItem, setAttribute };
}

export type Store = Awaited<ReturnType<typeof store>>;

/** A typed resource written through lib/resources/store.ts (the path every typed capability uses). */
export async function createTyped(
  s: Store,
  ctx: CallContext,
  input: { type: string; name: string; meta?: Record<string, unknown>; secret?: unknown; container_id?: string | null },
) {
  return s.resources.createResource(
    ctx,
    { type: input.type, name: input.name, meta: input.meta ?? {}, secret: input.secret, container_id: input.container_id ?? null },
    (rec) => ({ action: `${input.type}.create`, resource: { type: input.type, id: rec.id, name: rec.name } }),
  );
}
