/**
 * The key design of the single table, declared once (docs/architecture.md, "Data access"). Every key a
 * repository writes comes from here; every tenant-owned key starts with `T#<tenant>`, except the
 * account's metering items (usage per day, rate-limit buckets), which have a partition of their
 * own, `METER#<tenant>` (`meterPk`): the limiter writes it on every request, read-only routes
 * included, and IAM can confine a write to a partition, not to some items of one
 * (infra/grants.ts `TenantMeter`).
 *
 * | item                | pk                 | sk                              | gsi1pk / gsi1sk                 |
 * |---------------------|--------------------|---------------------------------|---------------------------------|
 * | tenant              | T#<tid>            | TENANT                          | plat: TENANTS#<n> / <created>#<tid> |
 * | counters (quota)    | T#<tid>            | COUNTERS                        |                                 |
 * | usage per day       | METER#<tid>        | USAGE#<yyyy-mm-dd>[#<shard>]    |                                 |
 * | user                | T#<tid>            | USER#<email>                    | plat: EMAIL#<email> / T#<tid>   |
 * | API key (metadata)  | T#<tid>            | APIKEY#<kid>                    |                                 |
 * | API key (auth)      | KEY#<sha256(key)>  | KEY                             |                                 |
 * | API token (auth)    | APITOKEN#<sha256>  | APITOKEN                        |                                 |
 * | YubiKey OTP counter | T#<tid>            | OTPCTR#<yubikey id>             |                                 |
 * | agent profile       | T#<tid>            | AGENTPROFILE#<id>               |                                 |
 * | agent device        | T#<tid>            | AGENTDEVICE#<id>                |                                 |
 * | device (auth)       | DEVICE#<id>        | DEVICE                          |                                 |
 * | request nonce       | NONCE#<dev>#<nonce>| NONCE (ttl)                     |                                 |
 * | tenant STS session  | TSESSION#<role>#<tid> | SESSION (ttl; sealed)        |                                 |
 * | device authz (8628) | DEVAUTHZ#<sha256>  | DEVAUTHZ (ttl)                  |                                 |
 * | user code (8628)    | USERCODE#<sha256>  | USERCODE (ttl)                  |                                 |
 * | enrolment token     | ENROLL#<sha256>    | ENROLL (ttl)                    |                                 |
 * | data key            | T#<tid>            | DEK#CURRENT                     |                                 |
 * | token-signing key   | T#<tid>            | TOKENKEY#<kid>                  | plat: TOKENKEYS#<n> / <kid>     |
 * | secret (head)       | T#<tid>            | SECRET#<name>                   | T#<tid> / RES#<id>              |
 * | resource (head)     | T#<tid>            | R#<type>#<id>                   | T#<tid> / RES#<id>              |
 * | resource version    | T#<tid>            | V#<type>#<id>#<n, 10 digits>    |                                 |
 * | idempotency record  | T#<tid>            | IDEM#<sha256(principal + key)>  |                                 |
 * | audit entry         | T#<tid>            | AUDIT#<uuidv7>                  | plat: AUDIT#<n> / <uuidv7> (set by the sealer) |
 * | outbox event        | T#<tid>            | OUTBOX#<uuidv7>                 | (none: the stream relays it)    |
 * | audit chain head    | T#<tid>            | AUDITCHAIN                      |                                 |
 * | audit signing key   | T#<tid>            | AUDITKEY                        |                                 |
 * | webhook             | T#<tid>            | WEBHOOK#<id>                    |                                 |
 * | webhook delivery    | T#<tid>            | WHDLV#<webhook id>#<event id>   |                                 |
 * | rate limit per IP   | IP#<source ip>     | RATE                            |                                 |
 * | operator mark       | SYS                | OPERATOR                        |                                 |
 * | share               | T#<tid>            | SHARE#<type>#<res id>#<share id>|                                 |
 * | share by id         | T#<tid>            | SHAREID#<share id>              |                                 |
 * | share by recipient  | SHAREDWITH#<email> | <type>#<res id>                 |                                 |
 * | temp access grant   | T#<tid>            | TEMPACCESS#<type>#<res id>#<gid>|                                 |
 * | temp grant by id    | T#<tid>            | TEMPID#<grant id>               |                                 |
 * | temp token (auth)   | TEMPTOKEN#<sha256> | TOKEN                           |                                 |
 * | container name      | T#<tid>            | CNAME#<name>                    |                                 |
 * | container member    | T#<tid>            | CMEMBER#<container id>#<name>   |                                 |
 * | container count     | T#<tid>            | CCOUNT#<container id>           |                                 |
 * | cert revocation     | T#<tid>            | CRL#<ca id>#<serial hex>        |                                 |
 * | ACME challenge      | ACME#<token>       | ACME (ttl)                      |                                 |
 * | database lease      | T#<tid>            | LEASE#<lease id> (ttl)          | plat: LEASES#<n> / <expires_at>#<tid>#<id> (set by the relay; dropped by the sweeper) |
 * | rotation lock       | T#<tid>            | DBLOCK#<connection id> (ttl)    |                                 |
 * | extraction job      | T#<tid>            | XJOB#<job id> (ttl)             |                                 |
 * | variable            | T#<tid>            | VAR#<name>                      |                                 |
 * | OIDC client         | T#<tid>            | OIDCCLIENT#<id>                 |                                 |
 * | JWK set             | T#<tid>            | JWKS#<id>                       |                                 |
 * | JWK set issuer      | T#<tid>            | JWKSISS#<sha256(issuer)>        |                                 |
 * | OIDC token          | T#<tid>            | OIDCTOKEN#<id>                  |                                 |
 * | SAML metadata       | T#<tid>            | SAMLMETA#<id>                   |                                 |
 * | SAML entity name    | T#<tid>            | SAMLENTITY#<sha256(entityID)>   |                                 |
 * | SAML assertion      | T#<tid>            | SAMLASSERT#<id>                 |                                 |
 * | SAML cert notice    | T#<tid>            | SAMLCERTNOTE#<meta>#<sha256>#<days> (ttl) |                       |
 * | SAML replay mark    | T#<tid>            | SAMLREPLAY#<sha256(iss, id)>(ttl)|                                |
 * | S/KEY sequence      | T#<tid>            | SKEY#<id>                       |                                 |
 * | time-lock           | T#<tid>            | TIMELOCK#<id>                   |                                 |
 * | billing state       | T#<tid>            | BILLING                         |                                 |
 * | billing event mark  | T#<tid>            | BILLEVT#<provider>#<event id> (ttl) |                             |
 * | document            | T#<tid>            | DOC#<id>                        |                                 |
 * | document grant      | T#<tid>            | DOCGRANT#<doc id>#<grant id>    |                                 |
 * | document upload     | T#<tid>            | DOCUPLOAD#<id>                  |                                 |
 * | grant by grantee    | DOCGRANTEE#<email> | <doc id> (ttl)                  |                                 |
 * | sign-in session     | T#<tid>            | SESSION#<sid> (ttl)             |                                 |
 * | refresh token (auth)| REFRESH#<sha256>   | REFRESH (ttl)                   |                                 |
 * | CLI login (RFC 8628)| CLILOGIN#<sha256(device code)> | CLILOGIN (ttl)      |                                 |
 * | CLI login user code | CLICODE#<sha256(user code)> | CLICODE (ttl)          |                                 |
 * | password reset token| PWRESET#<sha256>   | PWRESET (ttl)                   |                                 |
 * | SRP challenge       | SRPCHAL#<id>       | SRPCHAL (ttl)                   |                                 |
 * | SSO configuration   | T#<tid>            | SSO                             |                                 |
 * | OIDC login state    | OIDCSTATE#<sha256> | OIDCSTATE (ttl)                 |                                 |
 * | passkey             | T#<tid>            | PASSKEY#<credential id>         |                                 |
 * | WebAuthn challenge  | WACHAL#<id>        | WACHAL (ttl)                    |                                 |
 * | OAuth code          | OAUTHCODE#<sha256> | OAUTHCODE (ttl)                 |                                 |
 * | OAuth consent ticket| OAUTHTICKET#<sha256>| OAUTHTICKET (ttl)              |                                 |
 * | OAuth consent       | T#<tid>            | OAUTHCONSENT#<client>#<user>    |                                 |
 * | JWT replay mark     | T#<tid>            | JTI#<sha256(iss, jti)> (ttl)    |                                 |
 *
 * Every versioned resource type (typed credentials, keys, certificates, ...) has a head
 * `R#<type>#<id>` and versions `V#<type>#<id>#<n>` (lib/resources/store.ts). The generic
 * secret's head is keyed by name instead, so a read by name is one GetItem (the hot path);
 * its versions use the same `V#secret#<id>#<n>` form, keyed by the immutable id so a
 * deleted-and-recreated name never mixes histories. Every head carries `RES#<id>` in gsi1,
 * so any resource is found by id within its tenant. The API key auth item is the one global lookup: a request carries only the
 * key, so its hash is the key; it holds the tenant id and everything authentication needs.
 * The other global lookups follow the same rule: a temporary-access token item is keyed by the
 * token's hash (the redemption request carries only the token), and a share's recipient item
 * by the recipient's e-mail (a recipient in any account finds what was shared with them);
 * both hold the owner's tenant id and are written in the same transaction as the owner's items.
 *
 * Platform listings (TENANTS, EMAIL, TOKENKEYS, AUDIT, LEASES) live in an index of their own,
 * `plat` (`platpk` / `platsk`, KEYS_ONLY), never in gsi1: IAM sees attribute names, not values,
 * so a listing sharing gsi1 with the account-local `RES#` entries could be forged by any tenant
 * session (a `LEASES#` entry on an own item starved the sweeper). No tenant-access role may name
 * `platpk` or `platsk` (PLATFORM_LISTING_ATTRIBUTES, infra/grants.ts); the roles that act for
 * no single account write them (sign-up, sign-in), and the listings of what tenant sessions
 * write are derived from the items' own keys by the stream relay (audit entries, as it seals
 * them; leases, at their insert: lib/events/platform-listings.ts).
 *
 * Hot keys (docs/capacity.md): the platform-wide listings (AUDIT, TENANTS, LEASES, TOKENKEYS) are
 * spread over GSI_SHARDS partition keys `<NAME>#<n>`, n a hash of the item's own id (so any
 * writer recomputes it), and every reader merges the shards in sort-key order
 * (lib/store/shards.ts). The usage item of a day is split into `USAGE#<day>#<n>` shards
 * when an account's rate needs it (lib/ratelimit/gate.ts): shard 0 keeps the plain key.
 */
