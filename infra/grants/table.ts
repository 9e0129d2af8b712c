import * as iam from 'aws-cdk-lib/aws-iam';
import type { Grant, OwnItems, TenantCredential } from '../../lib/routes.js';
import { keys, PLATFORM_LISTING_ATTRIBUTES, TABLE_KEYS, TENANT_SESSION_PREFIX } from '../../lib/store/keys.js';
import { ACCOUNT_ATTRIBUTES, METERING_ATTRIBUTES } from '../../lib/tenancy/attributes.js';
import { CREDENTIAL_PARTITIONS, holds, METERING_PARTITIONS } from './common.js';

/**
 * Attribute names an own-item write may not name (lib/routes.ts OWN_PARTITIONS): those that
 * name an account in a global item (lib/tenancy/lookups.ts: `tenant_id`, `owner_tenant_id`, an
 * owner mark `T#<tid>`) and the platform listings' keys. Such a write is a flow's item before
 * it knows its account; what names one is written in that account's tenant session.
 */
const ACCOUNT_NAMING_ATTRIBUTES = ['tenant_id', 'owner_tenant_id', 'T#*', ...PLATFORM_LISTING_ATTRIBUTES] as const;

/**
 * A route's own global items (lib/routes.ts OWN_PARTITIONS) on its function's role:
 * `OwnItemRead` (GetItem, BatchGetItem, Query of the table, no index) and `OwnItemWrite`
 * (Put/Update/Delete/ConditionCheck naming no account, returning nothing), each only on the
 * declared partitions; with `listed`, its listings and the declared attributes of the listed items.
 */
export function ownItemStatements(own: OwnItems, tableArn: string): iam.PolicyStatement[] {
  const on = (partitions: readonly string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] } });
  return [
    ...(own.read?.length
      ? [new iam.PolicyStatement({ sid: 'OwnItemRead', actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'], resources: [tableArn], conditions: on(own.read) })]
      : []),
    ...(own.write?.length
      ? [
          new iam.PolicyStatement({
            sid: 'OwnItemWrite',
            actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
            resources: [tableArn],
            conditions: {
              ...on(own.write),
              'ForAllValues:StringNotLike': { 'dynamodb:Attributes': [...ACCOUNT_NAMING_ATTRIBUTES] },
              StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
            },
          }),
        ]
      : []),
    ...(own.listed ? listedItemStatements(own.listed, tableArn) : []),
  ];
}

/**
 * A route's listed items (lib/routes.ts OwnItems `listed`): its platform listings on index plat
 * (`PlatformListingRead`, KEYS_ONLY) and `ListedItemRead`, BatchGetItem of account items naming
 * the keys and the declared attributes only (present: a read of whole items is refused), no
 * other action, no index.
 */
function listedItemStatements(listed: NonNullable<OwnItems['listed']>, tableArn: string): iam.PolicyStatement[] {
  return [
    ...platformListingRead(tableArn, listed.listings),
    new iam.PolicyStatement({
      sid: 'ListedItemRead',
      actions: ['dynamodb:BatchGetItem'],
      resources: [tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [TABLE_KEYS.pk, TABLE_KEYS.sk, ...listed.attributes] },
        Null: { 'dynamodb:Attributes': 'false' },
      },
    }),
  ];
}

/**
 * The table statements of a function's own role for its grants (infra/grants.ts, the first
 * table): read (the table and its gsi1 and plat indexes), write, metering, the readiness
 * probe; a route with own items (lib/routes.ts OWN_PARTITIONS) only those
 * (`ownItemStatements`) and the per-IP limiter.
 */
export function ownTableStatements(
  grants: readonly Grant[],
  tableArn: string,
  own?: OwnItems,
  /** An operator role's write partitions (lib/routes.ts OPERATOR_WRITES): its writes only there, metering apart. */
  operatorWrites?: readonly string[],
): iam.PolicyStatement[] {
  const has = holds(grants);
  if (own) return [...ownItemStatements(own, tableArn), ...(has('table:meter') ? [meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk])] : [])];
  const statements: iam.PolicyStatement[] = [];
  const indexArns = [TABLE_KEYS.gsi1.name, TABLE_KEYS.plat.name].map((name) => `${tableArn}/index/${name}`);
  if (has('table:read') || has('table:write')) {
    const actions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
    statements.push(new iam.PolicyStatement({ sid: 'TableRead', actions, resources: [tableArn] }));
    // gsi1 and the platform listings (operator listings, the service's key set)
    statements.push(new iam.PolicyStatement({ sid: 'IndexRead', actions: ['dynamodb:Query'], resources: indexArns }));
  }
  if (has('table:write') && operatorWrites) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'OperatorWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...operatorWrites] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      }),
      meterStatement('TableMeter', tableArn, METERING_PARTITIONS),
    );
  } else if (has('table:write')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'TableWrite',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        resources: [tableArn],
      }),
    );
  } else if (has('table:meter')) {
    // operator and self-authenticating read-only routes: the metering items only, of any
    // account (these routes are not tenant-scoped) and the per-IP rate-limit items
    statements.push(meterStatement('TableMeter', tableArn, METERING_PARTITIONS));
  }
  if (has('table:ready')) {
    statements.push(
      new iam.PolicyStatement({
        sid: 'ReadinessProbe',
        actions: ['dynamodb:GetItem'],
        resources: [tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SYS'] } },
      }),
    );
  }
  return statements;
}

