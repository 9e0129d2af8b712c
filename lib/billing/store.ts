import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { db, tableName } from '../store/client.js';
import { entity } from '../store/entity.js';
import { keys } from '../store/keys.js';

/**
 * The billing feature's store module (the one place its DynamoDB commands are built): an account's billing item
 * `BILLING` and the marks of the provider events applied (`BILLEVENT#<provider>#<id>`).
 * Keys come from lib/store/keys.ts.
 */

const BillingItem = entity(
  'billing',
  z.object({
    provider: z.enum(['stripe', 'local']),
    plan: z.string().nullable().default(null),
    subscription_id: z.string().nullable().default(null),
    customer_id: z.string().nullable().default(null),
    subscription_status: z.string().nullable().default(null),
    state_at: z.number().default(0),
    checkout: z.object({ session_id: z.string(), plan: z.string(), created_at: z.string() }).nullable().default(null),
    /** True while the account is suspended because of this subscription (not by an operator). */
    billing_suspended: z.boolean().default(false),
    updated_at: z.string(),
  }),
);
export type Billing = ReturnType<typeof BillingItem.parse>;

export async function getBilling(tenantId: string): Promise<Billing | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.billing(tenantId), ConsistentRead: true }));
  return out.Item ? BillingItem.parse(out.Item) : undefined;
}

/** Whether the provider's event was applied already (its mark exists). */
export async function billingEventSeen(tenantId: string, providerName: string, eventId: string): Promise<boolean> {
  const seen = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.billingEvent(tenantId, providerName, eventId),
      ConsistentRead: true,
      ProjectionExpression: 'pk',
    }),
  );
  return seen.Item !== undefined;
}
