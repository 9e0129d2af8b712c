import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES, type Grant, type Route } from '../../lib/routes.js';
import { addAwsSolutionsChecks } from '../../infra/nag.js';
import { actionsOf, allOfType, expectedActions, functionsByRoute, resourcesOfType, roleStatements, synthesize, type CfnResource, type Synthesized } from './synth.js';

/**
 * The app with its optional context (CloudHSM, CORS, WAF, alarm topic), on a few families
 * of the route table so that it synthesizes in seconds; and the properties that keep a
 * deployment stable as the route table grows.
 */

const FAMILIES = new Set(['signing', 'secrets', 'public']);
/** A route that signs with the HSM, and one with the (not yet declared) `kms:sign` grant. */
const KMS_SIGNING = 'GET /api/v1/crypto/signing-keys';
const withGrants = (r: Route): Route =>
  r.key === 'POST /api/v1/crypto/sign'
    ? { ...r, grants: [...new Set<Grant>([...r.grants, 'hsm'])] }
    : r.key === KMS_SIGNING
      ? { ...r, grants: [...r.grants, 'kms:sign' as Grant] }
      : r;
const SUBSET = ROUTES.filter((r) => FAMILIES.has(r.family)).map(withGrants);
const HSM = {
  hsmClusterId: 'cluster-abcdefghijk',
  hsmVpcId: 'vpc-0ddd4444',
  hsmSubnetIds: 'subnet-0aaa1111,subnet-0bbb2222',
  hsmSecurityGroupId: 'sg-0ccc3333',
  hsmPinSecretArn: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:hsm-pin-AbCdEf',
};

function layerDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hsm-layer-'));
  writeFileSync(join(dir, 'README'), 'stand-in for cloudhsm/ and nodejs/node_modules/pkcs11js\n');
  return dir;
}