/** UpdateItem of the metering attributes only, on `partitions` (StringLike). */
function meterStatement(sid: string, tableArn: string, partitions: readonly string[]): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid,
    actions: ['dynamodb:UpdateItem'],
    resources: [tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions], 'dynamodb:Attributes': [...METERING_ATTRIBUTES] } },
  });
}


/** GetItem (or `action`) on the partitions `prefixes` only (StringLike). */
const onPartitions = (sid: string, action: string, tableArn: string, prefixes: readonly string[]) =>
  new iam.PolicyStatement({ sid, actions: [action], resources: [tableArn], conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...prefixes] } } });

/**
 * What a tenant route's execution role does before its credential names the account. A
 * bearer or device credential: the credential item (KEY#, APITOKEN#, DEVICE#) and the
 * projected account read (the gate's rate of the account); a device also its nonce. A
 * temporary access token (GET /api/v1/t/{token}): its TEMPTOKEN# item only, and the per-IP
 * limiter (lib/ratelimit/gate.ts meters a route without a principal by source IP, before the
 * handler reads the token); the account item is read in the tenant session. A signed
 * provider event (the payment webhook): the per-IP limiter only. Own items (the agent's
 * device authorization): its declared partitions (`ownItemStatements`) and the per-IP limiter.
 */
export function identificationStatements(credential: TenantCredential, tableArn: string, own?: OwnItems): iam.PolicyStatement[] {
  // a signed provider event (the payment webhook): the verified event names the account, nothing is read before
  if (credential === 'signed-event') return [meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk])];
  // the route's own global items name the account (lib/routes.ts OWN_PARTITIONS): those only, and the per-IP limiter
  if (credential === 'own-items') {
    if (!own) throw new Error('a route whose own items name its account declares them (lib/routes.ts OWN_PARTITIONS)');
    return [...ownItemStatements(own, tableArn), meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk]), ...(own.accessToken ? [accountReadStatement(tableArn)] : [])];
  }
  if (credential === 'temp-token') {
    return [onPartitions('TempTokenRead', 'dynamodb:GetItem', tableArn, ['TEMPTOKEN#*']), meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk])];
  }
  return [
    onPartitions('CredentialRead', 'dynamodb:GetItem', tableArn, CREDENTIAL_PARTITIONS),
    accountReadStatement(tableArn),
    ...(credential === 'device' ? [onPartitions('DeviceNonce', 'dynamodb:PutItem', tableArn, ['NONCE#*'])] : []),
  ];
}

/** The projected account read of authentication (lib/store/tenants.ts readAccount): the attributes it needs, of T#* items only. */
function accountReadStatement(tableArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
      sid: 'AccountRead',
      actions: ['dynamodb:GetItem'],
      resources: [tableArn],
      // GetItem has no Select parameter: DynamoDB sets no dynamodb:Select for it, so the key is
      // IfExists (a plain StringEquals denied every authenticated request: the IAM evaluation
      // tier, scripts/local/artifact/aws-calls.ts, cites the AWS documentation); a ForAllValues
      // condition holds when its key is absent, so a GetItem without a projection (every
      // attribute of the account item) is refused by the Null condition on dynamodb:Attributes.
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...ACCOUNT_ATTRIBUTES] },
        Null: { 'dynamodb:Attributes': 'false' },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    });
}

/**
 * The role's sessions shared between its containers, sealed (lib/authn/tenant-sessions.ts):
 * this tenant-access role's items only (`TSESSION#<its name>#*`).
 */
export function tenantSessionCacheStatement(tableArn: string, tenantRoleName: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'TenantSessionCache',
    actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
    resources: [tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TENANT_SESSION_PREFIX}${tenantRoleName}#*`] } },
  });
}

/**
 * The platform listings a worker reads on index plat (`<listing>#*` only; plat is KEYS_ONLY,
 * so an entry gives the keys of the listed item and nothing of it). Empty without listings.
 */
export function platformListingRead(tableArn: string, listings: readonly string[]): iam.PolicyStatement[] {
  if (listings.length === 0) return [];
  return [
    new iam.PolicyStatement({
      sid: 'PlatformListingRead',
      actions: ['dynamodb:Query'],
      resources: [`${tableArn}/index/${TABLE_KEYS.plat.name}`],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': listings.map((l) => `${l}#*`) }, Null: { 'dynamodb:LeadingKeys': 'false' } },
    }),
  ];
}

/**
 * The stream relay's one table write on its own role (lib/events/platform-listings.ts,
 * lib/events/store.ts `writeListing`): an UpdateItem of an account partition's item naming the
 * platform listings' keys (`platpk`, `platsk`) and the item's key, no other attribute (not in
 * its condition either: `attribute_exists(pk)`), and returning nothing. It can list or unlist
 * any account's item, which is what it is for (no tenant session may name these attributes);
 * it cannot read, create, delete or change anything of an item.
 */
export function platformListingWrite(tableArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'PlatformListingWrite',
    actions: ['dynamodb:UpdateItem'],
    resources: [tableArn],
    conditions: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*'] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [TABLE_KEYS.pk, TABLE_KEYS.sk, ...PLATFORM_LISTING_ATTRIBUTES] },
      Null: { 'dynamodb:Attributes': 'false' },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    },
  });
}
