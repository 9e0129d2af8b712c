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
] as const;

export const isLookupPartition = (pk: string): boolean => LOOKUP_PREFIXES.some((p) => pk.startsWith(p));
