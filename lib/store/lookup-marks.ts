import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { isLookupPartition, isOwnerMark, LOOKUP_PREFIXES, lookupTenant, ownerMark } from '../tenancy/lookups.js';
import { db, tableName } from './client.js';

/**
 * The one-off migration of a table written before the lookup items carried their owner marks
 * (lib/tenancy/lookups.ts, docs/deployment.md): `npm run -s operator:migrate-lookup-marks --
 * --table <table>`, with the operator's own credentials. Readers drop a lookup item that names
 * an account without its mark, so before it the existing API keys, tokens, devices, shares
 * and temp tokens would stop working: run it before deploying the release, and once more
 * after (items the old release wrote meanwhile). Safe to repeat.
 *
 * It marks only an item that names an account and carries NO mark (what the old release
 * wrote); an item with a mark, right or wrong, is left alone: a wrong mark is a forgery
 * (an account's session wrote an item naming another account) and stays refused.
 */
export async function markLookupItems(): Promise<{ scanned: number; marked: number; forged: number }> {
  const counts = { scanned: 0, marked: 0, forged: 0 };
  const names = Object.fromEntries(LOOKUP_PREFIXES.map((p, i) => [`:p${i}`, p]));
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: Object.keys(names)
          .map((v) => `begins_with(pk, ${v})`)
          .join(' OR '),
        ExpressionAttributeValues: names,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      if (!isLookupPartition(String(item.pk))) continue;
      counts.scanned++;
      const tenant = lookupTenant(item);
      if (tenant === undefined) continue;
      const marks = Object.keys(item).filter(isOwnerMark);
      if (marks.length > 0) {
        if (marks.length !== 1 || marks[0] !== ownerMark(tenant)) counts.forged++;
        continue;
      }
      const attribute = item.tenant_id === tenant ? 'tenant_id' : 'owner_tenant_id';
      try {
        await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET #mark = :true',
            // still the account it named when scanned, and still unmarked by it
            ConditionExpression: '#tenant = :tenant AND attribute_not_exists(#mark)',
            ExpressionAttributeNames: { '#mark': ownerMark(tenant), '#tenant': attribute },
            ExpressionAttributeValues: { ':true': true, ':tenant': tenant },
          }),
        );
        counts.marked++;
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return counts;
}
