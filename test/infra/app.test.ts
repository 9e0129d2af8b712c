import { TABLE_PROPERTIES } from '../../scripts/local/tables.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ownItemsKey, ROUTES, ROUTES_BEYOND_CONTRACT, tenancyOf, tenantCredentialOf } from '../../lib/routes.js';
import { BACKGROUND_JOBS } from '../../infra/background.js';
import { TABLE_DEFINITION } from '../../lib/store/keys.js';
import { OUTBOX_STREAM } from '../../lib/events/relay.js';
import {
  actionsOf,
  allOfType,
  expectedActions,
  functionsByRoute,
  hsmLayerStandIn,
  parentRef,
  resourcePaths,
  resourcesOfType,
  roleStatements,
  STAR_ACTIONS,
  synthesize,
  type CfnResource,
  type Synthesized,
} from './synth.js';

/**
 * The CDK app, synthesized offline exactly as `npm run synth` does (no context, no account),
 * against the route table: one method and one function per route, CloudFormation limits,
 * least privilege per grant set, the gateway's error envelope, the stateful resources.
 */

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

describe("CDK's CloudFormation template validation and cdk-nag (the suite's other syntheses skip the former: test/infra/synth.ts)", () => {
  /** What the synth's validation report lists, as "<plugin> <rule>". */
  const findings = (s: Synthesized): string[] =>
    (JSON.parse(readFileSync(join(s.dir, 'validation-report.json'), 'utf8')).pluginReports as { pluginName: string; violations: { ruleName: string }[] }[]).flatMap(
      (r) => r.violations.map((v) => `${r.pluginName} ${v.ruleName}`),
    );
  const layer = hsmLayerStandIn();

  it('find nothing in the default templates over the whole route table', () => {
    expect(findings(synthesize({ templateValidation: true }))).toEqual([]);
  });

  it('run: a VPC id that is not one is reported (a template only the validation reads)', () => {
    const s = synthesize({
      templateValidation: true,
      routes: ROUTES.filter((r) => r.family === 'signing'),
      context: {
        hsmClusterId: 'cluster-abcdefghijk',
        hsmVpcId: 'vpc-123',
        hsmSubnetIds: 'subnet-0aaa1111,subnet-0bbb2222',
        hsmSecurityGroupId: 'sg-0ccc3333',
        hsmPinSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:hsm-pin-AbCdEf',
        hsmLayerPath: layer,
      },
    });
    expect(findings(s)).toContain('CloudFormation Validate E1151');
  });
});

