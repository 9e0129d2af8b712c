/**
 * The global lookup partitions (lib/store/keys.ts) a tenant route writes or reads beside its
 * account's items: items addressed by a credential's hash, a device id, a recipient's e-mail
 * or a one-time challenge, which name their account inside and are written in the same
 * transaction as the account's items (an API key and its auth item, a share and its
 * recipient item). They are not the account's data and cannot be found without the secret
 * or address they are keyed by; the tenant-access role reaches them by these prefixes
 * (infra/grants.ts `TenantLookups`), never another account's `T#` partition.
 */
export const LOOKUP_PREFIXES = [
  'KEY#',
  'APITOKEN#',
  'DEVICE#',
  'DEVAUTHZ#',
  'USERCODE#',
  'ENROLL#',
  'SHAREDWITH#',
  'TEMPTOKEN#',
  'DOCGRANTEE#',
  'REFRESH#',
  'WACHAL#',
  'ACME#',
  'CLILOGIN#',
  'CLICODE#',
  'SRPCHAL#',
  'PWRESET#',
  'OAUTHCODE#',
  'OIDCSTATE#',
  'OAUTHTICKET#',
] as const;

export const isLookupPartition = (pk: string): boolean => LOOKUP_PREFIXES.some((p) => pk.startsWith(p));

/**
 * The owner mark of a lookup item (issue 31). A lookup item names the account it belongs to
 * inside (`tenant_id`, or `owner_tenant_id` for a share or document grant), a VALUE IAM never
 * sees: a tenant session allowed to write `KEY#*` could write a `KEY#<hash>` item naming
 * another account and authenticate as it. So every lookup item also carries an attribute
 * whose NAME is its owner's mark, `T#<tid>` (value true): infra/grants.ts
 * `TenantLookupWrite` lets a tenant session Put/Update a lookup item only naming its own mark
 * (`T#${aws:PrincipalTag/tenant_id}`) and no other `T#` name, and every reader drops an item
 * whose marks are not exactly the mark of the account it names (`lookupItemHolds`): an item
 * written by account A that names account B carries `T#A` and is dropped.
 *
 * lib/store/client.ts applies both halves to every document client, so no repository has to
 * remember them: a write of a lookup item gets the mark (a tenant client: its session's
 * tenant, as IAM requires; the service client: the account the item names), and a read of
 * lookup items returns only items whose mark holds, without the mark attributes.
 *
 * Unmarked items that name an account are dropped too: IAM cannot stop a tenant session from
 * REMOVE-ing its own mark from an item it wrote naming another account, so "unmarked" cannot
 * mean "trusted". Items written before this release get their marks from
 * `npm run -s operator:migrate-lookup-marks -- --table <table>` (scripts/operator,
 * docs/deployment.md): run it before the deploy and once more after it.
 */
export const ownerMark = (tenantId: string): string => `T#${tenantId}`;
export const isOwnerMark = (attribute: string): boolean => attribute.startsWith('T#');
/** The attributes a lookup item names its account with (the first one present counts). */
const LOOKUP_TENANT_ATTRIBUTES = ['tenant_id', 'owner_tenant_id'] as const;

/** The account a lookup item names, if any. */
export function lookupTenant(item: Record<string, unknown>): string | undefined {
  for (const a of LOOKUP_TENANT_ATTRIBUTES) if (typeof item[a] === 'string' && item[a] !== '') return item[a] as string;
  return undefined;
}

/**
 * Whether a lookup item read from the table may be trusted: one naming an account carries
 * exactly that account's mark (no other mark: another account's session that updated it
 * added its own); one naming none (a pending device authorization, a challenge) names nothing
 * to take over. An item read with a projection that leaves out the tenant attributes names none.
 */
export function lookupItemHolds(item: Record<string, unknown>): boolean {
  const tenant = lookupTenant(item);
  if (tenant === undefined) return true;
  const marks = Object.keys(item).filter(isOwnerMark);
  return marks.length === 1 && marks[0] === ownerMark(tenant);
}

const withoutMarks = (item: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(item).filter(([k]) => !isOwnerMark(k)));

const isLookupItem = (item: unknown): item is Record<string, unknown> =>
  typeof item === 'object' && item !== null && typeof (item as { pk?: unknown }).pk === 'string' && isLookupPartition((item as { pk: string }).pk);