describe('with CloudHSM, CORS, WAF and an alarm topic configured', () => {
  let s: Synthesized;
  const origins = ['https://app.example.com', 'https://admin.example.com'];
  beforeAll(() => {
    s = synthesize({
      routes: SUBSET,
      context: {
        ...HSM,
        hsmLayerPath: layerDir(),
        corsOrigins: origins.join(','),
        wafWebAclArn: 'arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/api/0123',
        alarmTopicArn: 'arn:aws:sns:eu-west-1:111122223333:ops',
      },
    });
  });

  it('places exactly the signing functions in the cluster subnets, with the PKCS#11 layer and reserved concurrency', () => {
    const hsmKeys = SUBSET.filter((r) => r.grants.includes('hsm')).map((r) => r.key).sort();
    expect(hsmKeys.length).toBeGreaterThan(0);
    const fns = functionsByRoute(s);
    const inVpc = [...fns].filter(([, f]) => f.resource.Properties!.VpcConfig).map(([k]) => k).sort();
    expect(inVpc).toEqual(hsmKeys);
    const [[layerId, layer]] = resourcesOfType(s.api, 'AWS::Lambda::LayerVersion') as [[string, CfnResource]];
    expect(layer.Properties!.CompatibleArchitectures).toEqual(['arm64']);
    expect(layer.Properties!.CompatibleRuntimes).toEqual(['nodejs22.x']);
    for (const key of hsmKeys) {
      const f = fns.get(key)!;
      const p = f.resource.Properties!;
      expect(p.VpcConfig.SubnetIds).toEqual(['subnet-0aaa1111', 'subnet-0bbb2222']);
      expect(p.VpcConfig.SecurityGroupIds).toHaveLength(1);
      expect(f.template.passed[p.VpcConfig.SecurityGroupIds[0].Ref]).toEqual({ 'Fn::GetAtt': ['SigningSecurityGroup', 'GroupId'] });
      expect(p.Layers).toHaveLength(1);
      expect(f.template.passed[p.Layers[0].Ref]).toEqual({ Ref: layerId });
      expect(p.ReservedConcurrentExecutions).toBe(Math.floor(300 / hsmKeys.length));
      // the names lib/config.ts reads
      expect(p.Environment.Variables).toMatchObject({
        PKCS11_MODULE: '/opt/cloudhsm/lib/libcloudhsm_pkcs11.so',
        PKCS11_TOKEN_LABEL: 'hsm1',
        PKCS11_PIN_SECRET_ID: HSM.hsmPinSecretArn,
        PKCS11_POOL_SIZE: '1',
        CLOUDHSM_CLUSTER_ID: HSM.hsmClusterId,
        CLOUDHSM_CLIENT_CONFIG: '/tmp/cloudhsm/cloudhsm-pkcs11.cfg',
      });
    }
    for (const [key, f] of fns) {
      if (hsmKeys.includes(key)) continue;
      expect(f.resource.Properties!.Layers, key).toBeUndefined();
      expect(f.resource.Properties!.Environment.Variables.PKCS11_MODULE, key).toBeUndefined();
    }
  });

  it('creates the signing security group (HSM ports and HTTPS out, nothing in) and the cluster\'s ingress rule from it', () => {
    const [[sgId, sg]] = resourcesOfType(s.api, 'AWS::EC2::SecurityGroup') as [[string, CfnResource]];
    expect(sgId).toBe('SigningSecurityGroup');
    expect(sg.Properties!.VpcId).toBe(HSM.hsmVpcId);
    expect(sg.Properties!.SecurityGroupIngress).toBeUndefined();
    expect(sg.Properties!.SecurityGroupEgress).toEqual([
      { IpProtocol: 'tcp', FromPort: 2223, ToPort: 2225, DestinationSecurityGroupId: HSM.hsmSecurityGroupId, Description: 'CloudHSM cluster' },
      { IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0', Description: 'AWS APIs through VPC endpoints or NAT' },
    ]);
    const [[, ingress]] = resourcesOfType(s.api, 'AWS::EC2::SecurityGroupIngress') as [[string, CfnResource]];
    expect(ingress.Properties).toEqual({
      GroupId: HSM.hsmSecurityGroupId,
      IpProtocol: 'tcp',
      FromPort: 2223,
      ToPort: 2225,
      SourceSecurityGroupId: { 'Fn::GetAtt': [sgId, 'GroupId'] },
      Description: 'secrets-api signing functions',
    });
  });

  it('GET /crypto/backends only describes: outside the VPC, no layer, no reserved concurrency, the cluster id and DescribeClusters', () => {
    const f = functionsByRoute(s).get('GET /api/v1/crypto/backends')!;
    const p = f.resource.Properties!;
    expect(p.VpcConfig).toBeUndefined();
    expect(p.Layers).toBeUndefined();
    expect(p.ReservedConcurrentExecutions).toBeUndefined();
    expect(p.Environment.Variables).toMatchObject({ CLOUDHSM_CLUSTER_ID: HSM.hsmClusterId, PKCS11_TOKEN_LABEL: 'hsm1' });
    expect(p.Environment.Variables.PKCS11_MODULE).toBeUndefined();
    expect(actionsOf(s, f)).toContain('cloudhsm:DescribeClusters');
    expect(actionsOf(s, f)).not.toContain('ec2:CreateNetworkInterface');
  });

  it('gives only the signing role the network-interface and PIN permissions', () => {
    const fns = functionsByRoute(s);
    for (const route of SUBSET) {
      expect(actionsOf(s, fns.get(route.key)!), route.key).toEqual(expectedActions(route.grants, true, route.grants.includes('hsm')));
    }
    const pin = roleStatements(s).filter(({ statement }) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
    const hsmGrantSets = new Set(SUBSET.filter((r) => r.grants.includes('hsm')).map((r) => [...r.grants].sort().join(' ')));
    expect(pin).toHaveLength(hsmGrantSets.size);
    for (const { statement } of pin) expect(statement.Resource).toBe(HSM.hsmPinSecretArn);
  });

  it('enables the KMS signing backend only where a route declares kms:sign, bounded to tenant-tagged signing keys', () => {
    const fns = functionsByRoute(s);
    expect(SUBSET.some((r) => r.key === KMS_SIGNING)).toBe(true);
    for (const [key, f] of fns) expect(f.resource.Properties!.Environment.Variables.SIGNING_KMS_ENABLED, key).toBe(key === KMS_SIGNING ? '1' : '0');
    const create = roleStatements(s).find(({ statement }) => [statement.Action].flat().includes('kms:CreateKey'))!.statement;
    expect(create.Resource).toBe('*');
    expect(create.Condition).toEqual({ StringEquals: { 'kms:KeyUsage': 'SIGN_VERIFY' }, Null: { 'aws:RequestTag/tenant_id': 'false' } });
    const use = roleStatements(s).find(({ statement }) => [statement.Action].flat().includes('kms:Sign'))!.statement;
    expect(use.Condition).toEqual({ Null: { 'aws:ResourceTag/tenant_id': 'false' } });
  });

  it('alarms on each signing function\'s throttles and notifies the topic from every alarm', () => {
    const alarms = allOfType(s, 'AWS::CloudWatch::Alarm').map((a) => a.resource.Properties!);
    const hsmCount = SUBSET.filter((r) => r.grants.includes('hsm')).length;
    expect(alarms.filter((a) => a.MetricName === 'Throttles' && a.Dimensions)).toHaveLength(hsmCount);
    expect(alarms.filter((a) => a.Namespace === 'AWS/CloudHSM' && a.Dimensions[0].Value === HSM.hsmClusterId)).toHaveLength(1);
    for (const a of alarms) expect(a.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:111122223333:ops']);
  });

  it('adds one OPTIONS method per routed path in the families\' stacks, all integrated with the one preflight function, invoked under one permission', () => {
    const options = allOfType(s, 'AWS::ApiGateway::Method').filter((m) => m.resource.Properties!.HttpMethod === 'OPTIONS');
    expect(options).toHaveLength(new Set(SUBSET.map((r) => r.path)).size);
    const methods = allOfType(s, 'AWS::ApiGateway::Method').filter((m) => m.resource.Properties!.HttpMethod !== 'OPTIONS');
    expect(methods).toHaveLength(SUBSET.length);
    const [[preflightId, preflight]] = resourcesOfType(s.api, 'AWS::Lambda::Function') as [[string, CfnResource]];
    expect(preflight.Properties!.Handler).toBe('public/cors.preflight');
    expect(preflight.Properties!.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(origins.join(','));
    for (const { template, resource } of options) {
      expect(s.families).toContain(template);
      const integration = resource.Properties!.Integration;
      expect(integration.Type).toBe('AWS_PROXY');
      expect(integration.IntegrationHttpMethod).toBe('POST');
      const uri = JSON.stringify(integration.Uri);
      const param = /"Ref":"([^"]+)"\},"\/invocations"/.exec(uri)![1]!;
      expect(template.passed[param]).toEqual({ 'Fn::GetAtt': [preflightId, 'Arn'] });
      expect(resource.Properties!.AuthorizationType).toBe('NONE');
    }
    const permissions = allOfType(s, 'AWS::Lambda::Permission').filter((p) => JSON.stringify(p.resource.Properties!.SourceArn).includes('OPTIONS'));
    expect(permissions).toHaveLength(1);
    expect(permissions[0]!.template).toBe(s.api);
    expect(permissions[0]!.resource.Properties!.FunctionName).toEqual({ 'Fn::GetAtt': [preflightId, 'Arn'] });
    expect(JSON.stringify(permissions[0]!.resource.Properties!.SourceArn)).toMatch(/\/\*\/OPTIONS\/\*"\]\]\}$/);
    for (const { resource } of allOfType(s, 'AWS::Lambda::Function')) {
      expect(resource.Properties!.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(origins.join(','));
    }
    // two origins: a static gateway response cannot pick one, so it names none
    for (const [, r] of resourcesOfType(s.api, 'AWS::ApiGateway::GatewayResponse')) {
      expect(Object.keys(r.Properties!.ResponseParameters ?? {}).filter((k) => k.includes('Access-Control'))).toEqual([]);
    }
  });

  it('with exactly one origin, gateway responses carry it', () => {
    const one = synthesize({ routes: SUBSET.filter((r) => r.family === 'public'), context: { corsOrigins: 'https://app.example.com' } });
    const responses = resourcesOfType(one.api, 'AWS::ApiGateway::GatewayResponse');
    expect(responses.length).toBeGreaterThan(5);
    for (const [, r] of responses) {
      expect(r.Properties!.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe("'https://app.example.com'");
    }
  });

  it('refuses a CORS origin a browser would never send', () => {
    expect(() => synthesize({ routes: SUBSET, context: { corsOrigins: 'https://app.example.com/' } })).toThrow(/corsOrigins.*not an origin/);
  });

  it('associates the web ACL with the stage', () => {
    const [[, assoc]] = resourcesOfType(s.api, 'AWS::WAFv2::WebACLAssociation') as [[string, CfnResource]];
    expect(assoc.Properties!.WebACLArn).toBe('arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/api/0123');
    const [[stageId]] = resourcesOfType(s.api, 'AWS::ApiGateway::Stage') as [[string, CfnResource]];
    expect(JSON.stringify(assoc.Properties!.ResourceArn)).toContain(`"/stages/",{"Ref":"${stageId}"}`);
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
  });

  it('rejects malformed context values', () => {
    expect(() => synthesize({ routes: SUBSET, context: { logRetentionDays: '45' } })).toThrow(/logRetentionDays/);
    expect(() => synthesize({ routes: SUBSET, context: { name: 'Bad_Name' } })).toThrow(/"name"/);
  });

  it('runs cdk-nag\'s AwsSolutions pack at synthesis: an unacknowledged finding fails it', () => {
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), 'nag-')) });
    new sqs.Queue(new Stack(app, 'Probe'), 'PlainQueue');
    addAwsSolutionsChecks(app);
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });
});
