import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../lib/routes.js';
import { MotoDeployer, type MotoServer, motoUnavailable, type StackReport, startMoto } from '../../scripts/deploy/moto.js';
import { hsmLayerStandIn, stubAssetDir, synthesize } from '../infra/synth.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * `npm run test:deploy`: the synthesized stacks of every documented variant deployed into a
 * real CloudFormation engine on loopback (moto), as `cdk deploy` would: assets published to
 * the bootstrap bucket, the data stack, then the API stack with its nested stacks. Every stack
 * must reach CREATE_COMPLETE with every resource moto implements created; what moto does not
 * implement is printed per template (and must be one of MOTO_GAPS, so a new resource type that
 * moto skips is noticed). A template with a dangling reference must fail; an update of one
 * function and a teardown must complete. Code assets are stand-ins (test/infra/synth.ts): the
 * templates are the real ones; the artifact tier runs the real bundles.
 * `ONLY=<variant> npm run test:deploy` deploys one variant (`ONLY=none`: only the failure,
 * update and teardown cases).
 */

/** Resource types moto 5.2.1's CloudFormation does not create (it skips them). */
const MOTO_GAPS = new Set([
  'AWS::CloudWatch::Alarm',
  'AWS::SNS::TopicPolicy',
  'AWS::SNS::Subscription',
  'AWS::SQS::QueuePolicy',
  'AWS::S3::BucketPolicy',
  'AWS::ApiGateway::Account',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::ApiGateway::Stage',
  'AWS::WAFv2::WebACLAssociation',
  // moto's X-Ray has no sampling rules (no CreateSamplingRule, no CloudFormation model)
  'AWS::XRay::SamplingRule',
]);

const unavailable = motoUnavailable();
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The stand-in layer directories made for the run, removed when it ends. */
const layers: string[] = [];
function layerDir(): string {
  const dir = hsmLayerStandIn();
  layers.push(dir);
  return dir;
}

