import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type Grant, type Route } from '../../lib/routes.js';
import { addAwsSolutionsChecks } from '../../infra/nag.js';
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
  scratchDirectory,
  synthesize,
  type CfnResource,
  type Synthesized,
} from './synth.js';

/**
 * Every supported deployment variant deploys: default, CORS origins, WAF on, CloudHSM
 * context, each synthesized over the WHOLE route table (322 routes, 501 ones included) and
 * every template checked against CloudFormation's and API Gateway's quotas; then what each
 * variant adds. A few narrower checks (KMS signing grants, single-origin gateway
 * responses, stability as the table grows, guards) run on a subset of families, which
 * synthesizes in seconds.
 */

const ORIGINS = ['https://app.example.com', 'https://admin.example.com'];
const WAF_ACL = 'arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/api/0123';
/** Every hsm* context value (infra/settings.ts). */
const HSM = {
  hsmClusterId: 'cluster-abcdefghijk',
  hsmVpcId: 'vpc-0ddd4444',
  hsmSubnetIds: 'subnet-0aaa1111,subnet-0bbb2222',
  hsmSecurityGroupId: 'sg-0ccc3333',
  hsmPinSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:hsm-pin-AbCdEf',
  hsmTokenLabel: 'hsm1',
  hsmLibraryPath: '/opt/cloudhsm/lib/libcloudhsm_pkcs11.so',
  hsmClientConfigPath: '/tmp/cloudhsm/client.cfg',
  hsmConnectionBudget: '240',
  requireHsm: 'true',
};

const VARIANTS = {
  default: () => ({}),
  cors: () => ({ corsOrigins: ORIGINS.join(',') }),
  waf: () => ({ wafWebAclArn: WAF_ACL }),
  cloudhsm: () => ({ ...HSM, hsmLayerPath: hsmLayerStandIn() }),
} satisfies Record<string, () => Record<string, unknown>>;
type Variant = keyof typeof VARIANTS;

/** One synthesis per variant for the whole file. */
const synthesized = new Map<Variant, Synthesized>();
const variant = (name: Variant): Synthesized => {
  let s = synthesized.get(name);
  if (!s) {
    s = synthesize({ context: VARIANTS[name]() });
    synthesized.set(name, s);
  }
  return s;
};

/** CloudFormation quotas (per template) and API Gateway's resources per REST API. */
const QUOTAS = { resources: 500, parameters: 200, outputs: 200, bodyBytes: 1_000_000, resourcesPerOperation: 2_500, apiGatewayResources: 300 };

const HSM_KEYS = ROUTES.filter((r) => r.grants.includes('hsm')).map((r) => r.key).sort();
const ROUTED_PATHS = [...new Set(ROUTES.map((r) => r.path))].sort();

describe.each(Object.keys(VARIANTS) as Variant[])('the %s variant, over the whole route table', (name) => {
  let s: Synthesized;
  beforeAll(() => {
    s = variant(name);
  });

  it('fits every CloudFormation quota: resources, parameters, outputs, template body, resources per nested-stack operation', () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(322);
    expect(ROUTES.every((r) => r.handler !== null)).toBe(true); // every route is built (a future one would deploy as not-implemented)
    expect(s.nested.length).toBeGreaterThan(1);
    const over: string[] = [];
    for (const t of s.templates) {
      const counts = { resources: Object.keys(t.resources).length, parameters: Object.keys(t.parameters).length, outputs: Object.keys(t.outputs).length, bodyBytes: t.bytes };
      for (const [k, v] of Object.entries(counts)) if (v > QUOTAS[k as keyof typeof QUOTAS]) over.push(`${t.file}: ${k} ${v} > ${QUOTAS[k as keyof typeof QUOTAS]}`);
    }
    // one `cdk deploy` of the API stack creates or updates it and all its nested stacks together
    const operation = [s.api, ...s.nested].reduce((n, t) => n + Object.keys(t.resources).length, 0);
    if (operation > QUOTAS.resourcesPerOperation) over.push(`API stack and its nested stacks: ${operation} resources`);
    expect(over).toEqual([]);
  });

  it('fits API Gateway\'s 300 resources per REST API, with one method per route', () => {
    const resources = resourcesOfType(s.api, 'AWS::ApiGateway::Resource');
    expect(resources.length + 1).toBeLessThanOrEqual(QUOTAS.apiGatewayResources); // + the root
    const methods = allOfType(s, 'AWS::ApiGateway::Method').filter((m) => m.resource.Properties!.HttpMethod !== 'OPTIONS');
    expect(methods).toHaveLength(ROUTES.length);
    expect(functionsByRoute(s).size).toBe(ROUTES.length);
  });

  it('places only the signing functions in a VPC (none without the CloudHSM context)', () => {
    const inVpc = allOfType(s, 'AWS::Lambda::Function')
      .filter((f) => f.resource.Properties!.VpcConfig)
      .map((f) => f.resource.Properties!.Description as string)
      .sort();
    expect(inVpc).toEqual(name === 'cloudhsm' ? HSM_KEYS : []);
  });
});

