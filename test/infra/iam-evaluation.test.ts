import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type AwsCall, decodeAwsRequest, type RawAwsRequest } from '../../scripts/local/artifact/aws-calls.js';
import type { Deployment, FunctionSpec } from '../../scripts/local/artifact/deployment.js';
import { type Caller, callerFor, evaluateCall, IamEvaluation, type IamModel, type RolePolicies, serviceCalls } from '../../scripts/local/artifact/iam.js';
import { iamProblems } from '../setup/artifact.js';
import { ACCOUNT_ATTRIBUTES } from '../../lib/tenancy/attributes.js';
import { keys } from '../../lib/store/keys.js';
import { offlineDeployment } from './offline-deployment.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * The IAM evaluation tier (docs/architecture.md, "The IAM evaluation tier") is not a rubber
 * stamp: the requests below are shaped exactly as scripts/local/artifact/bootstrap.mjs records
 * them from a function process (SigV4 headers and the JSON/query body the SDK sends), decoded
 * by the same code as in the artifact runtime, and evaluated by the policy engine against the
 * policies synthesized from infra/grants.ts. Allowed as synthesized; denied, naming the route,
 * once the policy is planted with what AWS would deny.
 */
const TABLE = 'secrets-table';
const TENANT = 'tnt_a';
const OTHER = 'tnt_b';

const signed = (service: string, session?: string): Record<string, string> => ({
  authorization: `AWS4-HMAC-SHA256 Credential=${session ? 'ASIA0000000000000000' : 'local'}/20261127/us-east-1/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`,
  ...(session ? { 'x-amz-security-token': `local-session-${session}` } : {}),
});
const dynamo = (op: string, body: unknown, session?: string): RawAwsRequest => ({
  method: 'POST',
  host: '127.0.0.1:8000',
  path: '/',
  headers: { ...signed('dynamodb', session), 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `DynamoDB_20120810.${op}` },
  body: JSON.stringify(body),
});
const S = (v: string) => ({ S: v });
const key = (k: { pk: string; sk: string }) => ({ pk: S(k.pk), sk: S(k.sk) });