/** The variants of docs/deployment.md, each under its own name so they share one engine. */
const VARIANTS: Record<string, (d: MotoDeployer) => Promise<Record<string, string>> | Record<string, string>> = {
  default: () => ({ name: 'dflt' }),
  cors: () => ({ name: 'cors', corsOrigins: 'https://app.example.com,https://admin.example.com' }),
  waf: () => ({ name: 'waf', wafWebAclArn: 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/api/0123' }),
  cloudhsm: async (d) => {
    const network = await d.hsmNetwork();
    return {
    name: 'hsm',
    hsmClusterId: 'cluster-abcdefghijk',
    hsmVpcId: network.vpcId,
    hsmSubnetIds: network.subnetIds.join(','),
    hsmSecurityGroupId: network.securityGroupId,
    hsmPinSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hsm-pin-AbCdEf',
    hsmLayerPath: layerDir(),
    requireHsm: 'true',
    };
  },
  'alarm e-mail, no API Gateway logging role': () => ({ name: 'mail', alarmEmail: 'ops@example.com', apiGatewayCloudWatchRole: 'false' }),
};

function printReport(variant: string, reports: readonly StackReport[]): void {
  for (const r of reports) {
    log(`[${variant}] ${r.stack}: ${r.status}`);
    for (const t of r.templates) {
      const skipped = Object.entries(t.skipped).map(([type, n]) => `${type} ×${n}`).join(', ');
      log(`[${variant}]   ${t.name.split('/').pop()}: ${t.created}/${t.declared} created${skipped ? `; moto skipped ${skipped}` : ''}`);
    }
  }
}

describe.skipIf(unavailable)(`deploying into moto's CloudFormation${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let moto: MotoServer;
  let deployer: MotoDeployer;

  beforeAll(async () => {
    moto = await startMoto({ log });
    deployer = new MotoDeployer(moto.endpoint, log);
    await deployer.bootstrap();
  }, scaled(120_000));

  afterAll(async () => {
    await moto?.stop();
    for (const dir of layers.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  for (const [variant, context] of Object.entries(VARIANTS).filter(([v]) => !process.env.ONLY || v === process.env.ONLY)) {
    it(`the ${variant} variant: every stack CREATE_COMPLETE, everything moto implements created`, async () => {
      log(`[${variant}] synthesizing over the whole route table…`);
      const s = synthesize({ context: await context(deployer) });
      await deployer.publishAssets(s.dir);
      const reports: StackReport[] = [];
      for (const stack of deployer.stacks(s.dir)) reports.push(await deployer.create(stack.name, stack.templateUrl));
      printReport(variant, reports);
      expect(reports.map((r) => [r.stack, r.status, r.reason ?? ''])).toEqual(reports.map((r) => [r.stack, 'CREATE_COMPLETE', '']));
      const templates = reports.flatMap((r) => r.templates);
      // the data stack, the API stack and each nested stack
      expect(templates).toHaveLength(s.templates.length);
      for (const t of templates) {
        const skipped = Object.values(t.skipped).reduce((a, b) => a + b, 0);
        expect(t.created + skipped, t.name).toBe(t.declared);
        for (const type of Object.keys(t.skipped)) expect(MOTO_GAPS.has(type), `${t.name}: moto skipped ${type}, not a known gap`).toBe(true);
      }
      const created = templates.reduce((n, t) => n + t.created, 0);
      log(`[${variant}] ${created} resources created in ${templates.length} templates`);
      expect(created).toBeGreaterThan(1_500);
    }, scaled(600_000));
  }

  it('lists what it changed for moto (the alarm ARNs the dashboard reads)', () => {
    log(`template changes for moto:\n  ${deployer.adaptations.join('\n  ')}`);
    if (!process.env.ONLY) expect(deployer.adaptations.length).toBeGreaterThan(0);
    expect(deployer.adaptations.every((a) => a.includes('AWS::CloudWatch::Alarm'))).toBe(true);
  });

  it('fails a template with a dangling reference', async () => {
    const s = synthesize({ context: { name: 'broken' }, routes: ROUTES.filter((r) => r.family === 'public') });
    const file = join(s.dir, s.data.file);
    const template = JSON.parse(readFileSync(file, 'utf8'));
    template.Resources.Dangling = { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::GetAtt': ['NoSuchResource', 'QueueName'] } } };
    writeFileSync(file, JSON.stringify(template));
    await deployer.publishAssets(s.dir);
    const [stack] = deployer.stacks(s.dir);
    const before = moto.output().length;
    const outcome = await deployer.create(stack!.name, stack!.templateUrl).then(
      (r) => `${r.status} ${r.reason ?? ''}`,
      // moto answers some template errors with a 500 and its traceback in its own output
      (e: Error) => `${e.message}\n${moto.output().slice(before).split('\n').filter((l) => /Error|Exception/.test(l)).slice(-3).join('\n')}`,
    );
    log(`[broken] ${outcome}`);
    expect(outcome).not.toMatch(/^CREATE_COMPLETE/);
    expect(outcome).toMatch(/NoSuchResource/);
  }, scaled(300_000));

  it('updates a changed function in place, then tears everything down', async () => {
    const routes = ROUTES.filter((r) => r.family === 'public' || r.family === 'secrets');
    const first = synthesize({ context: { name: 'upd' }, routes });
    await deployer.publishAssets(first.dir);
    const stacks = deployer.stacks(first.dir);
    for (const stack of stacks) expect((await deployer.create(stack.name, stack.templateUrl)).status).toBe('CREATE_COMPLETE');

    // one handler's code changes: a new asset hash, its family's template changes, nothing else
    const assets = stubAssetDir(routes);
    const module = 'secrets/secrets';
    const changed = readdirFile(assets, `${module}.mjs`);
    writeFileSync(changed, `${readFileSync(changed, 'utf8')}// changed\n`);
    const second = synthesize({ context: { name: 'upd' }, routes, assetDir: assets });
    await deployer.publishAssets(second.dir);
    const api = deployer.stacks(second.dir).find((s) => s.name === 'upd-api')!;
    const updated = await deployer.update(api.name, api.templateUrl);
    printReport('update', [updated]);
    expect(updated.status).toBe('UPDATE_COMPLETE');

    for (const stack of [...stacks].reverse()) expect(await deployer.delete(stack.name)).toBe('DELETE_COMPLETE');
  }, scaled(600_000));
});

/** The one file of that name under the stand-in asset directory. */
function readdirFile(dir: string, suffix: string): string {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
  const found = walk(dir).filter((f) => f.endsWith(suffix));
  if (found.length !== 1) throw new Error(`expected one ${suffix} under ${dir}, found ${found.length}`);
  return found[0]!;
}