describe('the CORS variant', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = variant('cors');
  });

  it('has an OPTIONS method on every routed path, in the families\' stacks, integrated with the one preflight function', () => {
    const paths = resourcePaths(s.api);
    const [[apiId]] = resourcesOfType(s.api, 'AWS::ApiGateway::RestApi') as [[string, CfnResource]];
    const [[preflightId, preflight]] = resourcesOfType(s.api, 'AWS::Lambda::Function') as [[string, CfnResource]];
    expect(preflight.Properties!.Handler).toBe('public/cors.preflight');
    expect(preflight.Properties!.VpcConfig).toBeUndefined();
    expect(preflight.Properties!.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(ORIGINS.join(','));
    const options = allOfType(s, 'AWS::ApiGateway::Method').filter((m) => m.resource.Properties!.HttpMethod === 'OPTIONS');
    const optionPaths = options.map(({ template, resource }) => {
      expect(s.families).toContain(template);
      const ref = parentRef(template, resource.Properties!.ResourceId);
      return ref === apiId ? '/' : paths.get(ref)!;
    });
    expect(optionPaths.sort()).toEqual(ROUTED_PATHS);
    for (const { template, resource } of options) {
      const integration = resource.Properties!.Integration;
      expect(integration).toMatchObject({ Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' });
      const param = /"Ref":"([^"]+)"\},"\/invocations"/.exec(JSON.stringify(integration.Uri))![1]!;
      expect(template.passed[param]).toEqual({ 'Fn::GetAtt': [preflightId, 'Arn'] });
      expect(resource.Properties!.AuthorizationType).toBe('NONE');
    }
  });

  it('lets API Gateway invoke it under ONE permission for OPTIONS on any path, and every function knows the origins', () => {
    const [[preflightId]] = resourcesOfType(s.api, 'AWS::Lambda::Function') as [[string, CfnResource]];
    const permissions = allOfType(s, 'AWS::Lambda::Permission').filter((p) => JSON.stringify(p.resource.Properties!.SourceArn).includes('OPTIONS'));
    expect(permissions).toHaveLength(1);
    expect(permissions[0]!.template).toBe(s.api);
    expect(permissions[0]!.resource.Properties!.FunctionName).toEqual({ 'Fn::GetAtt': [preflightId, 'Arn'] });
    expect(JSON.stringify(permissions[0]!.resource.Properties!.SourceArn)).toMatch(/\/\*\/OPTIONS\/\*"\]\]\}$/);
    // besides it, the same permissions as without CORS (one per route function)
    expect(allOfType(s, 'AWS::Lambda::Permission').length).toBe(allOfType(variant('default'), 'AWS::Lambda::Permission').length + 1);
    for (const { resource } of allOfType(s, 'AWS::Lambda::Function')) {
      expect(resource.Properties!.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(ORIGINS.join(','));
    }
  });

  it('with two origins, gateway responses name none (a static header cannot echo the request\'s origin)', () => {
    const responses = resourcesOfType(s.api, 'AWS::ApiGateway::GatewayResponse');
    expect(responses.length).toBeGreaterThan(5);
    for (const [, r] of responses) expect(Object.keys(r.Properties!.ResponseParameters ?? {}).filter((k) => k.includes('Access-Control'))).toEqual([]);
  });
});

describe('the WAF variant', () => {
  it('associates the web ACL with the stage', () => {
    const s = variant('waf');
    const [[, assoc]] = resourcesOfType(s.api, 'AWS::WAFv2::WebACLAssociation') as [[string, CfnResource]];
    expect(assoc.Properties!.WebACLArn).toBe(WAF_ACL);
    const [[stageId]] = resourcesOfType(s.api, 'AWS::ApiGateway::Stage') as [[string, CfnResource]];
    expect(JSON.stringify(assoc.Properties!.ResourceArn)).toContain(`"/stages/",{"Ref":"${stageId}"}`);
    expect(resourcesOfType(variant('default').api, 'AWS::WAFv2::WebACLAssociation')).toHaveLength(0);
  });
});

describe('the CloudHSM variant', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = variant('cloudhsm');
  });

  it('creates the signing security group (HSM ports and HTTPS out, nothing in) and the cluster\'s ingress rule from it (TCP 2223-2225)', () => {
    const [[sgId, sg]] = resourcesOfType(s.api, 'AWS::EC2::SecurityGroup') as [[string, CfnResource]];
    expect(sg.Properties!.VpcId).toBe(HSM.hsmVpcId);
    expect(sg.Properties!.SecurityGroupIngress).toBeUndefined();
    expect(sg.Properties!.SecurityGroupEgress).toEqual([
      { IpProtocol: 'tcp', FromPort: 2223, ToPort: 2225, DestinationSecurityGroupId: HSM.hsmSecurityGroupId, Description: 'CloudHSM cluster' },
      { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0', Description: 'AWS APIs through VPC endpoints or NAT' },
    ]);
    const ingress = allOfType(s, 'AWS::EC2::SecurityGroupIngress');
    expect(ingress).toHaveLength(1);
    expect(ingress[0]!.resource.Properties).toEqual({
      GroupId: HSM.hsmSecurityGroupId,
      IpProtocol: 'tcp',
      FromPort: 2223,
      ToPort: 2225,
      SourceSecurityGroupId: { 'Fn::GetAtt': [sgId, 'GroupId'] },
      Description: 'secrets-api signing functions',
    });
    for (const other of ['default', 'cors', 'waf'] as const) {
      expect(allOfType(variant(other), 'AWS::EC2::SecurityGroup'), other).toHaveLength(0);
      expect(allOfType(variant(other), 'AWS::EC2::SecurityGroupIngress'), other).toHaveLength(0);
    }
  });

  it('gives the signing functions the cluster subnets, the signing group, the layer, their share of connections and the cluster id', () => {
    expect(HSM_KEYS.length).toBeGreaterThan(0);
    const fns = functionsByRoute(s);
    const [[layerId, layer]] = resourcesOfType(s.api, 'AWS::Lambda::LayerVersion') as [[string, CfnResource]];
    expect(layer.Properties!.CompatibleArchitectures).toEqual(['arm64']);
    expect(layer.Properties!.CompatibleRuntimes).toEqual(['nodejs22.x']);
    for (const key of HSM_KEYS) {
      const f = fns.get(key)!;
      const p = f.resource.Properties!;
      expect(p.VpcConfig.SubnetIds).toEqual(['subnet-0aaa1111', 'subnet-0bbb2222']);
      expect(p.VpcConfig.SecurityGroupIds.map((g: unknown) => parentRef(f.template, g))).toEqual(['SigningSecurityGroup']);
      expect(p.Layers).toHaveLength(1);
      expect(f.template.passed[p.Layers[0].Ref]).toEqual({ Ref: layerId });
      expect(p.ReservedConcurrentExecutions).toBe(Math.floor(240 / HSM_KEYS.length));
      // the names lib/config.ts reads
      expect(p.Environment.Variables).toMatchObject({
        PKCS11_MODULE: HSM.hsmLibraryPath,
        PKCS11_TOKEN_LABEL: 'hsm1',
        PKCS11_PIN_SECRET_ID: HSM.hsmPinSecretArn,
        PKCS11_POOL_SIZE: '1',
        CLOUDHSM_CLUSTER_ID: HSM.hsmClusterId,
        CLOUDHSM_CLIENT_CONFIG: HSM.hsmClientConfigPath,
      });
    }
    for (const [key, f] of fns) {
      if (HSM_KEYS.includes(key)) continue;
      const p = f.resource.Properties!;
      expect(p.Layers, key).toBeUndefined();
      expect(p.ReservedConcurrentExecutions, key).toBeUndefined();
      expect(p.Environment.Variables.PKCS11_MODULE, key).toBeUndefined();
    }
  });

  it('GET /crypto/backends only describes: outside the VPC, without layer or reserved concurrency, with the cluster id', () => {
    const p = functionsByRoute(s).get('GET /api/v1/crypto/backends')!.resource.Properties!;
    expect(p.VpcConfig).toBeUndefined();
    expect(p.Layers).toBeUndefined();
    expect(p.ReservedConcurrentExecutions).toBeUndefined();
    expect(p.Environment.Variables).toMatchObject({ CLOUDHSM_CLUSTER_ID: HSM.hsmClusterId, PKCS11_TOKEN_LABEL: 'hsm1' });
    expect(p.Environment.Variables.PKCS11_MODULE).toBeUndefined();
  });

  it('grants every route exactly its grants: ENI actions and the PIN only to signing, DescribeClusters to signing and describing', () => {
    const fns = functionsByRoute(s);
    for (const route of ROUTES) {
      expect(actionsOf(s, fns.get(route.key)!), route.key).toEqual(expectedActions(route.grants, true, route.grants.includes('hsm'), false, route));
    }
    const pin = roleStatements(s).filter(({ statement }) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
    expect(pin.length).toBe(new Set(ROUTES.filter((r) => r.grants.includes('hsm')).map((r) => [...r.grants].sort().join(' '))).size);
    for (const { statement } of pin) expect(statement.Resource).toBe(HSM.hsmPinSecretArn);
  });

  it('alarms on each signing function\'s throttles and on the cluster\'s health', () => {
    const alarms = allOfType(s, 'AWS::CloudWatch::Alarm').map((a) => a.resource.Properties!);
    expect(alarms.filter((a) => a.MetricName === 'Throttles' && a.Dimensions)).toHaveLength(HSM_KEYS.length);
    expect(alarms.filter((a) => a.Namespace === 'AWS/CloudHSM' && a.Dimensions[0].Value === HSM.hsmClusterId)).toHaveLength(1);
  });
});

