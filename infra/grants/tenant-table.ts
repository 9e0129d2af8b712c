import * as iam from 'aws-cdk-lib/aws-iam';
import type { Grant } from '../../lib/routes.js';
import { PLATFORM_LISTING_ATTRIBUTES, TABLE_KEYS } from '../../lib/store/keys.js';
import { AUDIT_ATTRIBUTES, DATA_KEY_ATTRIBUTES, METERING_ATTRIBUTES, OPERATOR_ONLY_ATTRIBUTES, PLAN_ATTRIBUTES } from '../../lib/tenancy/attributes.js';
import { LOOKUP_PREFIXES } from '../../lib/tenancy/lookups.js';
import { holds, LOOKUP_ITEM_ATTRIBUTES, METER_PARTITION, OWN_MARK, TENANT_PARTITION } from './common.js';

/**
 * The table statements of a tenant-access role (infra/grants.ts, the second table): every one
 * conditioned on the session's account, `T#${aws:PrincipalTag/tenant_id}`, its metering
 * partition, or the global lookup items under the owner-mark rule (lib/tenancy/lookups.ts).
 */
export function tenantTableStatements(grants: readonly Grant[], tableArn: string): iam.PolicyStatement[] {
  const has = holds(grants);
  const reads = has('table:read') || has('table:write');
  return [
    ...(reads ? tenantReadStatements(tableArn) : []),
    ...(has('table:write') ? lookupWriteStatements(tableArn) : []),
    ...(has('table:meter') || has('table:write') ? [tenantMeterStatement(tableArn)] : []),
    ...(has('table:write') ? [tenantWriteStatement(tableArn, has('payment'))] : []),
    ...(has('kms:encrypt') && !has('table:write') ? [dataKeyCreateStatement(tableArn)] : []),
  ];
}

const lookupPartitions = () => LOOKUP_PREFIXES.map((p) => `${p}*`);

function tenantReadStatements(tableArn: string): iam.PolicyStatement[] {
  return [
    // the metering partition on every tenant role: a role serves every route of its grant set
    // (GET /usage shares its set with most read-only routes), and what it holds, the account's
    // own request counts, any credential of the account may read through GET /usage anyway
    new iam.PolicyStatement({
      sid: 'TenantRead',
      actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
      resources: [tableArn, `${tableArn}/index/${TABLE_KEYS.gsi1.name}`],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION, METER_PARTITION] } },
    }),
    // the global lookup items written beside the account's (lib/tenancy/lookups.ts): read-only
    // routes only read them
    new iam.PolicyStatement({
      sid: 'TenantLookups',
      actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
      resources: [tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': lookupPartitions() } },
    }),
  ];
}

/**
 * A lookup item names its account inside, a value IAM never sees; its owner mark is an
 * attribute NAME (`T#<tid>`, lib/tenancy/lookups.ts), which IAM sees in dynamodb:Attributes:
 * a Put or Update names the session's own mark (ForAnyValue) and no other `T#` name
 * (ForAllValues over LOOKUP_ITEM_ATTRIBUTES: the own mark, or a name starting with a
 * lower-case letter, as every attribute the code writes does), and the key must be present
 * (Null false: a ForAllValues condition holds when its key is absent). Readers drop an item
 * whose mark is not its account's, so an item naming another account is dead on arrival.
 * Condition keys: DynamoDB sets dynamodb:Attributes on PutItem (the item's attribute
 * names) and UpdateItem (the names in the key, update and condition expressions):
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
 * and the Service Authorization Reference, "Actions, resources, and condition keys for
 * Amazon DynamoDB" (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html).
 */
function lookupWriteStatements(tableArn: string): iam.PolicyStatement[] {
  const confined = {
    'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': lookupPartitions(), 'dynamodb:Attributes': [...LOOKUP_ITEM_ATTRIBUTES] },
    'ForAllValues:StringNotEquals': { 'dynamodb:Attributes': [...PLATFORM_LISTING_ATTRIBUTES] },
  };
  return [
    new iam.PolicyStatement({
      sid: 'TenantLookupWrite',
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      resources: [tableArn],
      conditions: { ...confined, 'ForAnyValue:StringEquals': { 'dynamodb:Attributes': [OWN_MARK] }, Null: { 'dynamodb:Attributes': 'false' } },
    }),
    // Delete and ConditionCheck write no attribute: AWS documents no dynamodb:Attributes for
    // what a DeleteItem removes (only, at most, the names of its key and condition), so no
    // attribute condition can confine them to the session's own items. What this leaves
    // (docs/architecture.md, "Tenancy in IAM"): a tenant session can delete another account's
    // lookup item whose key it knows (a recipient's e-mail: SHAREDWITH#, DOCGRANTEE#): a
    // denial of service, never a credential or access of the other account. The attribute
    // condition keeps it from naming another account's mark in a condition.
    new iam.PolicyStatement({ sid: 'TenantLookupDelete', actions: ['dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'], resources: [tableArn], conditions: confined }),
  ];
}

/**
 * The limiter's write (lib/ratelimit/bucket.ts), on every tenant route: the metering
 * partition only (TenantWrite does not reach it), naming only the metering attributes.
 */
function tenantMeterStatement(tableArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'TenantMeter',
    actions: ['dynamodb:UpdateItem'],
    resources: [tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [METER_PARTITION] },
      'ForAllValues:StringLike': { 'dynamodb:Attributes': [...METERING_ATTRIBUTES] },
    },
  });
}

/**
 * The account's own partition. The account item's operator flag and quota are the platform's
 * (an account's own session setting them made itself an operator: found by the negative
 * matrix's review); the billing routes (`payment`) write the quota a confirmed plan sets. The
 * platform listings' key attributes likewise (lib/store/keys.ts, "Platform listings"): IAM
 * sees names, not values, so a session naming platpk could put any own item into TENANTS,
 * AUDIT, LEASES (a forged due lease starved the sweeper), EMAIL or TOKENKEYS.
 */
function tenantWriteStatement(tableArn: string, payment: boolean): iam.PolicyStatement {
  const plan = PLAN_ATTRIBUTES as readonly string[];
  return new iam.PolicyStatement({
    sid: 'TenantWrite',
    actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
    resources: [tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION] },
      'ForAllValues:StringNotEquals': {
        'dynamodb:Attributes': [...OPERATOR_ONLY_ATTRIBUTES.filter((a) => !(payment && plan.includes(a))), ...PLATFORM_LISTING_ATTRIBUTES],
      },
    },
  });
}

/**
 * The first seal of an account creates its data-key record (lib/crypto/envelope.ts); a
 * sealing route that writes nothing else may put that item in its own partition, naming only
 * the record's attributes (the IAM evaluation tier found POST /ipfs/store denied).
 */
function dataKeyCreateStatement(tableArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'TenantDataKeyCreate',
    actions: ['dynamodb:PutItem'],
    resources: [tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION], 'dynamodb:Attributes': [...DATA_KEY_ATTRIBUTES] },
      Null: { 'dynamodb:Attributes': 'false' },
    },
  });
}

/** The audit writer's one table action: the PutItem of an audit entry in the session's account, returning nothing. */
export function auditPutStatement(tableArn: string): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'TenantAuditPut',
    actions: ['dynamodb:PutItem'],
    resources: [tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [TENANT_PARTITION], 'dynamodb:Attributes': [...AUDIT_ATTRIBUTES] },
      // the put returns nothing: no attribute of an item it collides with is read back
      StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
    },
  });
}
