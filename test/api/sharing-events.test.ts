import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallContext } from '../../lib/auth/principal.js';
import { canary } from '../helpers/api.js';
import { useOwnConfig } from '../helpers/in-process.js';
import { findLeaks } from '../helpers/leaks.js';

/**
 * Every change of this capability is audited and emits its outbox event in the same
 * transaction. The local runtime's outbox relay deletes events from the suite's table as
 * soon as it has handled them, so this file runs the capability's services in-process
 * against a table of its own in the same DynamoDB Local (which no relay reads), and checks
 * the exact events and audit entries each change wrote — and that none carries a value or
 * a token.
 */
const table = `events-${randomBytes(4).toString('hex')}`;
const tenantId = `0190${randomBytes(4).toString('hex')}-0000-7000-8000-${randomBytes(6).toString('hex')}`;
let ctx: CallContext;
let restoreConfig: (() => void) | undefined;
let L: {
  ddb: typeof import('@aws-sdk/lib-dynamodb');
  db: ReturnType<typeof import('../../lib/store/client.js').db>;
  containers: typeof import('../../lib/containers/service.js');
  secrets: typeof import('../../lib/secrets/service.js');
  shares: typeof import('../../lib/sharing/share.js');
  temp: typeof import('../../lib/sharing/temp.js');
  history: typeof import('../../lib/sharing/history.js');
};

beforeAll(async () => {
  restoreConfig = useOwnConfig({ TABLE_NAME: table });
  const { ensureTable } = await import('../../scripts/local/dynamodb.js');
  await ensureTable(inject('dynamoEndpoint'), table);
  const [ddb, client, tenants, containers, secrets, shares, temp, history] = await Promise.all([
    import('@aws-sdk/lib-dynamodb'),
    import('../../lib/store/client.js'),
    import('../../lib/store/tenants.js'),
    import('../../lib/containers/service.js'),
    import('../../lib/secrets/service.js'),
    import('../../lib/sharing/share.js'),
    import('../../lib/sharing/temp.js'),
    import('../../lib/sharing/history.js'),
  ]);
  const db = client.db();
  const at = new Date().toISOString();
  const tenant = {
    id: tenantId,
    name: 'events',
    admin_email: 'owner@example.test',
    status: 'active' as const,
    operator: false,
    quota: tenants.DEFAULT_QUOTA,
    created_at: at,
    updated_at: at,
  };
  await db.send(new ddb.PutCommand({ TableName: table, Item: { pk: `T#${tenantId}`, sk: 'TENANT', ...tenant } }));
  ctx = {
    principal: { kind: 'api_key', tenantId, tenant, id: 'events-test', user: 'owner@example.test', scopes: ['admin:*'], operator: false },
    requestId: 'events-test',
    sourceIp: '127.0.0.1',
    userAgent: 'vitest',
  };
  L = { ddb, db, containers, secrets, shares, temp, history };
});