/** The partitions of the tenant-access roles' shared sessions: `TSESSION#<role name>#<tid>` (infra/grants.ts `TenantSessionCache`). */
export const TENANT_SESSION_PREFIX = 'TSESSION#';

export const TABLE_KEYS = {
  pk: 'pk',
  sk: 'sk',
  gsi1: { name: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' },
  plat: { name: 'plat', pk: 'platpk', sk: 'platsk' },
  ttl: 'ttl',
} as const;

/** The platform listings' key attributes: no tenant-access role may name them (infra/grants.ts). */
export const PLATFORM_LISTING_ATTRIBUTES = [TABLE_KEYS.plat.pk, TABLE_KEYS.plat.sk] as const;

/** The listings' partition-key names (`<NAME>#...`): what the migration moves from gsi1 (scripts/operator/migrate-platform-listings.ts). */
export const PLATFORM_LISTINGS = ['TENANTS', 'EMAIL', 'TOKENKEYS', 'AUDIT', 'LEASES'] as const;
export type PlatformListing = (typeof PLATFORM_LISTINGS)[number];

export const tenantPk = (tenantId: string) => `T#${tenantId}`;

/**
 * The account's metering partition: its usage items of each day and their shards, which hold
 * the account's and its credentials' rate-limit buckets (lib/ratelimit). One item collection,
 * so a usage report is one Query; apart from `T#<tid>`, so the tenant-access role's only
 * write of a read-only route reaches no account data.
 */
export const meterPk = (tenantId: string) => `METER#${tenantId}`;

/** Whether a partition key is an account's own: `T#<tid>` or its metering partition `METER#<tid>`. */
export const isAccountPartition = (pk: string): boolean => pk.startsWith('T#') || pk.startsWith('METER#');

/** Types whose head is keyed by name (a read by name is one GetItem: the hot path). */
export const NAME_INDEXED: ReadonlySet<string> = new Set(['secret']);

/** Partition keys each platform-wide gsi1 listing is spread over (docs/capacity.md). */
export const GSI_SHARDS = 32;

/** The shard of an id: FNV-1a of its characters, modulo GSI_SHARDS (stable across processes and releases). */
export function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % GSI_SHARDS;
}

