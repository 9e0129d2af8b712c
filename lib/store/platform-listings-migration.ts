import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { nowIso } from '../ids.js';
import { db, tableName } from './client.js';
import { keys, PLATFORM_LISTINGS } from './keys.js';

/**
 * The one-off migration of a table written before the platform listings had their own index
 * (lib/store/keys.ts, "Platform listings"; docs/deployment.md): `npm run -s
 * operator:migrate-platform-listings -- --table <table>`, with the operator's own credentials.
 *
 * Every item with a gsi1 key under a listing's name (`TENANTS#`, `EMAIL#`, `TOKENKEYS#`,
 * `AUDIT#`, `LEASES#`) gets its `plat` entry, derived from the item's OWN keys and state, the
 * way the release writes them, never copied from the gsi1 value: an account item, a user, a
 * token-signing key, an audit entry, an active lease (due at its expiry) or a failed or pending
 * one (due now). Any other item under a listing name was forged by a tenant session (the
 * hole this release closes) and gets no entry: it is counted as `forged`. The gsi1 keys are
 * left as they are: nothing reads a listing from gsi1 any more, so the previous release keeps
 * working while this runs. Run it before deploying the release (the listings are complete at
 * once) and once after (what the previous release wrote meanwhile). Safe to repeat: an item
 * already listed is skipped.
 */
export async function movePlatformListings(): Promise<{ scanned: number; listed: number; already: number; forged: number }> {
  const counts = { scanned: 0, listed: 0, already: 0, forged: 0 };
  const values = Object.fromEntries(PLATFORM_LISTINGS.map((name, i) => [`:l${i}`, `${name}#`]));
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: Object.keys(values)
          .map((v) => `begins_with(gsi1pk, ${v})`)
          .join(' OR '),
        ExpressionAttributeValues: values,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      counts.scanned++;
      const want = listingOf(item);
      if (!want) {
        counts.forged++;
        continue;
      }
      if (item.platpk === want.platpk && item.platsk === want.platsk) {
        counts.already++;
        continue;
      }
      try {
        await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET platpk = :lpk, platsk = :lsk',
            // still the item scanned (a lease may have been revoked meanwhile: then the relay lists it)
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(platpk) AND gsi1pk = :old',
            ExpressionAttributeValues: { ':lpk': want.platpk, ':lsk': want.platsk, ':old': item.gsi1pk },
          }),
        );
        counts.listed++;
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
        counts.already++;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return counts;
}

/** The item's listing entry from its own keys and state (undefined: it belongs to no listing). */
function listingOf(item: Record<string, unknown>): { platpk: string; platsk: string } | undefined {
  const pk = String(item.pk);
  const sk = String(item.sk);
  const listing = String(item.gsi1pk).split('#')[0];
  if (!pk.startsWith('T#')) return undefined;
  const tid = pk.slice(2);
  if (listing === 'TENANTS' && sk === keys.tenant(tid).sk && typeof item.created_at === 'string') return keys.tenantIndex(tid, item.created_at);
  if (listing === 'EMAIL' && sk.startsWith(keys.userPrefix)) return keys.userIndex(tid, sk.slice(keys.userPrefix.length));
  if (listing === 'TOKENKEYS' && sk.startsWith(keys.tokenKeyPrefix)) return keys.tokenKeyIndex(sk.slice(keys.tokenKeyPrefix.length));
  if (listing === 'AUDIT' && sk.startsWith(keys.auditPrefix)) return keys.auditIndex(sk.slice(keys.auditPrefix.length));
  const lease = keys.parseLease(pk, sk);
  if (listing === 'LEASES' && lease) {
    if (item.status === 'active' && typeof item.expires_at === 'string') return keys.leaseExpiryIndex(lease.tenantId, lease.id, item.expires_at);
    if (item.status === 'failed' || item.status === 'pending') return keys.leaseExpiryIndex(lease.tenantId, lease.id, nowIso());
  }
  return undefined;
}
