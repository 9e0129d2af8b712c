/**
 * The IAM evaluation tier (docs/architecture.md, "The IAM evaluation tier"): every AWS call a
 * function makes in the artifact runtime (recorded by bootstrap.mjs, decoded by
 * aws-calls.ts) is evaluated by a real IAM policy engine, @cloud-copilot/iam-simulate,
 * against the policies the synthesized templates attach to the role that signed it: the
 * function's execution role, or (a tenant session) its tenant-access role with the session's
 * `tenant_id` tag as `aws:PrincipalTag/tenant_id`. The resource's own policy is evaluated
 * too where the template gives one (a KMS key policy, the assumed role's trust policy).
 * A denied call is a problem of the run, named with the route, the call and the statements
 * that matched its action and resource but whose condition failed.
 */
import { type RunSimulationResults, runSimulation } from '@cloud-copilot/iam-simulate';
import type { Assembly, Template } from './assembly.js';
import type { AwsCall, TableSchema } from './aws-calls.js';
import { ACCOUNT, REGION, type Deployment, type FunctionSpec, Resolver, type World } from './deployment.js';

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly Record<string, any>[] | Record<string, any>;
}

/** A role of the templates with what IAM evaluates for it. */
export interface RolePolicies {
  readonly arn: string;
  /** `<stack>/<logical id>`. */
  readonly key: string;
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
  readonly trust?: PolicyDocument;
}

