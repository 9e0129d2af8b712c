import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { db, tableName } from '../store/client.js';
import { entity } from '../store/entity.js';
import { keys } from '../store/keys.js';
import type { TxItem } from '../store/tx.js';

/**
 * The audit feature's store module (the one place its DynamoDB commands are built): the
 * entries (`T#<tid>` / `AUDIT#<id>`, listed by keys.auditIndex by the stream relay), the chain head
 * (`AUDITCHAIN`) and the links the sealer sets, and each account's audit signing key.
 * Keys come from lib/store/keys.ts.
 */

/** An audit entry's put (a transaction item): `entry` after its keys, never overwriting an entry. */
export const auditItem = (tenantId: string, id: string, entry: Record<string, unknown>): NonNullable<TxItem['Put']> => ({
  TableName: tableName(),
  Item: {
    // no platform-listing keys: the stream relay adds the AUDIT listing's (lib/events/platform-listings.ts)
    ...keys.audit(tenantId, id),
    ...entry,
  },
  ConditionExpression: 'attribute_not_exists(pk)',
});

/** Writes an audit entry's put on its own (outside a transaction). */
export async function putAuditEntry(item: TxItem): Promise<void> {
  await db().send(new PutCommand(item.Put! as PutCommandInput));
}

// --- the chain (lib/audit/chain.ts)

const ChainHeadItem = entity(
  'audit chain head',
  z.looseObject({ seq: z.number(), hash: z.string(), last_id: z.string(), signature: z.string(), sealed_at: z.string() }),
);

export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
  readonly last_id: string;
  readonly signature: string;
  readonly sealed_at: string;
}

export async function chainHead(tenantId: string): Promise<ChainHead | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.auditChain(tenantId), ConsistentRead: true }));
  return out.Item ? ChainHeadItem.parse(out.Item) : undefined;
}

/**
 * Links an unsealed entry into the chain (a transaction item), conditional on it being unsealed
 * still. The chain only: every sealer works in the entry's tenant session, which may not name
 * the platform listings' attributes; the stream relay lists the entry in the AUDIT listing from
 * its own sort key (lib/events/platform-listings.ts `listAuditEntry`).
 */
export const linkUpdate = (key: { pk: string; sk: string }, link: unknown): TxItem => ({
  Update: {
    TableName: tableName(),
    Key: { pk: key.pk, sk: key.sk },
    UpdateExpression: 'SET chain = :c',
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(chain)',
    ExpressionAttributeValues: { ':c': link },
  },
});

/** Moves the chain head to `next` (a transaction item): conditional on the head read (`head`), or on there being none. */
export const headWrite = (tenantId: string, next: ChainHead, head: ChainHead | undefined): TxItem =>
  head
    ? {
        Update: {
          TableName: tableName(),
          Key: keys.auditChain(tenantId),
          UpdateExpression: 'SET seq = :seq, #h = :hash, last_id = :last, signature = :sig, sealed_at = :at',
          ConditionExpression: 'seq = :prev',
          ExpressionAttributeNames: { '#h': 'hash' },
          ExpressionAttributeValues: {
            ':seq': next.seq,
            ':hash': next.hash,
            ':last': next.last_id,
            ':sig': next.signature,
            ':at': next.sealed_at,
            ':prev': head.seq,
          },
        },
      }
    : { Put: { TableName: tableName(), Item: { ...keys.auditChain(tenantId), ...next }, ConditionExpression: 'attribute_not_exists(pk)' } };

// --- the audit signing key (lib/audit/signing-key.ts)

export const readAuditKey = async (tenantId: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.auditKey(tenantId), ConsistentRead: true }))).Item;

/** Writes an account's audit key unless one exists already (a concurrent first use wrote it: the caller reads it back). */
export async function putAuditKeyOnce(tenantId: string, publicJwk: object, sealedPrivate: Uint8Array, createdAt: string): Promise<void> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.auditKey(tenantId), public_key: publicJwk, private_key: sealedPrivate, created_at: createdAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
