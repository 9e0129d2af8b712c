import * as iam from 'aws-cdk-lib/aws-iam';
import type { Grant, TenantCredential } from '../../lib/routes.js';
import { keys, PLATFORM_LISTING_ATTRIBUTES, TABLE_KEYS, TENANT_SESSION_PREFIX } from '../../lib/store/keys.js';
import { ACCOUNT_ATTRIBUTES, METERING_ATTRIBUTES } from '../../lib/tenancy/attributes.js';
import { CREDENTIAL_PARTITIONS, holds, METERING_PARTITIONS } from './common.js';

/** Table reads of a function's own role confined to partitions (`dynamodb:LeadingKeys`, StringLike). */
export interface Confinement {
  /** `table:read` only on these partitions, and no index (lib/routes.ts OWN_READ_PARTITIONS). */
  readonly read?: readonly string[];
}

const onlyPartitions = (partitions: readonly string[] | undefined) =>
  partitions ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] } } } : {};

/**
 * The table statements of a function's own role for its grants (infra/grants.ts, the first
 * table): read (the table and its gsi1 and plat indexes, or only `confine.read`), write,
 * metering, the readiness probe.
 */
export function ownTableStatements(grants: readonly Grant[], tableArn: string, confine: Confinement = {}): iam.PolicyStatement[] {
  const has = holds(grants);
  const statements: iam.PolicyStatement[] = [];
  const indexArns = [TABLE_KEYS.gsi1.name, TABLE_KEYS.plat.name].map((name) => `${tableArn}/index/${name}`);
  if (has('table:read') || has('table:write')) {
    const actions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
    statements.push(new iam.PolicyStatement({ sid: 'TableRead', actions, resources: [tableArn], ...onlyPartitions(confine.read) }));
    // gsi1 and the platform listings (operator listings, the service's key set)
    if (!confine.read) statements.push(new iam.PolicyStatement({ sid: 'IndexRead', actions: ['dynamodb:Query'], resources: indexArns }));
  }
  if (has('table:write')) {
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
 * provider event (the payment webhook): the per-IP limiter only.
 */
export function identificationStatements(credential: TenantCredential, tableArn: string): iam.PolicyStatement[] {
  // a signed provider event (the payment webhook): the verified event names the account, nothing is read before
  if (credential === 'signed-event') return [meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk])];
  if (credential === 'temp-token') {
    return [onPartitions('TempTokenRead', 'dynamodb:GetItem', tableArn, ['TEMPTOKEN#*']), meterStatement('IpMeter', tableArn, [keys.ipRate('*').pk])];
  }
  return [
    onPartitions('CredentialRead', 'dynamodb:GetItem', tableArn, CREDENTIAL_PARTITIONS),
    new iam.PolicyStatement({
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
    }),
    ...(credential === 'device' ? [onPartitions('DeviceNonce', 'dynamodb:PutItem', tableArn, ['NONCE#*'])] : []),
  ];
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
