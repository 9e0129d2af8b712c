/**
 * What a deployment of the synthesized templates consists of, read back from them: every
 * function (code asset, handler string, runtime, timeout, layers, environment with its
 * intrinsics resolved), every API Gateway method with the path of its resource and the
 * function its proxy integration invokes, the gateway responses, the tables, queues, SQS and
 * DynamoDB stream event-source mappings and scheduled rules.
 *
 * Intrinsics (Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::ImportValue,
 * nested-stack parameters and outputs) are evaluated as CloudFormation would, with physical
 * values taken from a `World`: the local stand-ins the runtime created (a table on DynamoDB
 * Local, queues on fauxqs) and deterministic ARNs for everything else.
 */
import type { Assembly, CfnResource, Template } from './assembly.js';

/** The file in the artifact runtime's data directory that names the directory of the bundles it built (test/artifact/bundles.test.ts). */
export const BUILD_FILE = 'artifact-build.json';

export const ACCOUNT = '000000000000';
export const REGION = 'us-east-1';

/** Physical values of the resources the runtime stands up itself. */
export interface World {
  /** The local table's name, by the table's logical path (`<stack>/<id>`). */
  readonly tables: ReadonlyMap<string, string>;
  /** The local queue's URL, by the queue's logical path. */
  readonly queues: ReadonlyMap<string, string>;
  /** The local bucket's name, by the bucket's logical path (scripts/local/artifact/buckets.ts). */
  readonly buckets?: ReadonlyMap<string, string>;
}

export interface FunctionSpec {
  /** `<stack>/<logical id>`: unique, stable across synths with the same app. */
  readonly key: string;
  readonly functionName: string;
  /** Lambda's handler string (`secrets/secrets.list`). */
  readonly handler: string;
  readonly runtime: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** The unpacked code asset (the directory `cdk deploy` zips and uploads). */
  readonly codeDir: string;
  /** Unpacked layer assets, in order (each mounted at /opt in Lambda). */
  readonly layerDirs: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly inVpc: boolean;
  /** The execution role's ARN (scripts/local/artifact/iam.ts evaluates the function's AWS calls against its policies). */
  readonly roleArn: string;
}

export interface MethodSpec {
  readonly httpMethod: string;
  /** The resource's full path (`/api/v1/secrets/{name}`). */
  readonly path: string;
  /** The integration: AWS_PROXY to this function, or MOCK (key undefined). */
  readonly functionKey?: string;
  readonly integrationType: string;
}

export interface GatewayResponseSpec {
  readonly type: string;
  readonly statusCode?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly templates: Readonly<Record<string, string>>;
}

export interface TableSpec {
  readonly key: string;
  readonly properties: Readonly<Record<string, any>>;
}

export interface QueueSpec {
  readonly key: string;
  readonly properties: Readonly<Record<string, any>>;
}

export interface EventSourceSpec {
  readonly queueKey: string;
  readonly functionKey: string;
  readonly batchSize: number;
  readonly reportBatchItemFailures: boolean;
  readonly maximumBatchingWindowSeconds: number;
  readonly enabled: boolean;
}

/** A DynamoDB stream event-source mapping, as the template declares it (run by scripts/local/streams.ts). */
export interface StreamSourceSpec {
  readonly key: string;
  /** The local table's name. */
  readonly tableName: string;
  readonly functionKey: string;
  /** FilterCriteria.Filters[].Pattern, parsed. */
  readonly filters: readonly unknown[];
  readonly batchSize: number;
  readonly maximumBatchingWindowSeconds: number;
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  readonly reportBatchItemFailures: boolean;
  readonly bisectBatchOnFunctionError: boolean;
  readonly maximumRetryAttempts: number;
  readonly parallelizationFactor: number;
  readonly enabled: boolean;
}

export interface ScheduleSpec {
  readonly key: string;
  readonly expression: string;
  readonly functionKey: string;
  readonly enabled: boolean;
}

export interface Deployment {
  readonly functions: ReadonlyMap<string, FunctionSpec>;
  readonly methods: readonly MethodSpec[];
  readonly gatewayResponses: ReadonlyMap<string, GatewayResponseSpec>;
  readonly binaryMediaTypes: readonly string[];
  readonly eventSources: readonly EventSourceSpec[];
  readonly streamSources: readonly StreamSourceSpec[];
  readonly schedules: readonly ScheduleSpec[];
}