afterAll(async () => {
  restoreConfig?.();
  if (!L) return;
  const { DeleteTableCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  await new DynamoDBClient({
    endpoint: inject('dynamoEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }).send(new DeleteTableCommand({ TableName: table }));
});

async function items(prefix: string) {
  const out = await L.db.send(
    new L.ddb.QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':p': prefix },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

/** Runs one change and returns the events and audit actions it added. */
async function change<T>(run: () => Promise<T>): Promise<{ result: T; events: { type: string; data: Record<string, unknown> }[]; audits: string[] }> {
  const [e0, a0] = [(await items('OUTBOX#')).length, (await items('AUDIT#')).length];
  const result = await run();
  const events = (await items('OUTBOX#')).slice(e0).map((i) => ({ type: i.type as string, data: i.data as Record<string, unknown> }));
  const audits = (await items('AUDIT#')).slice(a0).map((i) => i.action as string);
  return { result, events, audits };
}

describe('every change of history, sharing, temporary access and containers: one audit entry, one event', () => {
  const values = [canary('ev1'), canary('ev2')];
  const tokens: string[] = [];

  it('containers: created, updated, deleted', async () => {
    const created = await change(() => L.containers.createContainer(ctx, { name: 'evc' }));
    expect(created.events).toEqual([{ type: 'container.created', data: { id: created.result.id, name: 'evc', version: 1 } }]);
    expect(created.audits).toEqual(['container.create']);
    const updated = await change(() => L.containers.updateContainer(ctx, created.result.id, { name: 'evc2' }));
    expect(updated.events).toEqual([{ type: 'container.updated', data: { id: created.result.id, name: 'evc2', version: 2 } }]);
    expect(updated.audits).toEqual(['container.update']);
    const deleted = await change(() => L.containers.deleteContainer(ctx, created.result.id));
    expect(deleted.events.map((e) => e.type)).toEqual(['container.deleted']);
    expect(deleted.audits).toEqual(['container.delete']);
  });

  it('history settings, shares and temporary access', async () => {
    const secret = await L.secrets.createSecret(ctx, { name: 'ev-secret', data: { value: values[0]! } });
    await L.secrets.updateSecret(ctx, 'ev-secret', { data: { value: values[1]! } });

    const settings = await change(() => L.history.putHistorySettings(ctx, 'secret', secret.id, 1));
    expect(settings.events).toEqual([
      {
        type: 'history.settings_changed',
        data: { type: 'secret', id: secret.id, keep_versions: 1, previous_keep_versions: 10, pruned_versions: [1] },
      },
    ]);
    expect(settings.audits).toEqual(['history.settings_update']);

    const shared = await change(() =>
      L.shares.createShare(ctx, 'secret', secret.id, { shared_with_email: 'friend@example.test', permission: 'read' }),
    );
    expect(shared.events).toEqual([
      {
        type: 'share.created',
        data: { share_id: shared.result.id, type: 'secret', resource_id: secret.id, shared_with_email: 'friend@example.test', permission: 'read' },
      },
    ]);
    expect(shared.audits).toEqual(['share.create']);
    const revoked = await change(() => L.shares.revokeShare(ctx, shared.result.id));
    expect(revoked.events.map((e) => e.type)).toEqual(['share.revoked']);
    expect(revoked.audits).toEqual(['share.revoke']);

    const granted = await change(() =>
      L.temp.createTempAccess(ctx, 'secret', secret.id, { duration_seconds: 60, single_use: false }, 'http://example.test'),
    );
    tokens.push(granted.result.token);
    expect(granted.events).toEqual([
      {
        type: 'temp_access.created',
        data: {
          grant_id: granted.result.grant.id,
          type: 'secret',
          resource_id: secret.id,
          expires_at: granted.result.grant.expires_at,
          single_use: false,
        },
      },
    ]);
    expect(granted.audits).toEqual(['temp_access.create']);
    const redeemed = await change(() => L.temp.redeemTempAccess(granted.result.token, { requestId: 'r', sourceIp: null, userAgent: null }));
    expect(redeemed.result.data).toEqual({ value: values[1] });
    expect(redeemed.events).toEqual([
      { type: 'temp_access.redeemed', data: { grant_id: granted.result.grant.id, type: 'secret', resource_id: secret.id, version: 2 } },
    ]);
    expect(redeemed.audits).toEqual(['temp_access.redeem']);
    const ended = await change(() => L.temp.revokeTempAccess(ctx, granted.result.grant.id));
    expect(ended.events.map((e) => e.type)).toEqual(['temp_access.revoked']);
    expect(ended.audits).toEqual(['temp_access.revoke']);
    // idempotent revocation: no second change
    const again = await change(() => L.temp.revokeTempAccess(ctx, granted.result.grant.id));
    expect(again.events).toEqual([]);
    expect(again.audits).toEqual([]);
  });

  it('no value or token in any item of that table (events and audit entries included)', async () => {
    const leaks = await findLeaks({ dynamoEndpoint: inject('dynamoEndpoint'), tableName: table, logText: '', extra: [...values, ...tokens] });
    expect(leaks).toEqual([]);
  });
});