describe('the CDK app, synthesized offline with the default context', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize();
  });

  it('is synthesized once per run: the same context over the whole table is read back (test/infra/synth.ts)', () => {
    expect(process.env.SYNTH_CACHE_DIR).toBeTruthy();
    const again = synthesize();
    expect(again.dir).toBe(s.dir);
    expect(again.templates.map((t) => t.file)).toEqual(s.templates.map((t) => t.file));
  });

  it('has one method per route and no OPTIONS methods (CORS is off)', () => {
    const methods = allOfType(s, 'AWS::ApiGateway::Method');
    expect(methods).toHaveLength(ROUTES.length);
    expect(ROUTES).toHaveLength(322 + ROUTES_BEYOND_CONTRACT.length);
    expect(methods.filter((m) => m.resource.Properties!.HttpMethod === 'OPTIONS')).toHaveLength(0);
  });

  it('has a distinct Lambda function per route, one per route, with the route table\'s handler, nodejs22.x on arm64', () => {
    const fns = functionsByRoute(s);
    expect(fns.size).toBe(ROUTES.length);
    expect([...fns.keys()].sort()).toEqual(ROUTES.map((r) => r.key).sort());
    const names = new Set([...fns.values()].map((f) => f.resource.Properties!.FunctionName as string));
    expect(names.size).toBe(ROUTES.length);
    for (const route of ROUTES) {
      const p = fns.get(route.key)!.resource.Properties!;
      expect(p.Handler, route.key).toBe(route.handler ?? 'not-implemented.handler');
      expect(p.Runtime).toBe('nodejs22.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.TracingConfig).toEqual({ Mode: 'Active' });
      expect(p.LoggingConfig).toMatchObject({ LogFormat: 'JSON' });
      expect(p.Environment.Variables).toMatchObject({ KEY_PROVIDER: 'kms', QUEUE_PROVIDER: 'sqs' });
      expect(p.Environment.Variables.TABLE_NAME).toBeDefined();
      expect(p.Environment.Variables.KMS_KEY_ID).toBeDefined();
      expect(p.Environment.Variables.DYNAMODB_ENDPOINT).toBeUndefined();
      // only queue senders learn the queue's URL
      expect('WEBHOOK_QUEUE_URL' in p.Environment.Variables).toBe(route.grants.includes('queue:send'));
      // only the document functions learn the documents bucket
      expect('DOCUMENTS_BUCKET' in p.Environment.Variables, route.key).toBe(route.grants.some((g) => g.startsWith('documents:')));
      expect('JOBS_QUEUE_URL' in p.Environment.Variables).toBe(route.grants.includes('jobs:send'));
      // only the read-only routes learn the audit queue (lib/audit/queue.ts)
      expect('AUDIT_QUEUE_URL' in p.Environment.Variables, route.key).toBe(route.grants.includes('audit:send'));
    }
  });

  it('keeps protected documents in a private, TLS-only, SSE-KMS, versioned bucket whose old versions expire', () => {
    const buckets = Object.values(s.data.resources as Record<string, { Type: string; Properties: Record<string, any> }>).filter((r) => r.Type === 'AWS::S3::Bucket');
    expect(buckets).toHaveLength(1);
    const p = buckets[0]!.Properties;
    expect(p.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
    expect(p.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    const rule = p.BucketEncryption.ServerSideEncryptionConfiguration[0];
    expect(rule.ServerSideEncryptionByDefault.SSEAlgorithm).toBe('aws:kms');
    expect(rule.BucketKeyEnabled).toBe(true);
    expect(p.LifecycleConfiguration.Rules[0]).toMatchObject({
      Status: 'Enabled',
      NoncurrentVersionExpiration: { NoncurrentDays: 30 },
      ExpiredObjectDeleteMarker: true,
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
    });
    const policies = Object.values(s.data.resources as Record<string, { Type: string; Properties: Record<string, any> }>).filter((r) => r.Type === 'AWS::S3::BucketPolicy');
    expect(JSON.stringify(policies)).toContain('"aws:SecureTransport":"false"');
  });

  it('integrates each method with its own function, on the resource of its path, without gateway credentials', () => {
    const paths = resourcePaths(s.api);
    const seen = new Set<string>();
    for (const template of s.families) {
      const fnByLogicalId = new Map(resourcesOfType(template, 'AWS::Lambda::Function'));
      for (const [, method] of resourcesOfType(template, 'AWS::ApiGateway::Method')) {
        const p = method.Properties!;
        expect(p.Integration.Type).toBe('AWS_PROXY');
        const uriParts = p.Integration.Uri['Fn::Join'][1] as unknown[];
        const getAtt = uriParts.find((x: any) => x?.['Fn::GetAtt']) as { 'Fn::GetAtt': [string, string] };
        const fn = fnByLogicalId.get(getAtt['Fn::GetAtt'][0]);
        expect(fn, 'the function is in the same template').toBeDefined();
        const resourceId = p.ResourceId as { Ref: string };
        const passed = template.passed[resourceId.Ref];
        const path = passed?.['Fn::GetAtt']?.[1] === 'RootResourceId' ? '/' : paths.get(parentRef(template, resourceId));
        const key = `${p.HttpMethod as string} ${path}`;
        expect(fn!.Properties!.Description, 'method and function serve the same route').toBe(key);
        expect(seen.has(key)).toBe(false);
        seen.add(key);
        // Authentication is every handler's own (docs/deployment.md, "What is deployed": Authorization).
        expect(p.AuthorizationType).toBe('NONE');
        expect(p.ApiKeyRequired ?? false).toBe(false);
      }
    }
    expect(seen.size).toBe(ROUTES.length);
    const publicRoutes = ROUTES.filter((r) => r.auth === 'public' || r.auth === 'endpoint');
    expect(publicRoutes.every((r) => seen.has(r.key))).toBe(true);
  });

  it('lets API Gateway invoke each function only for its own method and path', () => {
    for (const template of s.families) {
      const perms = resourcesOfType(template, 'AWS::Lambda::Permission');
      const fns = resourcesOfType(template, 'AWS::Lambda::Function');
      expect(perms).toHaveLength(fns.length);
      for (const [, perm] of perms) {
        expect(perm.Properties!.Principal).toBe('apigateway.amazonaws.com');
        const fnId = perm.Properties!.FunctionName['Fn::GetAtt'][0] as string;
        const route = template.resources[fnId]!.Properties!.Description as string;
        const [method, path] = route.split(' ') as [string, string];
        const arnTail = (perm.Properties!.SourceArn['Fn::Join'][1] as unknown[]).at(-1) as string;
        expect(arnTail).toBe(`/*/${method}${path.replace(/\{[^}]+\}/g, '*')}`);
      }
    }
  });

  it('stays inside the REST API and CloudFormation quotas', () => {
    const resources = resourcesOfType(s.api, 'AWS::ApiGateway::Resource');
    const segments = new Set(ROUTES.flatMap((r) => r.path.split('/').filter(Boolean).map((_, i, all) => all.slice(0, i + 1).join('/'))));
    expect(resources).toHaveLength(segments.size);
    expect(resources.length + 1).toBeLessThan(300); // + the root resource
    for (const t of s.templates) {
      expect(Object.keys(t.resources).length, t.file).toBeLessThan(500);
      expect(t.bytes, t.file).toBeLessThan(1024 * 1024);
      expect(Object.keys(t.parameters).length, t.file).toBeLessThan(200);
    }
    const apiOperation = [s.api, ...s.nested].reduce((n, t) => n + Object.keys(t.resources).length, 0);
    const total = s.templates.reduce((n, t) => n + Object.keys(t.resources).length, 0);
    expect(apiOperation).toBeLessThan(2500);
    expect(total).toBeLessThan(2500);
  });

  it('groups routes into one nested stack per family', () => {
    const families = new Set(ROUTES.map((r) => r.family));
    expect(s.families).toHaveLength(families.size);
    const fns = functionsByRoute(s);
    for (const family of families) {
      const files = new Set(ROUTES.filter((r) => r.family === family).map((r) => fns.get(r.key)!.template.file));
      expect(files.size, family).toBe(1);
    }
  });

  it('grants each function exactly what its route declares, through roles shared by identical grant sets', () => {
    const fns = functionsByRoute(s);
    const roleBySet = new Map<string, string>();
    for (const route of ROUTES) {
      const fn = fns.get(route.key)!;
      expect(actionsOf(s, fn), route.key).toEqual(expectedActions(route.grants, false, false, false, route));
      // tenant routes have their own execution roles (and device routes theirs: the nonce write;
      // temp-token and signed-event routes theirs: the token item or nothing, and the per-IP limiter)
      // (and a route with own items its own: lib/routes.ts OWN_PARTITIONS)
      const set = `${tenancyOf(route) === 'tenant' ? `tenant ${tenantCredentialOf(route)} ` : ''}${[...route.grants].sort().join(' ')}${ownItemsKey(route)}`;
      const role = parentRef(fn.template, fn.resource.Properties!.Role);
      expect(roleBySet.get(set) ?? role, `${route.key} shares the role of its grant set`).toBe(role);
      roleBySet.set(set, role);
    }
    expect(new Set(roleBySet.values()).size).toBe(roleBySet.size);
  });

  it('never grants dynamodb:*, kms:* or any action on Resource "*" beyond those AWS requires there', () => {
    const statements = roleStatements(s);
    expect(statements.length).toBeGreaterThan(0);
    for (const { statement } of statements) {
      expect(statement.Effect).toBe('Allow');
      for (const action of list(statement.Action)) {
        expect(action).not.toMatch(/\*/);
        if (list(statement.Resource).includes('*')) expect(STAR_ACTIONS.has(action), `${action} on *`).toBe(true);
      }
    }
    // the envelope key only with a tenant context; the queue's data keys only through SQS
    for (const { statement } of statements) {
      const actions = list(statement.Action);
      if (actions.includes('kms:Decrypt') || actions.includes('kms:GenerateDataKey')) {
        expect(statement.Condition).toBeDefined();
      }
    }
    // no AWS managed policy on any function role (only API Gateway's account-level logging role has one)
    for (const { id, resource } of allOfType(s, 'AWS::IAM::Role')) {
      if (resource.Properties!.ManagedPolicyArns) expect(id).toMatch(/^ApiCloudWatchRole/);
    }
  });

  it('places no function in a VPC when no signing route has the HSM context', () => {
    const fns = [...functionsByRoute(s).values()];
    expect(fns.filter((f) => f.resource.Properties!.VpcConfig)).toHaveLength(0);
    expect(fns.filter((f) => f.resource.Properties!.Layers)).toHaveLength(0);
  });

  it('reserves no concurrency without the HSM context (signing answers 503 there; the CloudHSM variant reserves: test/infra/operations.test.ts)', () => {
    for (const [key, fn] of functionsByRoute(s)) {
      expect(fn.resource.Properties!.ReservedConcurrentExecutions, key).toBeUndefined();
    }
  });

  it('answers unknown routes 404 with the error envelope, and other gateway errors in the same envelope', () => {
    const responses = new Map(resourcesOfType(s.api, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [r.Properties!.ResponseType as string, r.Properties!]));
    const missing = responses.get('MISSING_AUTHENTICATION_TOKEN')!;
    expect(missing.StatusCode).toBe('404');
    const body = JSON.parse(missing.ResponseTemplates['application/json'] as string);
    expect(body).toEqual({ success: false, error: 'no route matches this path', code: 'route_not_found', request_id: '$context.requestId' });
    expect(missing.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json; charset=utf-8'");
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX', 'THROTTLED', 'WAF_FILTERED', 'INTEGRATION_TIMEOUT']) {
      const template = responses.get(type)!.ResponseTemplates['application/json'] as string;
      expect(template, type).toMatch(/^\{"success":false,"error":.+,"code":"[a-z_]+","request_id":"\$context\.requestId"\}$/);
    }
    // a 5xx never carries API Gateway's own message
    expect(responses.get('DEFAULT_5XX')!.ResponseTemplates['application/json']).not.toContain('$context.error');
    expect(responses.get('THROTTLED')!.StatusCode).toBe('429');
  });

  it('logs access without bodies or raw paths, traces, throttles, and redeploys when the API shape changes', () => {
    const [[, stage]] = resourcesOfType(s.api, 'AWS::ApiGateway::Stage') as [[string, CfnResource]];
    const p = stage.Properties!;
    expect(p.TracingEnabled).toBe(true);
    expect(p.AccessLogSetting.DestinationArn).toBeDefined();
    // the access log group is Infrequent Access (half the ingestion price): nothing filters it
    const accessGroupId = (p.AccessLogSetting.DestinationArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect((s.api.resources as Record<string, CfnResource>)[accessGroupId]!.Properties).toMatchObject({ LogGroupClass: 'INFREQUENT_ACCESS' });
    expect(allOfType(s, 'AWS::Logs::MetricFilter')).toHaveLength(0);
    expect(allOfType(s, 'AWS::Logs::SubscriptionFilter')).toHaveLength(0);
    const format = JSON.parse(p.AccessLogSetting.Format as string) as Record<string, string>;
    expect(format.route).toBe('$context.resourcePath');
    expect(Object.values(format)).not.toContain('$context.path');
    // throttling per route group (infra/throttling.ts): the account quota for any one route,
    // 1,000/500 for unauthenticated and signing routes, each entry in CloudFormation's ~1 encoding
    const settings = p.MethodSettings as Record<string, unknown>[];
    expect(settings[0]).toEqual({ HttpMethod: '*', ResourcePath: '/*', DataTraceEnabled: false, LoggingLevel: 'ERROR', MetricsEnabled: false, ThrottlingRateLimit: 10000, ThrottlingBurstLimit: 5000 });
    const limited = ROUTES.filter((r) => ['public', 'endpoint', 'temp-token'].includes(r.auth) || r.grants.includes('hsm'));
    expect(settings.slice(1).map((m) => `${m.HttpMethod} ${m.ResourcePath}`).sort()).toEqual(
      limited.map((r) => `${r.method} ${r.path === '/' ? '/' : `/${r.path.replaceAll('/', '~1')}`}`).sort(),
    );
    for (const m of settings.slice(1)) {
      expect(m).toEqual({ HttpMethod: m.HttpMethod, ResourcePath: m.ResourcePath, DataTraceEnabled: false, LoggingLevel: 'ERROR', MetricsEnabled: false, ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 500 });
    }
    expect(settings.find((m) => m.ResourcePath === '/~1api~1v1~1crypto~1sign')).toMatchObject({ HttpMethod: 'POST' });
    const [[deploymentId, deployment]] = resourcesOfType(s.api, 'AWS::ApiGateway::Deployment') as [[string, CfnResource]];
    expect(p.DeploymentId).toEqual({ Ref: deploymentId });
    // the deployment waits for every family's methods
    const nestedIds = resourcesOfType(s.api, 'AWS::CloudFormation::Stack')
      .map(([id]) => id)
      .filter((id) => id.startsWith('Family'));
    expect(nestedIds).toHaveLength(s.families.length);
    expect(deployment.DependsOn).toEqual(expect.arrayContaining(nestedIds));
    expect(resourcesOfType(s.api, 'AWS::WAFv2::WebACLAssociation')).toHaveLength(0);
  });

  it("samples X-Ray by the stage's own rule: one request a second, then 1 % (X-Ray's default rule would be 5 %)", () => {
    const [[, api]] = resourcesOfType(s.api, 'AWS::ApiGateway::RestApi') as [[string, CfnResource]];
    const [[, stage]] = resourcesOfType(s.api, 'AWS::ApiGateway::Stage') as [[string, CfnResource]];
    const rules = allOfType(s, 'AWS::XRay::SamplingRule');
    expect(rules).toHaveLength(1);
    const rule = rules[0]!.resource.Properties!.SamplingRule as Record<string, unknown>;
    // API Gateway matches a rule on the service name "<api name>/<stage>" of the traced stage
    expect(rule.ServiceName).toBe(`${api.Properties!.Name}/${stage.Properties!.StageName}`);
    expect(rule).toMatchObject({ ServiceType: 'AWS::ApiGateway::Stage', FixedRate: 0.01, ReservoirSize: 1, Host: '*', HTTPMethod: '*', URLPath: '*', ResourceARN: '*', Version: 1 });
    // before X-Ray's default rule (priority 10000), within X-Ray's 32-character names
    expect(rule.Priority as number).toBeLessThan(10000);
    expect((rule.RuleName as string).length).toBeLessThanOrEqual(32);
    expect(rule.RuleName).toMatch(/^secrets-api-[0-9a-f]{7}$/);
  });

  it('alarms on the 5xx rate, throttles and the dead-letter queue', () => {
    const alarms = allOfType(s, 'AWS::CloudWatch::Alarm').map((a) => a.resource.Properties!);
    expect(alarms.some((a) => a.MetricName === '5XXError' && a.Namespace === 'AWS/ApiGateway' && a.Statistic === 'Average')).toBe(true);
    expect(alarms.some((a) => a.MetricName === 'Throttles' && a.Namespace === 'AWS/Lambda')).toBe(true);
    expect(alarms.some((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && a.Namespace === 'AWS/SQS')).toBe(true);
    // the audit queue: an entry parked in its dead-letter queue, or one waiting on a stalled writer
    const queueId = (prefix: string) => resourcesOfType(s.data, 'AWS::SQS::Queue').find(([id]) => id.startsWith(prefix))![0];
    const onQueue = (metric: string, prefix: string) =>
      alarms.find((a) => a.MetricName === metric && a.Namespace === 'AWS/SQS' && JSON.stringify(a.Dimensions).includes(queueId(prefix)));
    expect(onQueue('ApproximateNumberOfMessagesVisible', 'AuditDeadLetterQueue')).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(onQueue('ApproximateAgeOfOldestMessage', 'AuditQueue')).toMatchObject({ Threshold: 300, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('alarms per route family on p99 latency and the 5xx rate (metric math) of the service metrics, and a dashboard', () => {
    const families = [...new Set(ROUTES.map((r) => r.family))].sort();
    const alarms = resourcesOfType(s.observability, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties!);
    expect(alarms).toHaveLength(2 * families.length);
    for (const family of families) {
      const dims = [
        { Name: 'family', Value: family },
        { Name: 'service', Value: 'secrets-api' },
      ];
      const latency = alarms.find((a) => a.MetricName === 'latency' && JSON.stringify(a.Dimensions) === JSON.stringify(dims));
      expect(latency, family).toMatchObject({ Namespace: 'secrets-api', ExtendedStatistic: 'p99', Period: 300, EvaluationPeriods: 3, TreatMissingData: 'notBreaching' });
      const rate = alarms.find((a) => a.Metrics?.some((m: any) => m.MetricStat?.Metric?.MetricName === 'errors' && JSON.stringify(m.MetricStat.Metric.Dimensions) === JSON.stringify(dims)));
      expect(rate?.Metrics.find((m: any) => m.Expression)?.Expression, family).toBe('100 * errors / requests');
      expect(rate?.Metrics.find((m: any) => m.Id === 'requests')?.MetricStat).toMatchObject({ Metric: { Namespace: 'secrets-api', MetricName: 'requests', Dimensions: dims }, Stat: 'Sum' });
      expect(rate).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanThreshold' });
    }
    // only low-cardinality dimensions on the service's metrics: never an account, a key or a name
    const used = new Set(JSON.stringify(alarms).match(/"Name":"[a-zA-Z_]+"/g));
    expect([...used].sort()).toEqual(['"Name":"family"', '"Name":"service"']);
    // the dashboard shows each family's requests, 5xx rate and p99 latency, the limiter, KMS and HSM
    const [[, dashboard]] = resourcesOfType(s.observability, 'AWS::CloudWatch::Dashboard') as [[string, CfnResource]];
    const body = JSON.stringify(dashboard.Properties!.DashboardBody);
    for (const text of ['limiter_denied', 'kms_calls', 'hsm_calls', 'p99', ...families.map((f) => `\\"family\\",\\"${f}\\"`)]) expect(body, text).toContain(text);
    // the functions emit into the namespace the alarms read, traced
    for (const { resource } of allOfType(s, 'AWS::Lambda::Function').filter((f) => f.resource.Properties!.Environment?.Variables?.TABLE_NAME)) {
      expect(resource.Properties!.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe('secrets-api');
      expect(resource.Properties!.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  it('keeps state in its own stack: the table of lib/store/keys.ts, a rotating key, encrypted queues', () => {
    const [[, table]] = resourcesOfType(s.data, 'AWS::DynamoDB::Table') as [[string, CfnResource]];
    const t = table.Properties!;
    expect(t.KeySchema).toEqual(TABLE_DEFINITION.keySchema);
    expect(t.AttributeDefinitions).toEqual(expect.arrayContaining(TABLE_DEFINITION.attributeDefinitions as unknown as object[]));
    expect(t.GlobalSecondaryIndexes).toEqual([
      { IndexName: 'gsi1', KeySchema: TABLE_DEFINITION.gsi1.KeySchema, Projection: { ProjectionType: 'KEYS_ONLY' } },
      { IndexName: 'plat', KeySchema: TABLE_DEFINITION.plat.KeySchema, Projection: { ProjectionType: 'KEYS_ONLY' } },
    ]);
    expect(t.BillingMode).toBe('PAY_PER_REQUEST');
    expect(t.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(t.DeletionProtectionEnabled).toBe(true);
    expect(t.TimeToLiveSpecification).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
    // the source runtime's table (scripts/local/tables.ts) is this one: keys, indexes, stream, TTL
    expect(t).toMatchObject({
      KeySchema: TABLE_PROPERTIES.KeySchema,
      GlobalSecondaryIndexes: TABLE_PROPERTIES.GlobalSecondaryIndexes,
      StreamSpecification: TABLE_PROPERTIES.StreamSpecification,
      TimeToLiveSpecification: TABLE_PROPERTIES.TimeToLiveSpecification,
    });

    const [[keyId, key]] = resourcesOfType(s.data, 'AWS::KMS::Key') as [[string, CfnResource]];
    expect(key.Properties!.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');

    // the webhook, jobs and audit queues, each with its dead-letter queue, and the outbox
    // stream's failure destination
    const queues = resourcesOfType(s.data, 'AWS::SQS::Queue');
    expect(queues).toHaveLength(7);
    expect(queues.filter(([id]) => id.startsWith('StreamFailureQueue'))).toHaveLength(1);
    for (const [, q] of queues) expect(q.Properties!.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    for (const name of ['Webhook', 'Jobs', 'Audit']) {
      const main = queues.find(([id]) => id.startsWith(`${name}Queue`))!;
      const dlq = queues.find(([id]) => id.startsWith(`${name}DeadLetterQueue`))!;
      expect(main[1].Properties!.RedrivePolicy.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': [dlq[0], 'Arn'] });
      expect(dlq[1].Properties!.RedrivePolicy).toBeUndefined();
    }
  });

  it('wires each background function to its trigger with its declared grants', () => {
    const fns = new Map(resourcesOfType(s.background, 'AWS::Lambda::Function').map(([id, f]) => [f.Properties!.Handler as string, { id, f }]));
    expect([...fns.keys()].sort()).toEqual(BACKGROUND_JOBS.map((j) => j.handler).sort());
    const rules = resourcesOfType(s.background, 'AWS::Events::Rule').map(([, r]) => r.Properties!);
    const mappings = resourcesOfType(s.background, 'AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties!);
    // a worker acting for one account per message or listing entry (tenantAccess 'grants'): its
    // grants through a tenant-access role (no KeyMetadata there), plus the AssumeRole of it and
    // its listings' Query (test/infra/tenancy.test.ts holds both roles statement by statement)
    const expectedOf = (job: (typeof BACKGROUND_JOBS)[number], extra: readonly string[] = []) =>
      job.tenantAccess === 'grants'
        ? [...new Set([...expectedActions(job.grants, false).filter((a) => a !== 'kms:DescribeKey'), ...extra, 'sts:AssumeRole', 'sts:TagSession'])].sort()
        : [...new Set([...expectedActions(job.grants, false), ...extra])].sort();
    for (const job of BACKGROUND_JOBS) {
      const { id, f } = fns.get(job.handler)!;
      expect(f.Properties!.Timeout, job.id).toBe(job.timeout.toSeconds());
      const ref = { 'Fn::GetAtt': [id, 'Arn'] };
      if ('schedule' in job.trigger) {
        const rule = rules.find((r) => JSON.stringify(r.Targets).includes(JSON.stringify(ref)));
        expect(rule?.ScheduleExpression, job.id).toBe(job.trigger.schedule);
      } else if ('stream' in job.trigger) {
        // the table's stream, filtered to outbox and audit inserts, one invocation per shard, partial failures
        const [[tableId, table]] = resourcesOfType(s.data, 'AWS::DynamoDB::Table') as [[string, CfnResource]];
        expect(table.Properties!.StreamSpecification, job.id).toEqual({ StreamViewType: 'NEW_IMAGE' });
        const mapping = mappings.find((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: id }))!;
        expect(JSON.stringify(mapping.EventSourceArn), job.id).toContain(tableId);
        expect(mapping, job.id).toMatchObject({
          StartingPosition: 'TRIM_HORIZON',
          BatchSize: OUTBOX_STREAM.batchSize,
          MaximumBatchingWindowInSeconds: OUTBOX_STREAM.maxBatchingWindowSeconds,
          ParallelizationFactor: 1,
          MaximumRetryAttempts: OUTBOX_STREAM.retryAttempts,
          BisectBatchOnFunctionError: true,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        });
        expect(mapping.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual([
          { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'OUTBOX#' }] } } } },
          { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'AUDIT#' }] } } } },
          { eventName: ['INSERT', 'MODIFY'], dynamodb: { Keys: { sk: { S: [{ prefix: 'LEASE#' }] } } } },
          { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'TOKENKEY#' }] } } } },
        ]);
        expect(rules.some((r) => JSON.stringify(r.Targets).includes(JSON.stringify(ref))), `${job.id}: no schedule`).toBe(false);
        const extra = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
        // the relay acts in each record's account session (tenantAccess 'grants'): its data and key grants through the tenant-access role
        expect(actionsOf(s, { template: s.background, resource: f, local: true }), job.id).toEqual(expectedOf(job, extra));
        continue;
      } else if (job.tenantAccess === 'audit') {
        // the audit writer: consumes the audit queue; its table write is its tenant-access role's
        // (test/infra/tenancy.test.ts holds that role to one statement)
        const mapping = mappings.find((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: id }))!;
        expect(mapping, job.id).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
        const queueId = resourcesOfType(s.data, 'AWS::SQS::Queue').find(([qid]) => qid.startsWith('AuditQueue'))![0];
        expect(JSON.stringify(mapping.EventSourceArn), job.id).toContain(queueId);
        const own = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'kms:Decrypt', 'sts:AssumeRole', 'sts:TagSession'];
        expect(actionsOf(s, { template: s.background, resource: f, local: true }), job.id).toEqual(
          [...new Set([...expectedActions(job.grants, false), ...own, 'dynamodb:PutItem'])].sort(),
        );
        continue;
      } else {
        const mapping = mappings.find((m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: id }));
        expect(mapping?.FunctionResponseTypes, job.id).toEqual(['ReportBatchItemFailures']);
        // the consumer: declared grants plus exactly what consuming and dead-lettering take
        const extra = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes', 'sqs:SendMessage', 'kms:Decrypt', 'kms:GenerateDataKey'];
        expect(actionsOf(s, { template: s.background, resource: f, local: true }), job.id).toEqual(expectedOf(job, extra));
        continue;
      }
      expect(actionsOf(s, { template: s.background, resource: f, local: true }), job.id).toEqual(expectedOf(job));
    }
    // SQS's rule for Lambda consumers: visibility timeout at least 6 x the function's timeout
    for (const worker of BACKGROUND_JOBS.filter((j) => 'queue' in j.trigger)) {
      const name = { jobs: 'JobsQueue', audit: 'AuditQueue', webhook: 'WebhookQueue' }[(worker.trigger as { queue: 'jobs' | 'audit' | 'webhook' }).queue];
      const main = resourcesOfType(s.data, 'AWS::SQS::Queue').find(([id]) => id.startsWith(name))!;
      expect(main[1].Properties!.VisibilityTimeout, worker.id).toBeGreaterThanOrEqual(6 * worker.timeout.toSeconds());
    }
  });

  it('puts no resource of the API in the data stack and no stateful resource in the API stacks', () => {
    const stateful = ['AWS::DynamoDB::Table', 'AWS::KMS::Key', 'AWS::SQS::Queue'];
    for (const t of [s.api, ...s.nested]) {
      for (const r of Object.values(t.resources)) expect(stateful).not.toContain(r.Type);
    }
    expect(Object.values(s.data.resources).some((r) => r.Type.startsWith('AWS::ApiGateway') || r.Type === 'AWS::Lambda::Function')).toBe(false);
  });
});
