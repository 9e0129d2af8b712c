/**
 * The key design of the single table, declared once (DESIGN.md §7). Every key a
 * repository writes comes from here; every tenant-owned key starts with `T#<tenant>`.
 *
 * | item                | pk                 | sk                              | gsi1pk / gsi1sk                 |
 * |---------------------|--------------------|---------------------------------|---------------------------------|
 * | tenant              | T#<tid>            | TENANT                          | TENANTS / <created>#<tid>       |
 * | counters (quota)    | T#<tid>            | COUNTERS                        |                                 |
 * | usage per day       | T#<tid>            | USAGE#<yyyy-mm-dd>              |                                 |
 * | user                | T#<tid>            | USER#<email>                    | EMAIL#<email> / T#<tid>         |
 * | API key (metadata)  | T#<tid>            | APIKEY#<kid>                    |                                 |
 * | API key (auth)      | KEY#<sha256(key)>  | KEY                             |                                 |
 * | data key            | T#<tid>            | DEK#CURRENT                     |                                 |
 * | token-signing key   | T#<tid>            | TOKENKEY#<kid>                  |                                 |
 * | secret (head)       | T#<tid>            | SECRET#<name>                   | T#<tid> / RES#<id>              |
 * | resource (head)     | T#<tid>            | R#<type>#<id>                   | T#<tid> / RES#<id>              |
 * | resource version    | T#<tid>            | V#<type>#<id>#<n, 10 digits>    |                                 |
 * | idempotency record  | T#<tid>            | IDEM#<sha256(principal + key)>  |                                 |
 * | audit entry         | T#<tid>            | AUDIT#<uuidv7>                  | AUDIT / <uuidv7>                |
 * | outbox event        | T#<tid>            | OUTBOX#<uuidv7>                 | OUTBOX / <uuidv7>               |
 *
 * Every versioned resource type (typed credentials, keys, certificates, ...) has a head
 * `R#<type>#<id>` and versions `V#<type>#<id>#<n>` (lib/store/resources.ts). The generic
 * secret's head is keyed by name instead, so a read by name is one GetItem (the hot path);
 * its versions use the same `V#secret#<id>#<n>` form, keyed by the immutable id so a
 * deleted-and-recreated name never mixes histories. Every head carries `RES#<id>` in gsi1,
 * so any resource is found by id within its tenant. The API key auth item is the one global lookup: a request carries only the
 * key, so its hash is the key; it holds the tenant id and everything authentication needs.
 */
export const TABLE_KEYS = { pk: 'pk', sk: 'sk', gsi1: { name: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' }, ttl: 'ttl' } as const;

export const tenantPk = (tenantId: string) => `T#${tenantId}`;

export const keys = {
  tenant: (tid: string) => ({ pk: tenantPk(tid), sk: 'TENANT' }),
  tenantIndex: (tid: string, createdAt: string) => ({ gsi1pk: 'TENANTS', gsi1sk: `${createdAt}#${tid}` }),
  counters: (tid: string) => ({ pk: tenantPk(tid), sk: 'COUNTERS' }),
  usageDay: (tid: string, day: string) => ({ pk: tenantPk(tid), sk: `USAGE#${day}` }),
  usagePrefix: 'USAGE#',
  user: (tid: string, email: string) => ({ pk: tenantPk(tid), sk: `USER#${email}` }),
  userIndex: (tid: string, email: string) => ({ gsi1pk: `EMAIL#${email}`, gsi1sk: tenantPk(tid) }),
  apiKey: (tid: string, kid: string) => ({ pk: tenantPk(tid), sk: `APIKEY#${kid}` }),
  apiKeyPrefix: 'APIKEY#',
  apiKeyAuth: (hash: string) => ({ pk: `KEY#${hash}`, sk: 'KEY' }),
  dataKey: (tid: string) => ({ pk: tenantPk(tid), sk: 'DEK#CURRENT' }),
  tokenKey: (tid: string, kid: string) => ({ pk: tenantPk(tid), sk: `TOKENKEY#${kid}` }),
  tokenKeyPrefix: 'TOKENKEY#',
  secret: (tid: string, name: string) => ({ pk: tenantPk(tid), sk: `SECRET#${name}` }),
  secretPrefix: 'SECRET#',
  resource: (tid: string, type: string, id: string) => ({ pk: tenantPk(tid), sk: `R#${type}#${id}` }),
  resourcePrefix: (type: string) => `R#${type}#`,
  version: (tid: string, type: string, id: string, version: number) => ({
    pk: tenantPk(tid),
    sk: `V#${type}#${id}#${String(version).padStart(10, '0')}`,
  }),
  versionPrefix: (type: string, id: string) => `V#${type}#${id}#`,
  resourceIndex: (tid: string, id: string) => ({ gsi1pk: tenantPk(tid), gsi1sk: `RES#${id}` }),
  idempotency: (tid: string, hash: string) => ({ pk: tenantPk(tid), sk: `IDEM#${hash}` }),
  audit: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `AUDIT#${id}` }),
  auditIndex: (id: string) => ({ gsi1pk: 'AUDIT', gsi1sk: id }),
  outbox: (tid: string, id: string) => ({ pk: tenantPk(tid), sk: `OUTBOX#${id}` }),
  outboxIndex: (id: string) => ({ gsi1pk: 'OUTBOX', gsi1sk: id }),
} as const;

/** The table's definition, shared by the local runtime (CreateTable) and the CDK stack. */
export const TABLE_DEFINITION = {
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
    { AttributeName: 'gsi1pk', AttributeType: 'S' },
    { AttributeName: 'gsi1sk', AttributeType: 'S' },
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
} as const;