const sharded = (name: string) => Array.from({ length: GSI_SHARDS }, (_, n) => `${name}#${n}`);

export const keys = {
  tenant: (tid: string) => ({ pk: tenantPk(tid), sk: 'TENANT' }),
  tenantIndex: (tid: string, createdAt: string) => ({ platpk: `TENANTS#${shardOf(tid)}`, platsk: `${createdAt}#${tid}` }),
  /** Every partition key of the TENANTS listing, to merge. */
  tenantIndexPks: sharded('TENANTS'),
  counters: (tid: string) => ({ pk: tenantPk(tid), sk: 'COUNTERS' }),
  usageDay: (tid: string, day: string, shard = 0) => ({ pk: meterPk(tid), sk: shard === 0 ? `USAGE#${day}` : `USAGE#${day}#${shard}` }),
  usagePrefix: 'USAGE#',
  user: (tid: string, email: string) => ({ pk: tenantPk(tid), sk: `USER#${email}` }),
  userPrefix: 'USER#',
  userIndex: (tid: string, email: string) => ({ platpk: `EMAIL#${email}`, platsk: tenantPk(tid) }),
  apiKey: (tid: string, kid: string) => ({ pk: tenantPk(tid), sk: `APIKEY#${kid}` }),
  apiKeyPrefix: 'APIKEY#',
  apiKeyAuth: (hash: string) => ({ pk: `KEY#${hash}`, sk: 'KEY' }),
  // personal API tokens (lib/auth/api-tokens.ts): a global lookup by the token's hash, like API keys
  apiTokenAuth: (hash: string) => ({ pk: `APITOKEN#${hash}`, sk: 'APITOKEN' }),
  // last accepted Yubico OTP counter of a YubiKey credential (functions/credentials/yubikeys.ts)
  otpCounter: (tid: string, yubikeyId: string) => ({ pk: tenantPk(tid), sk: `OTPCTR#${yubikeyId}` }),
  // agents (lib/agents/store.ts): a signed device request carries only its key id, and the
  // RFC 8628 endpoints only a device code, user code or enrolment token: global lookups.
  agentProfile: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `AGENTPROFILE#${id}` }),
  agentProfilePrefix: 'AGENTPROFILE#',
  agentDevice: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `AGENTDEVICE#${id}` }),
  agentDevicePrefix: 'AGENTDEVICE#',
  deviceAuth: (deviceId: string) => ({ pk: `DEVICE#${deviceId}`, sk: 'DEVICE' }),
  deviceNonce: (deviceId: string, nonce: string) => ({ pk: `NONCE#${deviceId}#${nonce}`, sk: 'NONCE' }),
  /** A tenant-access role's sealed STS session for one account, shared by the role's containers (lib/authn/tenant-sessions.ts). */
  tenantSession: (roleName: string, tid: string) => ({ pk: `${TENANT_SESSION_PREFIX}${roleName}#${tid}`, sk: 'SESSION' }),
  deviceAuthorization: (deviceCodeHash: string) => ({ pk: `DEVAUTHZ#${deviceCodeHash}`, sk: 'DEVAUTHZ' }),
  userCode: (codeHash: string) => ({ pk: `USERCODE#${codeHash}`, sk: 'USERCODE' }),
  enrolmentToken: (tokenHash: string) => ({ pk: `ENROLL#${tokenHash}`, sk: 'ENROLL' }),
  dataKey: (tid: string) => ({ pk: tenantPk(tid), sk: 'DEK#CURRENT' }),
  tokenKey: (tid: string, kid: string) => ({ pk: tenantPk(tid), sk: `TOKENKEY#${kid}` }),
  tokenKeyPrefix: 'TOKENKEY#',
  /** Every account's token-signing keys in one listing: the authorization server's public key set (lib/auth/jwt.ts `serviceKeySet`). */
  tokenKeyIndex: (kid: string) => ({ platpk: `TOKENKEYS#${shardOf(kid)}`, platsk: kid }),
  tokenKeyIndexPks: sharded('TOKENKEYS'),
  secret: (tid: string, name: string) => ({ pk: tenantPk(tid), sk: `SECRET#${name}` }),
  secretPrefix: 'SECRET#',
  resource: (tid: string, type: string, id: string) => ({ pk: tenantPk(tid), sk: `R#${type}#${id}` }),
  resourcePrefix: (type: string) => `R#${type}#`,
  /**
   * The head of any versioned resource (lib/resources/store.ts): `R#<type>#<id>`, except the
   * name-indexed generic secret, `SECRET#<name>`.
   */
  head: (tid: string, type: string, id: string, name: string) => (NAME_INDEXED.has(type) ? keys.secret(tid, name) : keys.resource(tid, type, id)),
  headPrefix: (type: string) => (NAME_INDEXED.has(type) ? keys.secretPrefix : keys.resourcePrefix(type)),
  version: (tid: string, type: string, id: string, version: number) => ({
    pk: tenantPk(tid),
    sk: `V#${type}#${id}#${String(version).padStart(10, '0')}`,
  }),
  versionPrefix: (type: string, id: string) => `V#${type}#${id}#`,
  resourceIndex: (tid: string, id: string) => ({ gsi1pk: tenantPk(tid), gsi1sk: `RES#${id}` }),
  idempotency: (tid: string, hash: string) => ({ pk: tenantPk(tid), sk: `IDEM#${hash}` }),
  audit: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `AUDIT#${id}` }),
  auditIndex: (id: string) => ({ platpk: `AUDIT#${shardOf(id)}`, platsk: id }),
  /** Every partition key of the global AUDIT listing, to merge. */
  auditIndexPks: sharded('AUDIT'),
  outbox: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `OUTBOX#${id}` }),
  outboxPrefix: 'OUTBOX#',
  auditPrefix: 'AUDIT#',
  auditChain: (tid: string) => ({ pk: tenantPk(tid), sk: 'AUDITCHAIN' }),
  auditKey: (tid: string) => ({ pk: tenantPk(tid), sk: 'AUDITKEY' }),
  // written with the first platform-operator account (lib/operator/accounts.ts): its
  // conditional put is what keeps two concurrent first-operator runs from both succeeding
  operatorMark: () => ({ pk: 'SYS', sk: 'OPERATOR' }),
  webhook: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `WEBHOOK#${id}` }),
  webhookPrefix: 'WEBHOOK#',
  delivery: (tid: string, webhookId: string, eventId: string) => ({ pk: tenantPk(tid), sk: `WHDLV#${webhookId}#${eventId}` }),
  deliveryPrefix: (webhookId: string) => `WHDLV#${webhookId}#`,
  ipRate: (ip: string) => ({ pk: `IP#${ip}`, sk: 'RATE' }),
  // sharing, temporary access, containers (lib/sharing, functions/containers)
  share: (tid: string, type: string, resId: string, shareId: string) => ({ pk: tenantPk(tid), sk: `SHARE#${type}#${resId}#${shareId}` }),
  sharePrefix: (type: string, resId: string) => `SHARE#${type}#${resId}#`,
  shareRef: (tid: string, shareId: string) => ({ pk: tenantPk(tid), sk: `SHAREID#${shareId}` }),
  sharedWith: (email: string, type: string, resId: string) => ({ pk: `SHAREDWITH#${email}`, sk: `${type}#${resId}` }),
  sharedWithPk: (email: string) => `SHAREDWITH#${email}`,
  tempGrant: (tid: string, type: string, resId: string, grantId: string) => ({ pk: tenantPk(tid), sk: `TEMPACCESS#${type}#${resId}#${grantId}` }),
  tempGrantPrefix: (type: string, resId: string) => `TEMPACCESS#${type}#${resId}#`,
  tempGrantRef: (tid: string, grantId: string) => ({ pk: tenantPk(tid), sk: `TEMPID#${grantId}` }),
  tempToken: (hash: string) => ({ pk: `TEMPTOKEN#${hash}`, sk: 'TOKEN' }),
  containerName: (tid: string, name: string) => ({ pk: tenantPk(tid), sk: `CNAME#${name}` }),
  containerMember: (tid: string, containerId: string, name: string) => ({ pk: tenantPk(tid), sk: `CMEMBER#${containerId}#${name}` }),
  containerMemberPrefix: (containerId: string) => `CMEMBER#${containerId}#`,
  containerCount: (tid: string, containerId: string) => ({ pk: tenantPk(tid), sk: `CCOUNT#${containerId}` }),
  // certificates (functions/certificates): one item per revoked serial, read to build the CRL;
  // an ACME http-01 challenge is a global lookup (the validation request carries only the token).
  certRevocation: (tid: string, caId: string, serial: string) => ({ pk: tenantPk(tid), sk: `CRL#${caId}#${serial}` }),
  certRevocationPrefix: (caId: string) => `CRL#${caId}#`,
  acmeChallenge: (token: string) => ({ pk: `ACME#${token}`, sk: 'ACME' }),
  // database leases (lib/database): the sparse LEASES index holds unrevoked leases in expiry
  // order for the sweeper (gsi1 is KEYS_ONLY: tenant and id are in the keys).
  lease: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `LEASE#${id}` }),
  leasePrefix: 'LEASE#',
  leaseExpiryIndex: (tid: string, id: string, expiresAt: string) => ({ platpk: `LEASES#${shardOf(id)}`, platsk: `${expiresAt}#${tid}#${id}` }),
  /** Every partition key of the LEASES expiry listing, to merge. */
  leaseExpiryPks: sharded('LEASES'),
  /** The tenant and lease id of a lease item's keys, or undefined for any other item. */
  parseLease: (pk: string, sk: string): { tenantId: string; id: string } | undefined =>
    pk.startsWith('T#') && sk.startsWith(keys.leasePrefix) ? { tenantId: pk.slice(2), id: sk.slice(keys.leasePrefix.length) } : undefined,
  rotationLock: (tid: string, connectionId: string) => ({ pk: tenantPk(tid), sk: `DBLOCK#${connectionId}` }),
  // asynchronous tool jobs (lib/tools/extraction.ts)
  extractionJob: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `XJOB#${id}` }),
  // named variables (lib/variables)
  variable: (tid: string, name: string) => ({ pk: tenantPk(tid), sk: `VAR#${name}` }),
  variablePrefix: 'VAR#',
  // federation stores (lib/federation)
  oidcClient: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `OIDCCLIENT#${id}` }),
  oidcClientPrefix: 'OIDCCLIENT#',
  jwks: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `JWKS#${id}` }),
  jwksPrefix: 'JWKS#',
  jwksIssuer: (tid: string, issuerHash: string) => ({ pk: tenantPk(tid), sk: `JWKSISS#${issuerHash}` }),
  oidcToken: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `OIDCTOKEN#${id}` }),
  oidcTokenPrefix: 'OIDCTOKEN#',
  billing: (tid: string) => ({ pk: tenantPk(tid), sk: 'BILLING' }),
  billingEvent: (tid: string, provider: string, eventId: string) => ({ pk: tenantPk(tid), sk: `BILLEVT#${provider}#${eventId}` }),
  samlMetadata: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `SAMLMETA#${id}` }),
  samlMetadataPrefix: 'SAMLMETA#',
  samlEntity: (tid: string, entityHash: string) => ({ pk: tenantPk(tid), sk: `SAMLENTITY#${entityHash}` }),
  samlAssertion: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `SAMLASSERT#${id}` }),
  samlAssertionPrefix: 'SAMLASSERT#',
  samlCertNotice: (tid: string, metadataId: string, fingerprint: string, days: number) => ({
    pk: tenantPk(tid),
    sk: `SAMLCERTNOTE#${metadataId}#${fingerprint}#${days}`,
  }),
  samlReplay: (tid: string, hash: string) => ({ pk: tenantPk(tid), sk: `SAMLREPLAY#${hash}` }),
  // tools (lib/tools): S/KEY sequences (the last accepted OTP, sealed) and time-locked values
  skey: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `SKEY#${id}` }),
  skeyPrefix: 'SKEY#',
  timelock: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `TIMELOCK#${id}` }),
  // protected documents (lib/documents): the PDF itself is in S3; a grantee (an e-mail, in any
  // account) finds a grant by its own e-mail and the document id, read consistently per request
  document: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `DOC#${id}` }),
  documentPrefix: 'DOC#',
  // an upload's intent: written before its object, deleted by the commit that records the document
  documentUpload: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `DOCUPLOAD#${id}` }),
  documentUploadPrefix: 'DOCUPLOAD#',
  documentGrant: (tid: string, docId: string, grantId: string) => ({ pk: tenantPk(tid), sk: `DOCGRANT#${docId}#${grantId}` }),
  documentGrantPrefix: (docId: string) => `DOCGRANT#${docId}#`,
  documentGrantee: (email: string, docId: string) => ({ pk: `DOCGRANTEE#${email}`, sk: docId }),
  documentGranteePk: (email: string) => `DOCGRANTEE#${email}`,
  // sign-in (lib/users): sessions, and the global lookups of what a sign-in request carries
  // alone (a refresh token, a reset token, a challenge id, an OIDC state): by hash or id
  session: (tid: string, sid: string) => ({ pk: tenantPk(tid), sk: `SESSION#${sid}` }),
  sessionPrefix: 'SESSION#',
  refreshToken: (hash: string) => ({ pk: `REFRESH#${hash}`, sk: 'REFRESH' }),
  // CLI login (lib/users/cli-login.ts): the poll carries a device code, the approval a user code
  cliLogin: (deviceCodeHash: string) => ({ pk: `CLILOGIN#${deviceCodeHash}`, sk: 'CLILOGIN' }),
  cliUserCode: (userCodeHash: string) => ({ pk: `CLICODE#${userCodeHash}`, sk: 'CLICODE' }),
  passwordReset: (hash: string) => ({ pk: `PWRESET#${hash}`, sk: 'PWRESET' }),
  srpChallenge: (id: string) => ({ pk: `SRPCHAL#${id}`, sk: 'SRPCHAL' }),
  ssoConfig: (tid: string) => ({ pk: tenantPk(tid), sk: 'SSO' }),
  oidcState: (hash: string) => ({ pk: `OIDCSTATE#${hash}`, sk: 'OIDCSTATE' }),
  passkey: (tid: string, credentialId: string) => ({ pk: tenantPk(tid), sk: `PASSKEY#${credentialId}` }),
  passkeyPrefix: 'PASSKEY#',
  webauthnChallenge: (id: string) => ({ pk: `WACHAL#${id}`, sk: 'WACHAL' }),
  // the authorization server (lib/oauth): codes and consent tickets are presented alone (global,
  // by hash); a person's consent per client; a client assertion's or workload JWT's jti, once
  oauthCode: (hash: string) => ({ pk: `OAUTHCODE#${hash}`, sk: 'OAUTHCODE' }),
  oauthTicket: (hash: string) => ({ pk: `OAUTHTICKET#${hash}`, sk: 'OAUTHTICKET' }),
  oauthConsent: (tid: string, clientId: string, user: string) => ({ pk: tenantPk(tid), sk: `OAUTHCONSENT#${clientId}#${user}` }),
  jwtReplay: (tid: string, hash: string) => ({ pk: tenantPk(tid), sk: `JTI#${hash}` }),
} as const;

/** The table's definition, shared by the local runtime (CreateTable) and the CDK stack. */
export const TABLE_DEFINITION = {
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'gsi1pk', AttributeType: 'S' },
    { AttributeName: 'gsi1sk', AttributeType: 'S' },
    { AttributeName: 'platpk', AttributeType: 'S' },
    { AttributeName: 'platsk', AttributeType: 'S' },
  ],
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  gsi1: {
    IndexName: 'gsi1',
    KeySchema: [
      { AttributeName: 'gsi1pk', KeyType: 'HASH' },
      { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' as const },
  },
  /** The platform listings (keys.ts header): written by no tenant session. */
  plat: {
    IndexName: 'plat',
    KeySchema: [
      { AttributeName: 'platpk', KeyType: 'HASH' },
      { AttributeName: 'platsk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' as const },
  },
  /** The table's stream: the outbox relay and the audit sealer read it (lib/events/relay.ts). */
  streamViewType: 'NEW_IMAGE',
} as const;