/** A read's items, forged lookup items dropped and the marks of the others removed (the callers never see a mark). */
function screen(items: unknown[]): unknown[] {
  return items.filter((i) => !isLookupItem(i) || lookupItemHolds(i)).map((i) => (isLookupItem(i) ? withoutMarks(i) : i));
}

/**
 * Applies `screen` to the output of a GetItem, Query, BatchGetItem or TransactGetItems
 * (document client shapes). Not to a Scan: no route scans; the one Scan is the operator's
 * migration (lib/store/lookup-marks.ts), which must see the unmarked items to mark them.
 */
export function screenLookupReads(command: string, output: Record<string, any> | undefined): void {
  if (!output) return;
  if (command === 'GetItemCommand' && output.Item) output.Item = screen([output.Item])[0];
  else if (command === 'QueryCommand' && Array.isArray(output.Items)) output.Items = screen(output.Items);
  else if (command === 'BatchGetItemCommand' && output.Responses)
    for (const table of Object.keys(output.Responses)) output.Responses[table] = screen(output.Responses[table]);
  else if (['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand'].includes(command) && isLookupItem(output.Attributes))
    // ReturnValues of a write: the marks are not the caller's business either
    output.Attributes = withoutMarks(output.Attributes);
  else if (command === 'TransactGetItemsCommand' && Array.isArray(output.Responses))
    output.Responses = output.Responses.map((r: { Item?: unknown }) => (r?.Item ? { ...r, Item: screen([r.Item])[0] } : r));
}

const MARK_NAME = '#owner_mark';
const MARK_VALUE = ':owner_mark';

/** The account an UpdateItem assigns (`SET tenant_id = :v`), if any. */
function assignedTenant(update: Record<string, any>): string | undefined {
  const names = (update.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (update.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const m of String(update.UpdateExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if ((LOOKUP_TENANT_ATTRIBUTES as readonly string[]).includes(name ?? '') && typeof values[m[2]!] === 'string') return values[m[2]!] as string;
  }
  return undefined;
}

function markPut(put: Record<string, any>, session: string | undefined): Record<string, any> {
  const item = put.Item as Record<string, unknown> | undefined;
  if (!isLookupItem(item)) return put;
  const owner = session ?? lookupTenant(item);
  return owner === undefined ? put : { ...put, Item: { ...item, [ownerMark(owner)]: true } };
}

function markUpdate(update: Record<string, any>, session: string | undefined): Record<string, any> {
  if (!isLookupItem(update.Key)) return update;
  const owner = session ?? assignedTenant(update);
  if (owner === undefined) return update;
  const clause = `${MARK_NAME} = ${MARK_VALUE}`;
  const expression = String(update.UpdateExpression ?? '');
  const set = /\bSET\s+/i.exec(expression);
  return {
    ...update,
    UpdateExpression: set
      ? `${expression.slice(0, set.index + set[0].length)}${clause}, ${expression.slice(set.index + set[0].length)}`
      : `SET ${clause}${expression ? ` ${expression}` : ''}`,
    ExpressionAttributeNames: { ...(update.ExpressionAttributeNames ?? {}), [MARK_NAME]: ownerMark(owner) },
    ExpressionAttributeValues: { ...(update.ExpressionAttributeValues ?? {}), [MARK_VALUE]: true },
  };
}

/**
 * The input of a write with the owner mark on every lookup item it puts or updates: `session`
 * the tenant of a tenant client (IAM requires its mark), undefined for the service client (the
 * account the item names, if any). Other inputs are returned as they are.
 */
export function markLookupWrites(command: string, input: Record<string, any>, session: string | undefined): Record<string, any> {
  switch (command) {
    case 'PutItemCommand':
      return markPut(input, session);
    case 'UpdateItemCommand':
      return markUpdate(input, session);
    case 'TransactWriteItemsCommand':
      return {
        ...input,
        TransactItems: (input.TransactItems as Record<string, any>[]).map((t) =>
          t.Put ? { ...t, Put: markPut(t.Put, session) } : t.Update ? { ...t, Update: markUpdate(t.Update, session) } : t,
        ),
      };
    case 'BatchWriteItemCommand':
      return {
        ...input,
        RequestItems: Object.fromEntries(
          Object.entries(input.RequestItems as Record<string, Record<string, any>[]>).map(([table, writes]) => [
            table,
            writes.map((w) => (w.PutRequest ? { ...w, PutRequest: markPut(w.PutRequest, session) } : w)),
          ]),
        ),
      };
    default:
      return input;
  }
}
