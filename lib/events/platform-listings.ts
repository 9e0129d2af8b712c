import { nowIso } from '../ids.js';
import { keys } from '../store/keys.js';
import { readLeaseListing, touchLease, writeLeaseListing } from './store.js';

/**
 * The LEASES platform listing, derived from the lease items themselves (lib/store/keys.ts,
 * "Platform listings"). A tenant session writes a lease (issue, compensate, revoke) but may
 * not name the listing's attributes (`platpk`, `platsk`: infra/grants.ts), because IAM sees
 * attribute names, never values: a session able to write a `LEASES#` key could list any of its
 * items as due and starve the sweeper. The stream relay, which acts for no single account,
 * reads each lease insert or change (lib/events/relay.ts OUTBOX_STREAM) and sets the entry from
 * the item's own keys and status:
 * - `active`: due at its `expires_at`;
 * - `failed` or `pending` (an issuance whose login may exist): due now, unless already due;
 * - anything else (revoked, gone): no entry.
 * Its own update is a change of the lease too: that record finds the entry right and writes
 * nothing. Each write is conditional on the status it read, so a later change wins.
 */
export async function listLease(key: { pk: string; sk: string }, now: string = nowIso()): Promise<'listed' | 'unlisted' | 'unchanged'> {
  const lease = keys.parseLease(key.pk, key.sk);
  if (!lease) return 'unchanged';
  const item = await readLeaseListing(key);
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
  if (!(await writeLeaseListing(key, status, want))) return 'unchanged'; // the lease changed meanwhile: its own stream record lists it
  return want ? 'listed' : 'unlisted';
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
