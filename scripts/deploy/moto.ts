/**
 * Deploys a synthesized cloud assembly into moto's CloudFormation on loopback, the way the CDK
 * toolkit does it: every file asset of the assembly's asset manifests published to the
 * bootstrap bucket (directories zipped), the CDK bootstrap version parameter in SSM, each
 * stack created from its template in S3 in dependency order, nested stacks from their own
 * template assets. Reports every stack's final status and, per template, the resources
 * CloudFormation created and those moto does not implement (listed, not hidden).
 *
 * moto (`python3 -m moto.server`, 5.2.1 on these machines) is a CloudFormation engine: it
 * resolves Ref/GetAtt/ImportValue between stacks, creates nested stacks from S3, and fails a
 * stack on a reference it cannot resolve; what it does not implement is skipped (the
 * report's `skipped`). Used by test/deploy/moto.test.ts (`npm run test:deploy`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudFormationClient,
  CreateStackCommand,
  DeleteStackCommand,
  DescribeStacksCommand,
  GetTemplateCommand,
  ListStackResourcesCommand,
  type StackResourceSummary,
  UpdateStackCommand,
} from '@aws-sdk/client-cloudformation';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../local/ports.js';

export const MOTO_ACCOUNT = '123456789012';
export const MOTO_REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/** Why moto cannot run here, or undefined when it can. */
export function motoUnavailable(): string | undefined {
  const probe = spawnSync('python3', ['-c', 'import moto, flask; print(moto.__version__)'], { encoding: 'utf8' });
  if (probe.error) return `python3 is not installed (${probe.error.message})`;
  if (probe.status !== 0) return 'moto is not installed for python3 (pip install "moto[server]")';
  return undefined;
}

export interface MotoServer {
  readonly endpoint: string;
  stop(): Promise<void>;
  /** What the server printed (its request log). */
  output(): string;
}