/** lib/store/tenants.ts readAccount: the account item, projected to ACCOUNT_ATTRIBUTES, with the execution role. */
const accountRead = (tid: string) => {
  const names = Object.fromEntries(ACCOUNT_ATTRIBUTES.map((f, i) => [`#a${i}`, f]));
  return dynamo('GetItem', { TableName: TABLE, Key: key(keys.tenant(tid)), ConsistentRead: true, ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names });
};
/** lib/auth: the API key's lookup item by hash, with the execution role. */
const credentialRead = dynamo('GetItem', { TableName: TABLE, Key: key(keys.apiKeyAuth('9f86d081884c7d65')), ConsistentRead: true });
/** lib/tenancy/credentials.ts: AssumeRole of the tenant-access role, tagged with the tenant. */
const assumeRole = (roleArn: string, tid: string): RawAwsRequest => ({
  method: 'POST',
  host: '127.0.0.1:9000',
  path: '/',
  headers: { ...signed('sts'), 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    Action: 'AssumeRole',
    Version: '2011-06-15',
    RoleArn: roleArn,
    RoleSessionName: `tenant-${tid}`,
    'Tags.member.1.Key': 'tenant_id',
    'Tags.member.1.Value': tid,
    'TransitiveTagKeys.member.1': 'tenant_id',
    DurationSeconds: '3600',
  }).toString(),
});
/** The local keyring's stand-in KMS request (bootstrap.mjs), KeyId filled in by the runtime from the template's KMS_KEY_ID. */
const kmsRequest = (op: string, keyArn: string, context: Record<string, string>, session?: string): RawAwsRequest => ({
  method: 'POST',
  host: 'kms.local',
  path: '/',
  headers: { ...signed('kms', session), 'x-amz-target': `TrentService.${op}` },
  body: JSON.stringify({ KeyId: keyArn, EncryptionContext: context }),
});
/** lib/audit/queue.ts: the audit entry of a read-only route, sent to the audit queue. */
const auditSend = (queueUrl: string): RawAwsRequest => ({
  method: 'POST',
  host: '127.0.0.1:9324',
  path: '/',
  headers: { ...signed('sqs'), 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessage' },
  body: JSON.stringify({ QueueUrl: queueUrl, MessageBody: '{}' }),
});
/** A tenant session's read of an item of `tid`'s partition. */
const itemRead = (session: string, tid: string) => dynamo('GetItem', { TableName: TABLE, Key: key(keys.apiKey(tid, 'k1')), ConsistentRead: true }, session);

describe('the IAM evaluation tier, over the synthesized policies', () => {
  let model: IamModel;
  let deployment: Deployment;
  let fn: FunctionSpec;
  let caller: Caller;
  const decode = (raw: RawAwsRequest) => decodeAwsRequest(raw, model);

  beforeAll(() => {
    ({ deployment, model } = offlineDeployment(TABLE));
    const method = deployment.methods.find((m) => m.httpMethod === 'GET' && m.path === '/api/v1/secrets')!;
    fn = deployment.functions.get(method.functionKey!)!;
    caller = callerFor(deployment, fn);
  }, scaled(240_000));

  /** The model with the statement `sid` of the caller's `role` replaced by `edit`'s result (undefined: removed). */
  const planted = (roleArn: string, sid: string, edit: (statement: Record<string, any>) => Record<string, any> | undefined): IamModel => {
    const role = model.roles.get(roleArn)!;
    let found = false;
    const policies = role.policies.map((p) => {
      const statements = ([] as Record<string, any>[]).concat(p.policy.Statement as Record<string, any>[]);
      const next = statements.flatMap((st) => {
        if (st.Sid !== sid) return [st];
        found = true;
        const edited = edit(structuredClone(st));
        return edited ? [edited] : [];
      });
      return { ...p, policy: { ...p.policy, Statement: next } };
    });
    expect(found, `${role.key} has a statement ${sid}`).toBe(true);
    return { ...model, roles: new Map([...model.roles, [roleArn, { ...role, policies } satisfies RolePolicies]]) };
  };
  const evaluate = async (m: IamModel, calls: AwsCall[]) => {
    const evaluation = new IamEvaluation(m);
    for (const call of calls) evaluation.record(caller, call);
    await evaluation.settled();
    return evaluation;
  };

  it('decodes what DynamoDB sets: GetItem carries no dynamodb:Select, a Query carries its effective Select', () => {
    const [get] = decode(accountRead(TENANT));
    expect(get).toMatchObject({ action: 'dynamodb:GetItem', resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${TABLE}`, principal: { kind: 'execution' } });
    expect(get!.context['dynamodb:LeadingKeys']).toEqual([`T#${TENANT}`]);
    expect([...(get!.context['dynamodb:Attributes'] as string[])].sort()).toEqual([...ACCOUNT_ATTRIBUTES].sort());
    expect(get!.context).not.toHaveProperty('dynamodb:Select');
    const [query] = decode(
      dynamo('Query', { TableName: TABLE, IndexName: 'gsi1', KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': 'gsi1pk' }, ExpressionAttributeValues: { ':p': S('TENANTS#') } }),
    );
    expect(query).toMatchObject({ resource: `arn:aws:dynamodb:us-east-1:000000000000:table/${TABLE}/index/gsi1`, context: { 'dynamodb:LeadingKeys': ['TENANTS#'], 'dynamodb:Select': 'ALL_PROJECTED_ATTRIBUTES' } });
    const [session] = decode(itemRead(TENANT, TENANT));
    expect(session).toMatchObject({ principal: { kind: 'session', tenantId: TENANT }, context: { 'aws:PrincipalTag/tenant_id': TENANT } });
  });

  it('allows, as synthesized, the calls an authenticated GET /api/v1/secrets makes', async () => {
    const calls = [credentialRead, accountRead(TENANT), assumeRole(caller.tenantRoleArn!, TENANT), itemRead(TENANT, TENANT)].flatMap(decode);
    expect(calls.map((c) => c.action)).toEqual(['dynamodb:GetItem', 'dynamodb:GetItem', 'sts:AssumeRole', 'sts:TagSession', 'dynamodb:GetItem']);
    const evaluation = await evaluate(model, calls);
    expect(evaluation.denied.map((d) => d.reason)).toEqual([]);
    expect(evaluation.evaluated).toBe(calls.length);
  });

  it('evaluates once the calls alike but for the tenant they name; a tenant reaching another tenant is a class of its own, denied', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const own = [itemRead(a, a), itemRead(b, b), itemRead(c, c)].flatMap(decode);
    const across = [itemRead(a, b), itemRead(c, a)].flatMap(decode);
    const evaluation = await evaluate(model, [...own, ...across]);
    expect(evaluation.evaluated).toBe(2);
    expect(evaluation.denied).toHaveLength(1);
    expect(evaluation.denied[0]!.call).toEqual(across[0]);
    expect(evaluation.denied[0]!.reason).toContain('TenantRead');
    // the class is the caller's too: another function's own read is evaluated for itself
    const other = callerFor(deployment, [...deployment.functions.values()].find((f) => f.roleArn !== caller.roleArn && f.environment.TENANT_ROLE_ARN)!);
    evaluation.record(other, own[0]!);
    await evaluation.settled();
    expect(evaluation.evaluated).toBe(3);
  });

  it('keeps in the class a UUID a policy names: a tenant the policy singles out is evaluated for itself', async () => {
    const [named, other] = [randomUUID(), randomUUID()];
    const singled = planted(caller.tenantRoleArn!, 'TenantRead', (st) => ({
      ...st,
      Condition: { ...st.Condition, 'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': [`T#${named}*`] } },
    }));
    const evaluation = await evaluate(singled, [itemRead(other, other), itemRead(named, named)].flatMap(decode));
    expect(evaluation.evaluated).toBe(2);
    expect(evaluation.denied.map((d) => d.call.principal)).toEqual([{ kind: 'session', tenantId: named }]);
  });

  it('denies a tenant session the items of another tenant', async () => {
    const verdict = await evaluateCall(model, caller, decode(itemRead(TENANT, OTHER))[0]!);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toContain('TenantRead');
  });

  it("evaluates the data-key calls on the encryption context: a tenant session opens its own tenant's data key, not another's", async () => {
    const method = deployment.methods.find((m) => m.httpMethod === 'GET' && m.path === '/api/v1/secrets/{name}')!;
    const reader = deployment.functions.get(method.functionKey!)!;
    const readerCaller = callerFor(deployment, reader);
    const keyArn = reader.environment.KMS_KEY_ID!;
    expect(keyArn).toMatch(/^arn:aws:kms:/);
    const own = decode(kmsRequest('Decrypt', keyArn, { tenant_id: TENANT }, TENANT))[0]!;
    expect(own.context).toMatchObject({ 'kms:EncryptionContext:tenant_id': TENANT, 'aws:PrincipalTag/tenant_id': TENANT });
    expect(await evaluateCall(model, readerCaller, own)).toEqual({ allowed: true });
    const other = await evaluateCall(model, readerCaller, decode(kmsRequest('Decrypt', keyArn, { tenant_id: OTHER }, TENANT))[0]!);
    expect(other.allowed).toBe(false);
    expect(other.reason).toContain('TenantDataKeys');
    expect(other.reason).toContain('kms:EncryptionContext:tenant_id');
    // a read-only route sends its audit entry: SendMessage, and SQS's data key through SQS for that queue only
    const auditQueue = [...model.queueKeys.keys()].find((arn) => arn.includes('AuditQueue'))!;
    const send = decode(auditSend(`http://127.0.0.1:9324/000000000000/${auditQueue.slice(auditQueue.lastIndexOf(':') + 1)}`))[0]!;
    const calls = [send, ...serviceCalls(model, send)];
    expect(calls.map((c) => c.action)).toEqual(['sqs:SendMessage', 'kms:GenerateDataKey', 'kms:Decrypt']);
    for (const c of calls) expect(await evaluateCall(model, readerCaller, c), c.action).toEqual({ allowed: true });
    const elsewhere = { ...calls[1]!, context: { ...calls[1]!.context, 'kms:EncryptionContext:aws:sqs:arn': auditQueue.replace('AuditQueue', 'JobsQueue') } };
    expect((await evaluateCall(model, readerCaller, elsewhere)).allowed).toBe(false);
  });

  it('fails the run, naming the route, when StringEquals is planted back on dynamodb:Select of AccountRead', async () => {
    const strict = planted(caller.roleArn, 'AccountRead', (st) => {
      const { StringEqualsIfExists, ...rest } = st.Condition;
      expect(StringEqualsIfExists, 'AccountRead conditions dynamodb:Select with StringEqualsIfExists').toEqual({ 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' });
      return { ...st, Condition: { ...rest, StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' } } };
    });
    const evaluation = await evaluate(strict, decode(accountRead(TENANT)));
    expect(evaluation.denied).toHaveLength(1);
    const problems = iamProblems({ iam: { requests: 1, evaluated: evaluation.evaluated, denied: evaluation.denied, undecoded: [] } } as never);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('GET /api/v1/secrets');
    expect(problems[0]).toContain('dynamodb:GetItem');
    expect(problems[0]).toContain('AccountRead');
    expect(problems[0]).toContain('dynamodb:Select');
  });

  it('fails the run when a needed statement is removed (CredentialRead), and when the account read asks for every attribute', async () => {
    const without = await evaluate(
      planted(caller.roleArn, 'CredentialRead', () => undefined),
      decode(credentialRead),
    );
    expect(without.denied).toHaveLength(1);
    expect(iamProblems({ iam: { requests: 1, evaluated: 1, denied: without.denied, undecoded: [] } } as never)[0]).toContain('GET /api/v1/secrets');
    // the account item without a projection: every attribute of it, which AccountRead must not give
    const whole = dynamo('GetItem', { TableName: TABLE, Key: key(keys.tenant(TENANT)), ConsistentRead: true });
    expect((await evaluateCall(model, caller, decode(whole)[0]!)).allowed).toBe(false);
  });
});
