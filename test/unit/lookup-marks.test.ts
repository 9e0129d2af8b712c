import { describe, expect, it } from 'vitest';
import { keys } from '../../lib/store/keys.js';
import { lookupItemHolds, markLookupWrites, ownerMark, screenLookupReads } from '../../lib/tenancy/lookups.js';

/**
 * The owner marks of the lookup items (lib/tenancy/lookups.ts, issue 31): what lib/store/client.ts
 * applies to every write and read. IAM (infra/grants.ts `TenantLookupWrite`) lets a tenant
 * session write only its own mark; these are the halves the code owns.
 */
const A = 'tnt_a';
const B = 'tnt_b';
const auth = (tenant: string) => ({ ...keys.apiKeyAuth('h1'), tenant_id: tenant, key_id: 'k1', scopes: ['*'] });

describe('lookup owner marks', () => {
  it("a tenant client's Put of a lookup item carries its session's mark, whatever account the item names; other items stay as they are", () => {
    expect(markLookupWrites('PutItemCommand', { TableName: 't', Item: auth(A) }, A).Item).toEqual({ ...auth(A), [ownerMark(A)]: true });
    expect(markLookupWrites('PutItemCommand', { TableName: 't', Item: auth(B) }, A).Item).toEqual({ ...auth(B), [ownerMark(A)]: true });
    const own = { TableName: 't', Item: { ...keys.apiKey(A, 'k1'), name: 'x' } };
    expect(markLookupWrites('PutItemCommand', own, A)).toBe(own);
  });

  it('the service client marks a lookup item with the account it names, and leaves one naming none unmarked', () => {
    expect(markLookupWrites('PutItemCommand', { Item: auth(B) }, undefined).Item).toEqual({ ...auth(B), [ownerMark(B)]: true });
    const share = { ...keys.sharedWith('x@example.com', 'secret', 'r1'), owner_tenant_id: B };
    expect(markLookupWrites('PutItemCommand', { Item: share }, undefined).Item).toEqual({ ...share, [ownerMark(B)]: true });
    const pending = { Item: { ...keys.deviceAuthorization('c1'), status: 'pending' } };
    expect(markLookupWrites('PutItemCommand', pending, undefined)).toBe(pending);
  });

  it('an Update gets a SET of the mark (merged into its SET clause, or a new one), in transactions and batches too', () => {
    const set = markLookupWrites(
      'UpdateItemCommand',
      { Key: keys.apiTokenAuth('h'), UpdateExpression: 'SET valid_until = :u REMOVE x', ExpressionAttributeValues: { ':u': '1' } },
      A,
    );
    expect(set).toMatchObject({
      UpdateExpression: 'SET #owner_mark = :owner_mark, valid_until = :u REMOVE x',
      ExpressionAttributeNames: { '#owner_mark': ownerMark(A) },
      ExpressionAttributeValues: { ':u': '1', ':owner_mark': true },
    });
    expect(markLookupWrites('UpdateItemCommand', { Key: keys.apiTokenAuth('h'), UpdateExpression: 'ADD n :n' }, A).UpdateExpression).toBe(
      'SET #owner_mark = :owner_mark ADD n :n',
    );
    // the service client: the account the update assigns
    const approve = markLookupWrites(
      'UpdateItemCommand',
      { Key: keys.deviceAuthorization('c'), UpdateExpression: 'SET #s = :s, tenant_id = :t', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': 'approved', ':t': B } },
      undefined,
    );
    expect(approve.ExpressionAttributeNames['#owner_mark']).toBe(ownerMark(B));
    const untouched = { Key: keys.deviceAuthorization('c'), UpdateExpression: 'SET polled_at = :p' };
    expect(markLookupWrites('UpdateItemCommand', untouched, undefined)).toBe(untouched);
    const tx = markLookupWrites('TransactWriteItemsCommand', { TransactItems: [{ Put: { Item: auth(A) } }, { Delete: { Key: keys.apiKeyAuth('h') } }] }, A);
    expect(tx.TransactItems[0].Put.Item[ownerMark(A)]).toBe(true);
    expect(tx.TransactItems[1]).toEqual({ Delete: { Key: keys.apiKeyAuth('h') } });
    const batch = markLookupWrites('BatchWriteItemCommand', { RequestItems: { t: [{ PutRequest: { Item: auth(A) } }] } }, A);
    expect(batch.RequestItems.t[0].PutRequest.Item[ownerMark(A)]).toBe(true);
  });

  it('a read trusts a lookup item only when its marks are exactly the mark of the account it names', () => {
    expect(lookupItemHolds({ ...auth(A), [ownerMark(A)]: true })).toBe(true);
    expect(lookupItemHolds({ ...auth(B), [ownerMark(A)]: true }), 'written by A, naming B').toBe(false);
    expect(lookupItemHolds({ ...auth(B), [ownerMark(B)]: true, [ownerMark(A)]: true }), "B's item updated by A").toBe(false);
    expect(lookupItemHolds(auth(A)), 'unmarked (before the migration, or its mark removed)').toBe(false);
    expect(lookupItemHolds({ ...keys.deviceAuthorization('c'), status: 'pending' }), 'naming no account').toBe(true);
  });

  it('reads drop forged lookup items and return the others without their marks', () => {
    const get = { Item: { ...auth(B), [ownerMark(A)]: true } };
    screenLookupReads('GetItemCommand', get);
    expect(get.Item).toBeUndefined();
    const good = { Item: { ...auth(A), [ownerMark(A)]: true } };
    screenLookupReads('GetItemCommand', good);
    expect(good.Item).toEqual(auth(A));
    const own = { ...keys.apiKey(A, 'k'), 'T#x': 1 };
    const query = { Items: [{ ...auth(A), [ownerMark(A)]: true }, { ...auth(B), [ownerMark(A)]: true }, own] };
    screenLookupReads('QueryCommand', query);
    expect(query.Items).toEqual([auth(A), own]);
    const batch = { Responses: { t: [{ ...auth(B) }, { ...auth(B), [ownerMark(B)]: true }] } };
    screenLookupReads('BatchGetItemCommand', batch);
    expect(batch.Responses.t).toEqual([auth(B)]);
    const tx = { Responses: [{ Item: { ...auth(B) } }, { Item: { ...auth(A), [ownerMark(A)]: true } }] };
    screenLookupReads('TransactGetItemsCommand', tx);
    expect(tx.Responses).toEqual([{ Item: undefined }, { Item: auth(A) }]);
  });
});

describe('lookup owner marks in write results', () => {
  it('the attributes a write returns (ReturnValues) come without marks', () => {
    const out = { Attributes: { ...auth(A), [ownerMark(A)]: true } };
    screenLookupReads('UpdateItemCommand', out);
    expect(out.Attributes).toEqual(auth(A));
    const other = { Attributes: { ...keys.apiKey(A, 'k'), 'T#x': 1 } };
    screenLookupReads('PutItemCommand', other);
    expect(other.Attributes).toEqual({ ...keys.apiKey(A, 'k'), 'T#x': 1 });
  });
});