/** Starts `python3 -m moto.server` on a free loopback port, in its own process group. */
export async function startMoto(options: { timeoutMs?: number; log?: (line: string) => void } = {}): Promise<MotoServer> {
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }, 5_000);
    await exited;
    clearTimeout(timer);
  };
  const onExit = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {}
  };
  process.once('exit', onExit);
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  options.log?.(`moto: starting on ${endpoint}`);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto exited with ${child.exitCode} before answering:\n${output.slice(-2000)}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`moto did not answer on ${endpoint} within ${options.timeoutMs ?? 60_000} ms:\n${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  options.log?.('moto: answering');
  return { endpoint, stop: async () => (process.off('exit', onExit), await stop()), output: () => output };
}

interface AssetManifest {
  files?: Record<string, { source: { path: string; packaging?: 'zip' | 'file' }; destinations: Record<string, { bucketName: string; objectKey: string }> }>;
}

interface AssemblyManifest {
  artifacts: Record<string, { type: string; properties?: { templateFile?: string; stackTemplateAssetObjectUrl?: string; parameters?: Record<string, string> }; dependencies?: string[] }>;
}

const substitute = (s: string) =>
  s.replaceAll('${AWS::AccountId}', MOTO_ACCOUNT).replaceAll('${AWS::Region}', MOTO_REGION).replaceAll('${AWS::Partition}', 'aws');

/**
 * Directories as zip archives with their contents at the root (as Lambda expects code), by
 * python's zipfile in one process for all of them: directory -> archive path.
 */
function zipDirectories(dirs: readonly string[]): { archives: Map<string, string>; remove: () => void } {
  const outDir = mkdtempSync(join(tmpdir(), 'moto-assets-'));
  const pairs = dirs.map((dir, i) => [dir, join(outDir, `${i}.zip`)] as const);
  const script = [
    'import json, os, sys, zipfile',
    'for src, dst in json.load(sys.stdin):',
    '    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:',
    '        for root, _, files in os.walk(src):',
    '            for f in sorted(files):',
    '                p = os.path.join(root, f)',
    '                z.write(p, os.path.relpath(p, src))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(pairs), encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(outDir, { recursive: true, force: true });
    throw new Error(`zipping the code assets failed: ${r.stderr}`);
  }
  return { archives: new Map(pairs), remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

/**
 * What moto needs changed in a template, each change named: moto does not implement
 * AWS::CloudWatch::Alarm, and refuses a template whose Fn::GetAtt names one (the dashboard's
 * alarm widgets read the alarms' ARNs): such a GetAtt becomes the ARN AWS would give the alarm.
 */
export function adaptForMoto(template: { Resources?: Record<string, { Type: string; Properties?: Record<string, unknown> }> }): string[] {
  const alarms = new Set(Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm').map(([id]) => id));
  let replaced = 0;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const getAtt = (v as Record<string, unknown>)['Fn::GetAtt'];
    if (Array.isArray(getAtt) && getAtt[1] === 'Arn' && alarms.has(getAtt[0] as string)) {
      replaced++;
      return `arn:aws:cloudwatch:${MOTO_REGION}:${MOTO_ACCOUNT}:alarm:${getAtt[0] as string}`;
    }
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)]));
  };
  for (const r of Object.values(template.Resources ?? {})) if (r.Properties) r.Properties = walk(r.Properties) as Record<string, unknown>;
  return replaced > 0 ? [`${replaced} Fn::GetAtt <alarm>.Arn made literal (moto does not implement AWS::CloudWatch::Alarm)`] : [];
}

export interface StackReport {
  readonly stack: string;
  readonly status: string;
  readonly reason?: string;
  /** Per template (the stack and each nested stack): resources created by type, and those moto skipped. */
  readonly templates: { name: string; declared: number; created: number; skipped: Record<string, number> }[];
}

export interface DeployReport {
  readonly stacks: StackReport[];
  readonly assets: number;
}

export class MotoDeployer {
  /** Every change made to a template for moto (adaptForMoto), by template file. */
  readonly adaptations: string[] = [];
  private readonly published = new Set<string>();
  private readonly cfn: CloudFormationClient;
  private readonly s3: S3Client;
  constructor(
    private readonly endpoint: string,
    private readonly log: (line: string) => void = () => {},
  ) {
    const common = { endpoint, region: MOTO_REGION, credentials: CREDENTIALS, maxAttempts: 1 };
    this.cfn = new CloudFormationClient(common);
    this.s3 = new S3Client({ ...common, forcePathStyle: true });
  }

  /** What `cdk bootstrap` leaves that a deployment reads: the asset bucket and the bootstrap version parameter. */
  async bootstrap(): Promise<void> {
    await this.s3.send(new CreateBucketCommand({ Bucket: `cdk-hnb659fds-assets-${MOTO_ACCOUNT}-${MOTO_REGION}` })).catch((e: Error) => {
      if (!/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(e.name)) throw e;
    });
    const res = await fetch(this.endpoint, {
      method: 'POST',
      // moto routes a request by the service and region of its credential scope (it checks no signature)
      headers: {
        'Content-Type': 'application/x-amz-json-1.1',
        'X-Amz-Target': 'AmazonSSM.PutParameter',
        Authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${MOTO_REGION}/ssm/aws4_request, SignedHeaders=host, Signature=0`,
      },
      body: JSON.stringify({ Name: '/cdk-bootstrap/hnb659fds/version', Value: '30', Type: 'String', Overwrite: true }),
    });
    if (!res.ok) throw new Error(`SSM PutParameter of the bootstrap version failed: ${res.status} ${await res.text()}`);
  }

  /**
   * What exists before a CloudHSM deployment (docs/deployment.md, CloudHSM): the cluster's VPC,
   * two subnets and the cluster's security group, created with EC2's query API; their ids.
   */
  async hsmNetwork(): Promise<{ vpcId: string; subnetIds: string[]; securityGroupId: string }> {
    const ec2 = async (params: Record<string, string>): Promise<string> => {
      const res = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${MOTO_REGION}/ec2/aws4_request, SignedHeaders=host, Signature=0`,
        },
        body: new URLSearchParams({ ...params, Version: '2016-11-15' }).toString(),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`EC2 ${params.Action}: ${res.status} ${text.slice(0, 300)}`);
      return text;
    };
    const idOf = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(xml)?.[1] ?? fail(`no ${tag} in ${xml.slice(0, 300)}`);
    const vpcId = idOf(await ec2({ Action: 'CreateVpc', CidrBlock: '10.20.0.0/16' }), 'vpcId');
    const subnetIds = [
      idOf(await ec2({ Action: 'CreateSubnet', VpcId: vpcId, CidrBlock: '10.20.1.0/24', AvailabilityZone: `${MOTO_REGION}a` }), 'subnetId'),
      idOf(await ec2({ Action: 'CreateSubnet', VpcId: vpcId, CidrBlock: '10.20.2.0/24', AvailabilityZone: `${MOTO_REGION}b` }), 'subnetId'),
    ];
    const securityGroupId = idOf(await ec2({ Action: 'CreateSecurityGroup', VpcId: vpcId, GroupName: 'cloudhsm-cluster', GroupDescription: 'the cluster group CloudHSM creates' }), 'groupId');
    return { vpcId, subnetIds, securityGroupId };
  }

  /** Publishes every file asset of the assembly (zip packaging zipped), as cdk-assets does. */
  async publishAssets(dir: string): Promise<number> {
    const assets = readdirSync(dir)
      .filter((f) => f.endsWith('.assets.json'))
      .flatMap((file) => Object.values((JSON.parse(readFileSync(join(dir, file), 'utf8')) as AssetManifest).files ?? {}));
    // an object key names its content's hash (as in the CDK bootstrap bucket): what is there is current
    const fresh = assets.filter((a) => Object.values(a.destinations).some((d) => !this.published.has(d.objectKey)));
    const zips = zipDirectories(fresh.filter((a) => a.source.packaging === 'zip').map((a) => join(dir, a.source.path)));
    let puts: { Bucket: string; Key: string; body: Buffer }[];
    try {
      puts = fresh.flatMap((asset) => {
        const source = join(dir, asset.source.path);
        let body: Buffer = readFileSync(asset.source.packaging === 'zip' ? zips.archives.get(source)! : source);
        if (asset.source.packaging !== 'zip' && source.endsWith('.template.json')) {
          const template = JSON.parse(body.toString('utf8'));
          for (const change of adaptForMoto(template)) this.adaptations.push(`${asset.source.path}: ${change}`);
          body = Buffer.from(JSON.stringify(template));
        }
        return Object.values(asset.destinations).map((d) => ({ Bucket: substitute(d.bucketName), Key: d.objectKey, body }));
      });
    } finally {
      // the archives are read: they left a directory in /tmp per published assembly before
      zips.remove();
    }
    // a few at a time: moto serves one request per thread
    for (let i = 0; i < puts.length; i += 8) {
      await Promise.all(puts.slice(i, i + 8).map((p) => this.s3.send(new PutObjectCommand({ Bucket: p.Bucket, Key: p.Key, Body: p.body }))));
    }
    for (const p of puts) this.published.add(p.Key);
    this.log(`moto: published ${fresh.length} new assets (${assets.length - fresh.length} already there)`);
    return fresh.length;
  }

  /** The assembly's stacks in dependency order, with their template URLs in the asset bucket. */
  stacks(dir: string): { name: string; templateUrl: string; templateFile: string }[] {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as AssemblyManifest;
    const stacks = Object.entries(manifest.artifacts).filter(([, a]) => a.type === 'aws:cloudformation:stack');
    const ordered: string[] = [];
    const visit = (name: string) => {
      if (ordered.includes(name)) return;
      for (const dep of manifest.artifacts[name]?.dependencies ?? []) if (stacks.some(([n]) => n === dep)) visit(dep);
      ordered.push(name);
    };
    for (const [name] of stacks) visit(name);
    return ordered.map((name) => {
      const props = manifest.artifacts[name]!.properties!;
      // s3://bucket/key -> the regional virtual-path URL CloudFormation accepts
      const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(substitute(props.stackTemplateAssetObjectUrl!))!;
      return { name, templateFile: props.templateFile!, templateUrl: `https://s3.${MOTO_REGION}.amazonaws.com/${bucket}/${key}` };
    });
  }

  async create(name: string, templateUrl: string): Promise<StackReport> {
    this.log(`moto: creating ${name}`);
    await this.cfn.send(new CreateStackCommand({ StackName: name, TemplateURL: templateUrl, Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM', 'CAPABILITY_AUTO_EXPAND'] }));
    return this.settle(name);
  }

  async update(name: string, templateUrl: string): Promise<StackReport> {
    this.log(`moto: updating ${name}`);
    await this.cfn.send(new UpdateStackCommand({ StackName: name, TemplateURL: templateUrl, Capabilities: ['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM', 'CAPABILITY_AUTO_EXPAND'] }));
    return this.settle(name);
  }

  async delete(name: string): Promise<string> {
    this.log(`moto: deleting ${name}`);
    await this.cfn.send(new DeleteStackCommand({ StackName: name }));
    for (let i = 0; i < 600; i++) {
      const stacks = await this.cfn.send(new DescribeStacksCommand({ StackName: name })).catch(() => ({ Stacks: [] }));
      const status = stacks.Stacks?.[0]?.StackStatus ?? 'DELETE_COMPLETE';
      if (!status.endsWith('_IN_PROGRESS')) return status;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`${name}: still deleting after 300 s`);
  }

  /** Waits for the stack to leave *_IN_PROGRESS, then lists what each of its templates created. */
  private async settle(name: string): Promise<StackReport> {
    let stack;
    for (let i = 0; ; i++) {
      stack = (await this.cfn.send(new DescribeStacksCommand({ StackName: name }))).Stacks?.[0];
      if (stack && !stack.StackStatus!.endsWith('_IN_PROGRESS')) break;
      if (i > 1200) throw new Error(`${name}: still ${stack?.StackStatus} after 600 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
    this.log(`moto: ${name} ${stack.StackStatus}${stack.StackStatusReason ? ` (${stack.StackStatusReason})` : ''}`);
    const templates: StackReport['templates'] = [];
    if (/_COMPLETE$/.test(stack.StackStatus!) && !/ROLLBACK/.test(stack.StackStatus!)) await this.collect(stack.StackId!, name, templates);
    return { stack: name, status: stack.StackStatus!, ...(stack.StackStatusReason ? { reason: stack.StackStatusReason } : {}), templates };
  }

  private async collect(stackId: string, label: string, into: StackReport['templates']): Promise<void> {
    const resources: StackResourceSummary[] = [];
    let token: string | undefined;
    do {
      const page = await this.cfn.send(new ListStackResourcesCommand({ StackName: stackId, NextToken: token }));
      resources.push(...(page.StackResourceSummaries ?? []));
      token = page.NextToken;
    } while (token);
    // what the template declares that moto did not create: the resource types it does not implement
    const body = (await this.cfn.send(new GetTemplateCommand({ StackName: stackId }))).TemplateBody ?? '{}';
    const declared = (JSON.parse(body) as { Resources?: Record<string, { Type: string }> }).Resources ?? {};
    const listed = new Map(resources.map((r) => [r.LogicalResourceId!, r]));
    const skipped: Record<string, number> = {};
    let created = 0;
    for (const [id, r] of Object.entries(declared)) {
      const status = listed.get(id)?.ResourceStatus;
      if (status === 'CREATE_COMPLETE' || status === 'UPDATE_COMPLETE') created++;
      else skipped[r.Type] = (skipped[r.Type] ?? 0) + 1;
    }
    into.push({ name: label, declared: Object.keys(declared).length, created, skipped });
    for (const r of resources) {
      if (r.ResourceType === 'AWS::CloudFormation::Stack' && r.PhysicalResourceId) await this.collect(r.PhysicalResourceId, `${label}/${r.LogicalResourceId}`, into);
    }
  }
}

function fail(message: string): never {
  throw new Error(message);
}
