import { nowIso } from '../ids.js';
import { keys } from '../store/keys.js';
import { withTenant } from '../tenancy/scope.js';
import { readLeaseListing, touchLease, writeListing } from './store.js';

/**
 * The platform listings the stream relay derives from the listed items themselves
 * (lib/store/keys.ts, "Platform listings"). A tenant session writes a lease or an audit entry
 * but may not name the listing's attributes (`platpk`, `platsk`: infra/grants.ts), because IAM
 * sees attribute names, never values: a session able to write a `LEASES#` key could list any of
 * its items as due and starve the sweeper. The relay, which acts for no single account, reads
 * what it needs of the item in the item's tenant session (lib/tenancy/scope.ts `withTenant`)
 * and writes the two listing keys, and nothing else, on its own role (lib/events/store.ts
 * `writeListing`, the one write IAM leaves it: infra/grants/table.ts `platformListingWrite`).
 *
 * LEASES, on each lease insert or change (lib/events/relay.ts OUTBOX_STREAM):
 * - `active`: due at its `expires_at`;
 * - `failed` or `pending` (an issuance whose login may exist): due now, unless already due;
 * - anything else (revoked, gone): no entry.
 * Its own update is a change of the lease too: that record finds the entry right and writes
 * nothing. A change made between the read and the write has a stream record of its own, after
 * this one on the same shard (one key's records are relayed in order, never in parallel), whose
 * read sees it: the last record of a lease sets the entry from the lease as it is.
 */
export async function listLease(key: { pk: string; sk: string }, now: string = nowIso()): Promise<'listed' | 'unlisted' | 'unchanged'> {
  const lease = keys.parseLease(key.pk, key.sk);
  if (!lease) return 'unchanged';
  const item = await withTenant(lease.tenantId, () => readLeaseListing(key));
  if (!item) return 'unchanged';
  const status = String(item.status ?? '');
  const current = typeof item.platsk === 'string' ? item.platsk : undefined;
  let want: { platpk: string; platsk: string } | undefined;
  if (status === 'active' && typeof item.expires_at === 'string') want = keys.leaseExpiryIndex(lease.tenantId, lease.id, item.expires_at);
  else if (status === 'failed' || status === 'pending') {
    const due = keys.leaseExpiryIndex(lease.tenantId, lease.id, now);
    want = current !== undefined && current <= due.platsk && item.platpk === due.platpk ? { platpk: due.platpk, platsk: current } : due;
  }
  if (want ? item.platpk === want.platpk && current === want.platsk : item.platpk === undefined && current === undefined) return 'unchanged';
  if (!(await writeListing(key, want))) return 'unchanged'; // the lease is gone
  return want ? 'listed' : 'unlisted';
}

/**
 * AUDIT, on each audit entry's insert: the entry is listed under keys derived from its own sort
 * key (its id), never from a value a tenant session wrote. Whoever inserted or sealed it (the
 * request, the audit writer, the sealer, an export's seal): every entry's insert reaches the
 * relay. False when the entry is gone.
 */
export function listAuditEntry(key: { pk: string; sk: string }): Promise<boolean> {
  if (!key.pk.startsWith('T#') || !key.sk.startsWith(keys.auditPrefix)) return Promise.resolve(false);
  return writeListing(key, keys.auditIndex(key.sk.slice(keys.auditPrefix.length)));
}

/**
 * TOKENKEYS, on each token-signing key's insert: a key put in a tenant session (a sign-in route
 * acting for the account, lib/auth/jwt.ts) carries no listing; it is listed under keys derived
 * from its own sort key (its kid), never from a value a session wrote, so the authorization
 * server's set (lib/auth/jwt.ts serviceKeySet) holds it. False when the key is gone.
 */
export function listTokenKey(key: { pk: string; sk: string }): Promise<boolean> {
  if (!key.pk.startsWith('T#') || !key.sk.startsWith(keys.tokenKeyPrefix)) return Promise.resolve(false);
  return writeListing(key, keys.tokenKeyIndex(key.sk.slice(keys.tokenKeyPrefix.length)));
}

/**
 * A LEASES entry the sweeper found stale (the lease is neither active nor abandoned: the
 * relay's unlisting not arrived yet, or an entry the listing migration copied just before a
 * revocation). The sweeper works in the lease's tenant session, which may not name `platpk` or
 * `platsk`, so it does not fix the entry itself: it touches the lease (lib/events/store.ts
 * `touchLease`), and the relay, on that change's stream record, sets the entry from the lease
 * (`listLease`, above). False when the lease changed meanwhile or is gone.
 */
export function requestListing(key: { pk: string; sk: string }, status: string, now: string = nowIso()): Promise<boolean> {
  return touchLease(key, status, now);
}
