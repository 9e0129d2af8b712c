import * as z from 'zod/v4';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { queryPages, type QuerySpec } from '../store/pagination.js';
import { entity } from '../store/entity.js';
import { keys, tenantPk } from '../store/keys.js';
import { transact, TxConditionFailed, type TxItem } from '../store/tx.js';
import { nowIso } from '../ids.js';
import { GENESIS, headMessage, linkHash, presentEntry, type ChainLink } from './canonical.js';
import { auditKey } from './signing-key.js';

/**
 * Tamper evidence for the audit trail: a hash chain per account, built off the request
 * path by a sealer.
 *
 * Why not chain inside commit()? A synchronous chain needs the previous hash before the
 * write: a read of a per-account head item, then a transaction conditional on it. Every
 * write of an account would then serialise on that one item (concurrent writers fail their
 * condition and retry), costing one extra read and one extra write per change and capping
 * an account's write rate at roughly one transaction round trip at a time. Instead commit()
 * writes the entry alone (no extra cost), and the sealer, which the entry's insert on the
 * table's stream triggers (lib/events/relay.ts) and which runs on demand before an export, links the account's new entries in one transaction per
 * batch of 99: `chain = {seq, prev, hash}` on each entry, and the head item
 * `T#<tid>/AUDITCHAIN` {seq, hash, last_id, signature}, conditional on the head's previous
 * seq, so concurrent sealers cannot fork the chain. The head is signed with the account's
 * Ed25519 audit key (lib/audit/signing-key.ts). The trade-off: an entry is unsealed for
 * the stream's delay (about a second: the mapping's batching window); an export seals first.
 *
 * Entries are chained in the order the sealer finds them, which is id (time) order except
 * for a transaction that lands after a later one was sealed: the sealer re-reads the last
 * LOOKBACK_MS before its newest sealed entry for such stragglers (commit latency is bounded
 * by the 29 s API timeout).
 */
export const LOOKBACK_MS = 60_000;
const BATCH = 99;

/** The UUIDv7 ids of the table start with their 48-bit millisecond time. */
export const idTime = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
/** The smallest id prefix at or after time `ms`: sorts before every id of that millisecond. */
export function idPrefixAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}
/** sk bounds of the audit entries with time in [from, to] (both inclusive, milliseconds). */
export const auditSkRange = (from: number | undefined, to: number | undefined) => ({
  lo: `${keys.auditPrefix}${from !== undefined ? idPrefixAt(from) : ''}`,
  hi: `${keys.auditPrefix}${to !== undefined ? idPrefixAt(to + 1) : '~'}`,
});

const ChainHeadItem = entity(
  'audit chain head',
  z.looseObject({ seq: z.number(), hash: z.string(), last_id: z.string(), signature: z.string(), sealed_at: z.string() }),
);

interface ChainHead {
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

async function unsealed(tenantId: string, head: ChainHead | undefined, since?: string): Promise<Record<string, unknown>[]> {
  const lookback = head ? `${keys.auditPrefix}${idPrefixAt(idTime(head.last_id) - LOOKBACK_MS)}` : keys.auditPrefix;
  const lo = since !== undefined && since < lookback ? since : lookback;
  const items: Record<string, unknown>[] = [];
  const spec: QuerySpec = {
    pk: tenantPk(tenantId),
    sk: { between: [lo, `${keys.auditPrefix}~`] },
    filter: { expression: 'attribute_not_exists(chain)' },
  };
  for await (const page of queryPages(spec)) {
    items.push(...page.items);
    if (items.length >= 10 * BATCH) break;
  }
  return items;
}

/**
 * Links every unsealed entry of the account into its chain. Returns how many entries were
 * sealed. Safe to run concurrently: a sealer that loses the head's condition re-reads.
 * `since` (an entry's sk) widens the search back to that entry: the stream's insert of an
 * entry older than the lookback (an audit entry the audit writer inserts late, after a
 * redelivery: lib/audit/queue.ts) is sealed when it arrives, not left out of the chain.
 */
export async function sealTenant(tenantId: string, since?: string): Promise<number> {
  let sealed = 0;
  for (let round = 0; round < 50; round++) {
    const head = await chainHead(tenantId);
    const pending = await unsealed(tenantId, head, since);
    if (pending.length === 0) return sealed;
    const batch = pending.slice(0, BATCH);
    let seq = head?.seq ?? 0;
    let prev = head?.hash ?? GENESIS;
    let lastId = head?.last_id ?? '';
    const items: TxItem[] = batch.map((item) => {
      seq += 1;
      const link: ChainLink = { seq, prev, hash: linkHash(seq, prev, presentEntry(item) as unknown as Record<string, unknown>) };
      prev = link.hash;
      if ((item.id as string) > lastId) lastId = item.id as string;
      // the entry joins the platform's AUDIT listing as it is sealed, under keys derived from
      // its own sort key (never from a value a tenant session wrote): no tenant-access role may
      // name the listing's attributes (lib/store/keys.ts, "Platform listings")
      const listing = keys.auditIndex((item.sk as string).slice(keys.auditPrefix.length));
      return {
        Update: {
          TableName: tableName(),
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET chain = :c, platpk = :lpk, platsk = :lsk',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(chain)',
          ExpressionAttributeValues: { ':c': link, ':lpk': listing.platpk, ':lsk': listing.platsk },
        },
      };
    });
    const key = await auditKey(tenantId);
    const next: ChainHead = { seq, hash: prev, last_id: lastId, signature: key.sign(headMessage(tenantId, seq, prev)), sealed_at: nowIso() };
    items.push(
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
        : { Put: { TableName: tableName(), Item: { ...keys.auditChain(tenantId), ...next }, ConditionExpression: 'attribute_not_exists(pk)' } },
    );
    try {
      await transact(items);
      sealed += batch.length;
    } catch (error) {
      if (!(error instanceof TxConditionFailed)) throw error;
      // another sealer moved the head or sealed one of these entries: read again
    }
  }
  return sealed;
}