/** Everything the evaluation reads from the templates. */
export interface IamModel {
  /** Roles by ARN. */
  readonly roles: ReadonlyMap<string, RolePolicies>;
  /** Resource policies by resource ARN (KMS key policies). */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
  /** Key schema by (local) table name. */
  readonly tables: ReadonlyMap<string, TableSchema>;
  /** AWS bucket name by local bucket name. */
  readonly buckets: ReadonlyMap<string, string>;
  /** SSE-KMS: the key of each encrypted queue, by queue ARN. */
  readonly queueKeys: ReadonlyMap<string, string>;
  /** SSE-KMS: the key of each encrypted bucket (and whether it uses an S3 Bucket Key), by the bucket's AWS name. */
  readonly bucketKeys: ReadonlyMap<string, { readonly keyArn: string; readonly bucketKey: boolean }>;
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Reads roles, their policies, key policies and key schemas from the assembly, intrinsics resolved against the local world. */
export function iamModel(assembly: Assembly, world: World): IamModel {
  const r = new Resolver(assembly, world);
  const roles = new Map<string, { arn: string; key: string; policies: { name: string; policy: PolicyDocument }[]; trust?: PolicyDocument }>();
  const byName = new Map<string, string>();
  const each = (type: string, f: (t: Template, id: string, p: Record<string, any>) => void) => {
    for (const t of assembly.templates) for (const [id, res] of Object.entries(t.resources)) if (res.Type === type) f(t, id, res.Properties ?? {});
  };
  each('AWS::IAM::Role', (t, id, p) => {
    const arn = String(r.value(t, { 'Fn::GetAtt': [id, 'Arn'] }));
    const name = String(r.value(t, { Ref: id }));
    const role = {
      arn,
      key: `${t.name}/${id}`,
      policies: list(p.Policies as { PolicyName: unknown; PolicyDocument: unknown }[]).map((x) => ({
        name: String(r.value(t, x.PolicyName)),
        policy: r.value(t, x.PolicyDocument) as PolicyDocument,
      })),
      trust: r.value(t, p.AssumeRolePolicyDocument) as PolicyDocument,
    };
    roles.set(arn, role);
    byName.set(name, arn);
  });
  each('AWS::IAM::Policy', (t, id, p) => {
    const policy = r.value(t, p.PolicyDocument) as PolicyDocument;
    for (const roleRef of list(p.Roles as unknown[])) {
      const arn = byName.get(String(r.value(t, roleRef)));
      if (!arn) throw new Error(`${t.name}/${id}: policy for role ${JSON.stringify(roleRef)}, not a role of the assembly`);
      roles.get(arn)!.policies.push({ name: `${t.name}/${id}`, policy });
    }
  });
  const resourcePolicies = new Map<string, PolicyDocument>();
  each('AWS::KMS::Key', (t, id, p) => {
    if (p.KeyPolicy) resourcePolicies.set(String(r.value(t, { 'Fn::GetAtt': [id, 'Arn'] })), r.value(t, p.KeyPolicy) as PolicyDocument);
  });
  const tables = new Map<string, TableSchema>();
  each('AWS::DynamoDB::Table', (t, id, p) => {
    const hash = (ks: { AttributeName: string; KeyType: string }[]) => ks.find((k) => k.KeyType === 'HASH')!.AttributeName;
    const range = (ks: { AttributeName: string; KeyType: string }[]) => ks.find((k) => k.KeyType === 'RANGE')?.AttributeName;
    tables.set(String(r.value(t, { Ref: id })), {
      partitionKey: hash(p.KeySchema),
      ...(range(p.KeySchema) ? { sortKey: range(p.KeySchema) } : {}),
      indexes: Object.fromEntries(
        list(p.GlobalSecondaryIndexes as { IndexName: string; KeySchema: any[] }[]).map((g) => [g.IndexName, hash(g.KeySchema)]),
      ),
    });
  });
  const buckets = new Map<string, string>();
  const bucketKeys = new Map<string, { keyArn: string; bucketKey: boolean }>();
  each('AWS::S3::Bucket', (t, id, p) => {
    const local = String(r.value(t, { Ref: id }));
    const name = p.BucketName ? String(r.value(t, p.BucketName)) : local;
    if (p.BucketName) buckets.set(local, name);
    const sse = list(p.BucketEncryption?.ServerSideEncryptionConfiguration as Record<string, any>[])[0];
    const keyId = sse?.ServerSideEncryptionByDefault?.KMSMasterKeyID;
    if (keyId) bucketKeys.set(name, { keyArn: String(r.value(t, keyId)), bucketKey: sse.BucketKeyEnabled === true });
  });
  const queueKeys = new Map<string, string>();
  each('AWS::SQS::Queue', (t, id, p) => {
    if (p.KmsMasterKeyId) queueKeys.set(String(r.value(t, { 'Fn::GetAtt': [id, 'Arn'] })), String(r.value(t, p.KmsMasterKeyId)));
  });
  return { roles, resourcePolicies, tables, buckets, queueKeys, bucketKeys };
}

const SQS_VIA = `sqs.${REGION}.amazonaws.com`;
const S3_VIA = `s3.${REGION}.amazonaws.com`;

/**
 * The KMS calls a service makes with the caller's credentials for its call (SSE-KMS): SQS
 * generates (and may decrypt) the data key of a message sent to an encrypted queue, with the
 * queue's ARN as encryption context (SQS Developer Guide, "Key management": producers need
 * kms:GenerateDataKey and kms:Decrypt); S3 generates the data key of an object put into, and
 * decrypts that of an object read from, a bucket encrypted with a KMS key, with the bucket's
 * ARN as context when the bucket uses an S3 Bucket Key, else the object's.
 */
export function serviceCalls(model: IamModel, call: AwsCall): AwsCall[] {
  const tag = call.context['aws:PrincipalTag/tenant_id'];
  const session: Record<string, string | string[]> = tag ? { 'aws:PrincipalTag/tenant_id': tag } : {};
  const kms = (action: string, keyArn: string, via: string, contextKey: string, contextValue: string): AwsCall => ({
    principal: call.principal,
    action,
    resource: keyArn,
    context: { ...session, 'kms:ViaService': via, [`kms:EncryptionContext:${contextKey}`]: contextValue, 'kms:EncryptionContextKeys': [contextKey] },
  });
  if (call.action === 'sqs:SendMessage' || call.action === 'sqs:SendMessageBatch') {
    const key = model.queueKeys.get(call.resource);
    return key
      ? [kms('kms:GenerateDataKey', key, SQS_VIA, 'aws:sqs:arn', call.resource), kms('kms:Decrypt', key, SQS_VIA, 'aws:sqs:arn', call.resource)]
      : [];
  }
  if (call.action === 's3:PutObject' || call.action === 's3:GetObject') {
    const bucket = call.resource.slice('arn:aws:s3:::'.length).split('/')[0]!;
    const key = model.bucketKeys.get(bucket);
    if (!key) return [];
    const context = key.bucketKey ? `arn:aws:s3:::${bucket}` : call.resource;
    return [kms(call.action === 's3:PutObject' ? 'kms:GenerateDataKey' : 'kms:Decrypt', key.keyArn, S3_VIA, 'aws:s3:arn', context)];
  }
  return [];
}

/**
 * What Lambda does with a function's execution role for its event sources (Lambda Developer
 * Guide, "Lambda execution role" and the SQS and DynamoDB event source pages): receive,
 * delete and read the attributes of its queue's messages (and decrypt their data keys
 * through SQS), or read its table's stream.
 */
export function mappingCalls(model: IamModel, source: { kind: 'sqs'; queueArn: string } | { kind: 'stream'; streamArn: string }): AwsCall[] {
  const call = (action: string, resource: string, context: Record<string, string | string[]> = {}): AwsCall => ({
    principal: { kind: 'execution' },
    action,
    resource,
    context,
  });
  if (source.kind === 'sqs') {
    const key = model.queueKeys.get(source.queueArn);
    return [
      call('sqs:ReceiveMessage', source.queueArn),
      call('sqs:DeleteMessage', source.queueArn),
      call('sqs:GetQueueAttributes', source.queueArn),
      ...(key
        ? [
            call('kms:Decrypt', key, {
              'kms:ViaService': SQS_VIA,
              'kms:EncryptionContext:aws:sqs:arn': source.queueArn,
              'kms:EncryptionContextKeys': ['aws:sqs:arn'],
            }),
          ]
        : []),
    ];
  }
  // (dynamodb:ListStreams takes no resource and the mapping knows its stream: not modelled as a call Lambda makes)
  return ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'].map((a) => call(a, source.streamArn));
}

/** The caller of a recorded call: the function (and its routes) and its roles. */
export interface Caller {
  /** How the report names the caller: the route(s) the function serves, or its event source. */
  readonly name: string;
  readonly roleArn: string;
  /** The tenant-access role the function assumes (TENANT_ROLE_ARN), if any. */
  readonly tenantRoleArn?: string;
}

/** A function as the evaluation names it: the routes its methods serve (else its name), and its roles. */
export function callerFor(deployment: Deployment, fn: FunctionSpec): Caller {
  const routes = deployment.methods.filter((m) => m.functionKey === fn.key).map((m) => `${m.httpMethod} ${m.path}`);
  const name = routes.length
    ? `${routes.slice(0, 3).join(', ')}${routes.length > 3 ? ` (+${routes.length - 3})` : ''} [${fn.functionName}]`
    : fn.functionName;
  return { name, roleArn: fn.roleArn, ...(fn.environment.TENANT_ROLE_ARN ? { tenantRoleArn: fn.environment.TENANT_ROLE_ARN } : {}) };
}

export interface Verdict {
  readonly allowed: boolean;
  /** Why not: the statements that matched the action and resource, and which of their conditions failed; or an evaluation error. */
  readonly reason?: string;
}

const roleNameOf = (arn: string) => arn.slice(arn.indexOf(':role/') + ':role/'.length);

/** The principal and policies IAM evaluates a call of `caller` with. */
function principalOf(model: IamModel, caller: Caller, call: AwsCall): { principal: string; role: RolePolicies } | string {
  const arn = call.principal.kind === 'session' ? caller.tenantRoleArn : caller.roleArn;
  if (!arn) return `a call signed with a tenant session, but the function has no tenant-access role (TENANT_ROLE_ARN)`;
  const role = model.roles.get(arn);
  if (!role) return `role ${arn} is not a role of the templates`;
  const session = call.principal.kind === 'session' ? `tenant-${call.principal.tenantId}` : 'function';
  return { principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleNameOf(arn)}/${session}`, role };
}

/**
 * iam-simulate 0.1.173 keeps a request's pattern condition keys only when they are
 * `/`-separated (`aws:PrincipalTag/<key>`): it drops `kms:EncryptionContext:<key>` (colon)
 * before evaluating, so every condition on the encryption context would fail as if the key
 * were absent. The evaluator carries those keys, in the request and in every policy alike, as
 * `aws:RequestTag/kms:EncryptionContext:<key>` (a global pattern key the engine keeps): a
 * renaming of one key on both sides, which changes no condition's outcome. Explanations
 * name the key by its real name again.
 */
const EC_PREFIX = 'kms:encryptioncontext:';
const EC_CARRIER = 'aws:RequestTag/';
const carry = (key: string) => (key.toLowerCase().startsWith(EC_PREFIX) ? `${EC_CARRIER}${key}` : key);
const uncarry = (text: string) => text.replaceAll(`${EC_CARRIER}kms:EncryptionContext:`, 'kms:EncryptionContext:');

function carriedPolicy(policy: PolicyDocument): PolicyDocument {
  const statements = list(policy.Statement as Record<string, any> | Record<string, any>[]).map((st) =>
    st.Condition
      ? {
          ...st,
          Condition: Object.fromEntries(
            Object.entries(st.Condition as Record<string, Record<string, unknown>>).map(([op, keys]) => [
              op,
              Object.fromEntries(Object.entries(keys).map(([k, v]) => [carry(k), v])),
            ]),
          ),
        }
      : st,
  );
  return { ...policy, Statement: statements };
}

/** Evaluates one call; the result says which statements came close when it is denied. */
export async function evaluateCall(model: IamModel, caller: Caller, call: AwsCall): Promise<Verdict> {
  const who = principalOf(model, caller, call);
  if (typeof who === 'string') return { allowed: false, reason: who };
  const resourcePolicy = call.action.startsWith('sts:')
    ? model.roles.get(call.resource)?.trust
    : call.action.startsWith('kms:')
      ? model.resourcePolicies.get(call.resource)
      : undefined;
  const kms = call.action.startsWith('kms:');
  const policy = (p: PolicyDocument) => (kms ? carriedPolicy(p) : p);
  const context = Object.fromEntries(Object.entries(call.context).map(([k, v]) => [kms ? carry(k) : k, v]));
  const result = await runSimulation(
    {
      request: {
        principal: who.principal,
        action: call.action,
        resource: { resource: call.resource, accountId: ACCOUNT },
        contextVariables: { ...context, 'aws:PrincipalArn': who.role.arn, 'aws:PrincipalAccount': ACCOUNT },
      },
      identityPolicies: who.role.policies.map((p) => ({ name: p.name, policy: policy(p.policy) })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy: policy(resourcePolicy) } : {}),
    },
    { simulationMode: 'Strict' },
  );
  return verdictOf(result, who.role);
}

function verdictOf(result: RunSimulationResults, role: RolePolicies): Verdict {
  if (result.resultType === 'error')
    return { allowed: false, reason: `the policy engine refused the simulation: ${result.errors.message} ${JSON.stringify(result.errors)}` };
  if (result.overallResult === 'Allowed') return { allowed: true };
  const analysis = result.resultType === 'single' ? result.result.analysis : result.results[0]?.analysis;
  const near: string[] = [];
  for (const s of analysis?.identityAnalysis?.unmatchedStatements ?? []) {
    if (!s.actionMatch || !s.resourceMatch) continue;
    const sid = (s.statement as any).sid?.() ?? '(no Sid)';
    const failed = uncarry(JSON.stringify(failingConditions(s.explain)));
    near.push(`${sid} (conditions that failed: ${failed})`);
  }
  const where = analysis?.identityAnalysis?.result === 'Allowed' ? `the resource policy (${analysis.resourceAnalysis?.result})` : `${role.key}`;
  return {
    allowed: false,
    reason: `${result.overallResult} by ${where}: ${near.length ? `statements for this action and resource whose conditions failed: ${near.join('; ')}` : 'no statement of the role allows this action on this resource'}`,
  };
}

/** The conditions of a statement explain that did not match, with the request's values. */
function failingConditions(explain: any): unknown[] {
  const conditions = (explain?.conditions ?? []) as any[];
  return conditions
    .filter((c) => c.matches === false)
    .map((c) => ({ operator: c.operator, key: c.conditionKeyValue, values: c.values, failedBecauseMissing: c.failedBecauseMissing }));
}

/** A UUID as the calls carry them: tenant ids, resource ids (UUIDv7), request ids. */
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * Same calls, evaluated once: the runtime sees each distinct (caller, call) many times.
 *
 * "The same" is taken up to the UUIDs no policy names: calls that differ only in which tenant,
 * or which resource id, they name are one class, and the first of them is evaluated for it.
 * A policy decides on strings only by comparing the request's values with its literals and
 * with variables resolved from the request itself (`${aws:PrincipalTag/tenant_id}`), so
 * renaming, in a whole call at once, UUIDs that are not among its literals (the class's key
 * names them <id0>, <id1>... in order of appearance) changes no verdict; a UUID the model
 * names (in a policy, or an ARN a resource policy is found by) is kept. A tenant session reaching another tenant's item is still its
 * own class: its call names two ids (<id0> in the session, <id1> in the key), the tenant's own
 * read one. Before, every new account made its own evaluations: a whole run evaluated 17,886
 * distinct calls, and 6,957 classes after (CI's command, 2026-11-28). On four artifact files,
 * paired: 1,202-1,205 evaluations against 661, the host's CPU 26-27 against 23 s (about 6 ms
 * an evaluation).
 */
export class IamEvaluation {
  private readonly seen = new Map<string, Promise<Verdict>>();
  /** The UUIDs the model names (policies, ARNs): part of a class, never renamed. */
  private readonly named: ReadonlySet<string>;
  readonly denied: { caller: string; call: AwsCall; reason: string }[] = [];
  readonly undecoded: { caller: string; error: string }[] = [];
  evaluated = 0;
  /** Requests the functions' processes recorded (the evaluated calls also hold what services and Lambda do for them). */
  requests = 0;

  constructor(private readonly model: IamModel) {
    // the whole model, its maps' keys too (a resource policy is found by the call's ARN)
    this.named = new Set(JSON.stringify(model, (_key, value: unknown) => (value instanceof Map ? [...value.entries()] : value)).match(UUIDS));
  }

  /** The class of a call (above): its text with each UUID no policy names renamed in order of appearance. */
  private classOf(text: string): string {
    const names = new Map<string, string>();
    return text.replace(UUIDS, (id) => {
      if (this.named.has(id)) return id;
      let name = names.get(id);
      if (name === undefined) names.set(id, (name = `<id${names.size}>`));
      return name;
    });
  }

  record(caller: Caller, call: AwsCall): void {
    const key = this.classOf(JSON.stringify([caller.name, caller.roleArn, caller.tenantRoleArn, call]));
    if (this.seen.has(key)) return;
    const verdict = evaluateCall(this.model, caller, call).catch(
      (e: unknown): Verdict => ({ allowed: false, reason: `evaluation failed: ${(e as Error).message}` }),
    );
    this.seen.set(key, verdict);
    void verdict.then((v) => {
      this.evaluated++;
      if (!v.allowed) this.denied.push({ caller: caller.name, call, reason: v.reason ?? 'denied' });
    });
  }

  /** Waits for every evaluation started so far. */
  async settled(): Promise<void> {
    await Promise.all(this.seen.values());
    await new Promise((r) => setImmediate(r));
  }
}