const keyOf = (t: Template, id: string) => `${t.name}/${id}`;
const FUNCTION_ARN = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:`;

function ofType(assembly: Assembly, type: string): { template: Template; id: string; resource: CfnResource }[] {
  return assembly.templates.flatMap((template) =>
    Object.entries(template.resources)
      .filter(([, r]) => r.Type === type)
      .map(([id, resource]) => ({ template, id, resource })),
  );
}

/** The tables the deployment declares (created by the runtime before anything resolves). */
export function tablesOf(assembly: Assembly): TableSpec[] {
  return ofType(assembly, 'AWS::DynamoDB::Table').map(({ template, id, resource }) => ({
    key: keyOf(template, id),
    properties: resource.Properties ?? {},
  }));
}

/** The buckets the deployment declares, by logical path (served by the local S3 engine). */
export function bucketsOf(assembly: Assembly): string[] {
  return ofType(assembly, 'AWS::S3::Bucket').map(({ template, id }) => keyOf(template, id));
}

export function queuesOf(assembly: Assembly): QueueSpec[] {
  return ofType(assembly, 'AWS::SQS::Queue').map(({ template, id, resource }) => ({
    key: keyOf(template, id),
    properties: resource.Properties ?? {},
  }));
}

/** A CloudFormation evaluator over the assembly's templates. */
export class Resolver {
  constructor(
    private readonly assembly: Assembly,
    private readonly world: World,
  ) {}

  value(t: Template, expr: unknown): any {
    if (expr === null || typeof expr !== 'object') return expr;
    if (Array.isArray(expr)) return expr.map((e) => this.value(t, e));
    const entries = Object.entries(expr as Record<string, unknown>);
    if (entries.length !== 1 || !(entries[0]![0] === 'Ref' || entries[0]![0].startsWith('Fn::'))) {
      return Object.fromEntries(entries.map(([k, v]) => [k, this.value(t, v)]));
    }
    const [fn, arg] = entries[0]! as [string, any];
    switch (fn) {
      case 'Ref':
        return this.ref(t, arg as string);
      case 'Fn::GetAtt': {
        const [id, attr] = typeof arg === 'string' ? (arg.split(/\.(.*)/s) as [string, string]) : (arg as [string, string]);
        return this.getAtt(t, id, attr);
      }
      case 'Fn::Join': {
        const [sep, parts] = arg as [string, unknown[]];
        return (this.value(t, parts) as unknown[]).map(String).join(sep);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown];
        return (this.value(t, list) as unknown[])[Number(this.value(t, index))];
      }
      case 'Fn::Split': {
        const [sep, source] = arg as [string, unknown];
        return String(this.value(t, source)).split(sep);
      }
      case 'Fn::Sub': {
        const [text, vars] = typeof arg === 'string' ? [arg, {}] : (arg as [string, Record<string, unknown>]);
        return text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
          if (name in vars) return String(this.value(t, vars[name]));
          if (name.includes('.') && !name.startsWith('AWS::')) {
            const [id, attr] = name.split(/\.(.*)/s) as [string, string];
            return String(this.getAtt(t, id, attr));
          }
          return String(this.ref(t, name));
        });
      }
      case 'Fn::ImportValue': {
        const name = this.value(t, arg);
        for (const other of this.assembly.templates) {
          for (const output of Object.values(other.outputs)) {
            if (output.Export && this.value(other, output.Export.Name) === name) return this.value(other, output.Value);
          }
        }
        throw new Error(`${t.name}: Fn::ImportValue ${name}: no stack exports it`);
      }
      default:
        throw new Error(`${t.name}: intrinsic ${fn} is not supported by the artifact runtime`);
    }
  }

  private ref(t: Template, name: string): any {
    switch (name) {
      case 'AWS::Region':
        return REGION;
      case 'AWS::AccountId':
        return ACCOUNT;
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return t.name.replace(/\//g, '-');
      case 'AWS::NoValue':
        return undefined;
    }
    if (t.parent && name in t.parent.passed) return this.value(t.parent.template, t.parent.passed[name]);
    const r = t.resources[name];
    if (!r) throw new Error(`${t.name}: Ref ${name}: no such parameter or resource`);
    const key = keyOf(t, name);
    switch (r.Type) {
      case 'AWS::DynamoDB::Table':
        return this.world.tables.get(key) ?? fail(`table ${key} was not created`);
      case 'AWS::SQS::Queue':
        return this.world.queues.get(key) ?? fail(`queue ${key} was not created`);
      case 'AWS::S3::Bucket':
        return this.world.buckets?.get(key) ?? fail(`bucket ${key} was not created`);
      case 'AWS::Lambda::Function':
        return key;
      case 'AWS::IAM::Role':
        return roleName(key);
      case 'AWS::ApiGateway::Resource': {
        const parent = String(this.value(t, r.Properties!.ParentId));
        return `${parent === '/' ? '' : parent}/${r.Properties!.PathPart as string}`;
      }
      default:
        return key;
    }
  }

  private getAtt(t: Template, id: string, attr: string): any {
    const r = t.resources[id];
    if (!r) throw new Error(`${t.name}: Fn::GetAtt ${id}.${attr}: no such resource`);
    if (r.Type === 'AWS::CloudFormation::Stack' && attr.startsWith('Outputs.')) {
      const nested = this.assembly.templates.find((n) => n.name === keyOf(t, id))!;
      const output = nested.outputs[attr.slice('Outputs.'.length)];
      if (!output) throw new Error(`${nested.name}: no output ${attr}`);
      return this.value(nested, output.Value);
    }
    const key = keyOf(t, id);
    if (r.Type === 'AWS::ApiGateway::RestApi' && attr === 'RootResourceId') return '/';
    if (r.Type === 'AWS::Lambda::Function' && attr === 'Arn') return `${FUNCTION_ARN}${key}`;
    if (r.Type === 'AWS::SQS::Queue') {
      const url = this.ref(t, id) as string;
      const name = url.slice(url.lastIndexOf('/') + 1);
      if (attr === 'QueueName') return name;
      if (attr === 'Arn') return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
      if (attr === 'QueueUrl') return url;
    }
    if (r.Type === 'AWS::S3::Bucket' && attr === 'Arn') return `arn:aws:s3:::${this.ref(t, id)}`;
    if (r.Type === 'AWS::DynamoDB::Table' && attr === 'Arn') return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${this.ref(t, id)}`;
    if (r.Type === 'AWS::DynamoDB::Table' && attr === 'StreamArn')
      return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${this.ref(t, id)}/stream/local`;
    if (r.Type === 'AWS::IAM::Role' && attr === 'Arn') return roleArn(key);
    if (r.Type === 'AWS::KMS::Key' && attr === 'Arn') return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${key.replace(/\//g, '-')}`;
    return `arn:aws:local:${REGION}:${ACCOUNT}:${r.Type}/${key}#${attr}`;
  }
}