/** A few families: seconds to synthesize. */
const FAMILIES = new Set(['signing', 'secrets', 'public']);
/** A route with the (not yet declared) `kms:sign` grant. */
const KMS_SIGNING = 'GET /api/v1/crypto/signing-keys';
const SUBSET = ROUTES.filter((r) => FAMILIES.has(r.family)).map((r): Route => (r.key === KMS_SIGNING ? { ...r, grants: [...r.grants, 'kms:sign' as Grant] } : r));

describe('on a subset of the route table', () => {
  it('enables the KMS signing backend only where a route declares kms:sign, bounded to tenant-tagged signing keys; every alarm notifies the topic', () => {
    const s = synthesize({ routes: SUBSET, context: { alarmTopicArn: 'arn:aws:sns:eu-west-1:111122223333:ops' } });
    for (const [key, f] of functionsByRoute(s)) expect(f.resource.Properties!.Environment.Variables.SIGNING_KMS_ENABLED, key).toBe(key === KMS_SIGNING ? '1' : '0');
    const create = roleStatements(s).find(({ statement }) => [statement.Action].flat().includes('kms:CreateKey'))!.statement;
    expect(create.Resource).toBe('*');
    expect(create.Condition).toEqual({ StringEquals: { 'kms:KeyUsage': 'SIGN_VERIFY' }, Null: { 'aws:RequestTag/tenant_id': 'false' } });
    const use = roleStatements(s).find(({ statement }) => [statement.Action].flat().includes('kms:Sign'))!.statement;
    expect(use.Condition).toEqual({ Null: { 'aws:ResourceTag/tenant_id': 'false' } });
    const alarms = allOfType(s, 'AWS::CloudWatch::Alarm').map((a) => a.resource.Properties!);
    expect(alarms.length).toBeGreaterThan(2);
    for (const a of alarms) expect(a.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:111122223333:ops']);
  });

  it('with exactly one CORS origin, gateway responses carry it', () => {
    const one = synthesize({ routes: SUBSET.filter((r) => r.family === 'public'), context: { corsOrigins: 'https://app.example.com' } });
    const responses = resourcesOfType(one.api, 'AWS::ApiGateway::GatewayResponse');
    expect(responses.length).toBeGreaterThan(5);
    for (const [, r] of responses) {
      expect(r.Properties!.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'https://app.example.com'");
    }
  });
});

describe('stability as the route table grows', () => {
  const base = SUBSET.filter((r) => r.key !== 'DELETE /api/v1/secrets/{name}');
  let before: Synthesized;
  let after: Synthesized;
  beforeAll(() => {
    before = synthesize({ routes: base });
    after = synthesize({ routes: SUBSET });
  });

  it('adding a route changes no other function, method or role, and lands in its family\'s stack', () => {
    const ids = (s: Synthesized) =>
      new Map(
        [...functionsByRoute(s)].map(([key, f]) => [
          key,
          JSON.stringify({ file: f.template.file, id: f.id, props: f.resource.Properties, role: f.template.passed[f.resource.Properties!.Role.Ref] }),
        ]),
      );
    const a = ids(before);
    const b = ids(after);
    expect(b.size).toBe(a.size + 1);
    for (const [key, value] of a) expect(b.get(key), key).toBe(value);
    const methods = (s: Synthesized) => new Set(allOfType(s, 'AWS::ApiGateway::Method').map((m) => `${m.template.file}#${m.id}`));
    const mb = methods(after);
    for (const m of methods(before)) expect(mb.has(m), m).toBe(true);
    expect(functionsByRoute(after).get('DELETE /api/v1/secrets/{name}')!.template.file).toBe(functionsByRoute(after).get('GET /api/v1/secrets')!.template.file);
  });

  it('redeploys the stage exactly when the API shape changes', () => {
    const deploymentId = (s: Synthesized) => resourcesOfType(s.api, 'AWS::ApiGateway::Deployment').map(([id]) => id)[0];
    expect(deploymentId(after)).not.toBe(deploymentId(before));
    expect(deploymentId(synthesize({ routes: base }))).toBe(deploymentId(before));
  });
});

describe('guards', () => {
  it('refuses to synthesize signing routes without the HSM context when requireHsm is set', () => {
    expect(() => synthesize({ routes: SUBSET, context: { requireHsm: 'true' } })).toThrow(/requireHsm: .*signing route/);
    const { hsmVpcId: _, ...withoutVpc } = HSM;
    expect(() => synthesize({ routes: SUBSET, context: { ...withoutVpc, hsmLayerPath: hsmLayerStandIn() } })).toThrow(/requireHsm: .*hsmVpcId/);
  });

  it('rejects malformed context values', () => {
    expect(() => synthesize({ routes: SUBSET, context: { logRetentionDays: '45' } })).toThrow(/logRetentionDays/);
    expect(() => synthesize({ routes: SUBSET, context: { name: 'Bad_Name' } })).toThrow(/"name"/);
    expect(() => synthesize({ routes: SUBSET, context: { corsOrigins: 'https://app.example.com/' } })).toThrow(/corsOrigins.*not an origin/);
    expect(() => synthesize({ routes: SUBSET, context: { hsmClientConfigPath: '/opt/cloudhsm/etc/cloudhsm-pkcs11.cfg' } })).toThrow(/hsmClientConfigPath.*\/tmp/);
  });

  it('runs cdk-nag\'s AwsSolutions pack at synthesis: an unacknowledged finding fails it', () => {
    const app = new App({ outdir: scratchDirectory('nag-') });
    new sqs.Queue(new Stack(app, 'Probe'), 'PlainQueue');
    addAwsSolutionsChecks(app);
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });
});