/** A role's name as CloudFormation would generate it (IAM allows [\w+=,.@-], at most 64 characters). */
export const roleName = (key: string): string => key.replace(/[^\w+=,.@-]+/g, '-').slice(-64);
export const roleArn = (key: string): string => `arn:aws:iam::${ACCOUNT}:role/${roleName(key)}`;

function fail(message: string): never {
  throw new Error(message);
}

/** The function a resolved ARN or Ref names (`<stack>/<logical id>`). */
function functionKey(value: unknown, what: string): string {
  const s = String(value);
  const at = s.indexOf(FUNCTION_ARN);
  if (at >= 0)
    return s
      .slice(at + FUNCTION_ARN.length)
      .replace(/\/invocations$/, '')
      .replace(/\/functions\/.*$/, '');
  if (/^[^:]+\/[^/:]+$/.test(s)) return s;
  throw new Error(`${what}: cannot tell which function ${s} names`);
}

/** Reads the deployment: everything the runtime serves, from the templates alone. */
export function readDeployment(assembly: Assembly, world: World): Deployment {
  const r = new Resolver(assembly, world);
  const functions = new Map<string, FunctionSpec>();
  for (const { template, id, resource } of ofType(assembly, 'AWS::Lambda::Function')) {
    const p = resource.Properties ?? {};
    const key = keyOf(template, id);
    const layerDirs = ((p.Layers ?? []) as unknown[]).map((layer) => {
      const layerKey = String(r.value(template, layer));
      const [stack, layerId] = [layerKey.slice(0, layerKey.lastIndexOf('/')), layerKey.slice(layerKey.lastIndexOf('/') + 1)];
      const owner = assembly.templates.find((t) => t.name === stack)?.resources[layerId];
      if (owner?.Type !== 'AWS::Lambda::LayerVersion') throw new Error(`${key}: layer ${layerKey} is not a LayerVersion of this assembly`);
      return assembly.assetPath(owner, `${layerKey} content`);
    });
    const variables = (r.value(template, p.Environment?.Variables ?? {}) ?? {}) as Record<string, unknown>;
    functions.set(key, {
      key,
      functionName: p.FunctionName ? String(r.value(template, p.FunctionName)) : key.replace(/\//g, '-'),
      handler: String(p.Handler),
      runtime: String(p.Runtime),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
      codeDir: assembly.assetPath(resource, `${key} code`),
      layerDirs,
      environment: Object.fromEntries(
        Object.entries(variables)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, String(v)]),
      ),
      inVpc: Boolean(p.VpcConfig),
      roleArn: String(r.value(template, p.Role)),
    });
  }

  const methods = ofType(assembly, 'AWS::ApiGateway::Method').map(({ template, id, resource }): MethodSpec => {
    const p = resource.Properties ?? {};
    const integration = p.Integration ?? {};
    const type = String(integration.Type ?? 'MOCK');
    return {
      httpMethod: String(p.HttpMethod),
      path: String(r.value(template, p.ResourceId)),
      integrationType: type,
      ...(type === 'AWS_PROXY' ? { functionKey: functionKey(r.value(template, integration.Uri), `${keyOf(template, id)} integration`) } : {}),
    };
  });

  const gatewayResponses = new Map<string, GatewayResponseSpec>();
  for (const { template, resource } of ofType(assembly, 'AWS::ApiGateway::GatewayResponse')) {
    const p = r.value(template, resource.Properties ?? {}) as Record<string, any>;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((p.ResponseParameters ?? {}) as Record<string, string>)) {
      const m = /^gatewayresponse\.header\.(.+)$/.exec(k);
      if (m) headers[m[1]!] = String(v).replace(/^'(.*)'$/s, '$1');
    }
    gatewayResponses.set(String(p.ResponseType), {
      type: String(p.ResponseType),
      ...(p.StatusCode ? { statusCode: String(p.StatusCode) } : {}),
      headers,
      templates: p.ResponseTemplates ?? {},
    });
  }

  const apis = ofType(assembly, 'AWS::ApiGateway::RestApi');
  if (apis.length !== 1) throw new Error(`expected one RestApi, found ${apis.length}`);
  const binaryMediaTypes = ((apis[0]!.resource.Properties?.BinaryMediaTypes ?? []) as string[]).map((t) => t.replace(/~1/g, '/'));

  const mappings = ofType(assembly, 'AWS::Lambda::EventSourceMapping').map((m) => ({
    ...m,
    arn: String(r.value(m.template, m.resource.Properties?.EventSourceArn)),
  }));
  const isStream = (arn: string) => /^arn:aws:dynamodb:[^:]*:[^:]*:table\/[^/]+\/stream\//.test(arn);
  const streamSources = mappings
    .filter(({ arn }) => isStream(arn))
    .map(({ template, id, resource, arn }): StreamSourceSpec => {
      const p = resource.Properties ?? {};
      const tableName = arn.split('/')[1]!;
      if (![...world.tables.values()].includes(tableName)) throw new Error(`${keyOf(template, id)}: stream ${arn} is not a table of this deployment`);
      return {
        key: keyOf(template, id),
        tableName,
        functionKey: functionKey(r.value(template, p.FunctionName), keyOf(template, id)),
        filters: ((p.FilterCriteria?.Filters ?? []) as { Pattern: string }[]).map((f) => JSON.parse(String(r.value(template, f.Pattern)))),
        batchSize: Number(p.BatchSize ?? 100),
        maximumBatchingWindowSeconds: Number(p.MaximumBatchingWindowInSeconds ?? 0),
        startingPosition: p.StartingPosition === 'LATEST' ? 'LATEST' : 'TRIM_HORIZON',
        reportBatchItemFailures: ((p.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures'),
        bisectBatchOnFunctionError: p.BisectBatchOnFunctionError === true,
        maximumRetryAttempts: Number(p.MaximumRetryAttempts ?? -1),
        parallelizationFactor: Number(p.ParallelizationFactor ?? 1),
        enabled: p.Enabled !== false,
      };
    });
  const eventSources = mappings
    .filter(({ arn }) => !isStream(arn))
    .map(({ template, id, resource, arn }): EventSourceSpec => {
      const p = resource.Properties ?? {};
      const queue = [...world.queues.entries()].find(([, url]) => url.endsWith(`/${arn.slice(arn.lastIndexOf(':') + 1)}`));
      if (!queue) throw new Error(`${keyOf(template, id)}: event source ${arn} is not a queue of this deployment`);
      return {
        queueKey: queue[0],
        functionKey: functionKey(r.value(template, p.FunctionName), keyOf(template, id)),
        batchSize: Number(p.BatchSize ?? 10),
        reportBatchItemFailures: ((p.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures'),
        maximumBatchingWindowSeconds: Number(p.MaximumBatchingWindowInSeconds ?? 0),
        enabled: p.Enabled !== false,
      };
    });

  const schedules = ofType(assembly, 'AWS::Events::Rule')
    .filter(({ resource }) => resource.Properties?.ScheduleExpression)
    .flatMap(({ template, id, resource }) =>
      ((resource.Properties!.Targets ?? []) as { Arn: unknown }[]).map(
        (target): ScheduleSpec => ({
          key: keyOf(template, id),
          expression: String(resource.Properties!.ScheduleExpression),
          functionKey: functionKey(r.value(template, target.Arn), keyOf(template, id)),
          enabled: (resource.Properties!.State ?? 'ENABLED') === 'ENABLED',
        }),
      ),
    );

  return { functions, methods, gatewayResponses, binaryMediaTypes, eventSources, streamSources, schedules };
}
