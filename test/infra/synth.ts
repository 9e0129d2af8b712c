import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { OWN_PARTITIONS, ROUTES, tenancyOf, type Grant, type Route } from '../../lib/routes.js';
import { BACKGROUND_JOBS } from '../../infra/background.js';
import { assetId, handlerModules } from '../../infra/handlers.js';
import { addStacks, synthWithoutTemplateValidation } from '../../infra/stacks.js';
import { processAlive } from '../setup/processes.js';

/** A CloudFormation resource as synthesized. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly DependsOn?: string[];
  readonly DeletionPolicy?: string;
  readonly Metadata?: Record<string, any>;
}

export interface SynthTemplate {
  readonly file: string;
  readonly bytes: number;
  readonly resources: Record<string, CfnResource>;
  readonly parameters: Record<string, unknown>;
  readonly outputs: Record<string, unknown>;
  /** For a nested template: the parameter values its parent passes (by parameter name). */
  readonly passed: Record<string, any>;
  /**
   * For a nested template: the parameters whose value is an output of another nested template
   * (a role of the own-items routes' nested stack, infra/api-stack.ts): that template, and in
   * `passed` the output's value there (so parentRef names the resource in it).
   */
  readonly passedFrom: Record<string, SynthTemplate>;
}

export interface Synthesized {
  readonly dir: string;
  /** Every template: the two stacks and every nested stack. */
  readonly templates: readonly SynthTemplate[];
  readonly data: SynthTemplate;
  readonly api: SynthTemplate;
  readonly nested: readonly SynthTemplate[];
  /** The nested stack of the background functions (infra/background.ts). */
  readonly background: SynthTemplate;
  /** The nested stack of the per-family alarms and the dashboard (infra/alarms.ts, infra/dashboard.ts). */
  readonly observability: SynthTemplate;
  /** The nested stacks of route families (with their OPTIONS methods when CORS is configured). */
  readonly families: readonly SynthTemplate[];
}

/**
 * Stand-in code assets, one per handler module of these routes and the background jobs: the
 * templates depend only on which assets exist and their hashes (test/infra/build.test.ts and
 * the artifact tier cover the built contents).
 */
export function stubAssetDir(routes: readonly Route[] = ROUTES): string {
  const dir = mkdtempSync(join(scratchDir(), 'secrets-api-asset-'));
  const jobs = BACKGROUND_JOBS.map((j) => ({ handler: j.handler }) as Route);
  for (const module of handlerModules([...routes, ...jobs])) {
    const file = join(dir, assetId(module), `${module}.mjs`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `// stand-in for functions/${module}.ts\nexport {};\n`);
  }
  return dir;
}

/**
 * Where synthesized whole-table assemblies are kept for the rest of the test run
 * (vitest.config.ts sets it per run; unset, e.g. in scripts/docs, nothing is kept): the same
 * context synthesized over the whole route table with stand-in assets gives the same
 * templates, and one synthesis costs 20-30 CPU seconds, which seven test files paid each for
 * the default context. A run never reads another run's assemblies.
 */
const CACHE_DIR = process.env.SYNTH_CACHE_DIR;
let scratch: string | undefined;

/**
 * Where a synthesis that is not kept, and its stand-in assets, are written: inside the run's
 * cache directory when there is one, so that they go with it when the run ends (a run left 76
 * syntheses and 108 asset directories, 250 MB, in /tmp), else in a directory of the process's
 * own, removed when it exits.
 */
function scratchDir(): string {
  if (!CACHE_DIR) {
    // a script's syntheses (npm run docs:figures, bench:cost): gone when the script ends
    if (!scratch) {
      scratch = mkdtempSync(join(tmpdir(), 'secrets-api-synth-'));
      const made = scratch;
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    }
    return scratch;
  }
  const dir = join(CACHE_DIR, 'scratch');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * A directory of its own under the syntheses' scratch directory (above), so it goes when they
 * do: `npm run test:infra` run alone left a stand-in layer directory per variant and cdk-nag's
 * probe in /tmp.
 */
export const scratchDirectory = (prefix: string): string => mkdtempSync(join(scratchDir(), prefix));

/** A stand-in for the CloudHSM Lambda layer a deployment names (`hsmLayerPath`): its README only. */
export function hsmLayerStandIn(): string {
  const dir = scratchDirectory('hsm-layer-');
  writeFileSync(join(dir, 'README'), 'stand-in for cloudhsm/ and nodejs/node_modules/pkcs11js\n');
  return dir;
}

/** The cache entry of these options, or undefined when they are not cacheable (a route subset, real assets). */
function cacheEntry(options: { context?: Record<string, unknown>; routes?: readonly Route[]; assetDir?: string }): string | undefined {
  if (!CACHE_DIR || options.routes || options.assetDir) return undefined;
  const context = Object.entries(options.context ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return join(CACHE_DIR, createHash('sha256').update(JSON.stringify(context)).digest('hex').slice(0, 24));
}

const STACKS_FILE = 'synthesized-stacks.json';

/**
 * Synthesizes the whole app offline (no account, no lookups) into a temporary directory; over
 * the whole route table with stand-in assets, once per context in a test run (CACHE_DIR).
 */
export function synthesize(
  options: { context?: Record<string, unknown>; routes?: readonly Route[]; assetDir?: string; templateValidation?: boolean } = {},
): Synthesized {
  const entry = options.templateValidation ? undefined : cacheEntry(options);
  if (entry && existsSync(join(entry, STACKS_FILE))) return loadSynthesized(entry);
  if (entry) {
    mkdirSync(dirname(entry), { recursive: true });
    const release = takeTurn(entry);
    try {
      if (existsSync(join(entry, STACKS_FILE))) return loadSynthesized(entry);
      return synthesizeInto(entry, options);
    } finally {
      release();
    }
  }
  return synthesizeInto(undefined, options);
}

/** How long a worker waits for another's synthesis of the same context before doing its own. */
const TURN_WAIT_MS = 600_000;
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * One synthesis per context in a run, whichever workers ask for it at once: the first takes the
 * entry's lock (a directory, made atomically, holding its pid) and the others wait for its
 * result. Without it, the two infra files the suite starts first (iam-negative, variants: the
 * longest) each synthesized the default context: the two took 75.2 CPU-s, 66.7 with the lock
 * (two runs each, paired). A lock whose process is gone is taken over; after TURN_WAIT_MS the
 * waiter synthesizes anyway. Returns the release.
 */
function takeTurn(entry: string): () => void {
  const lock = `${entry}.lock`;
  for (const until = Date.now() + TURN_WAIT_MS; Date.now() < until; ) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch {
      if (existsSync(join(entry, STACKS_FILE))) return () => undefined;
      let holder = Number.NaN;
      try {
        holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // between its mkdir and its pid: the holder is alive
      }
      if (Number.isInteger(holder) && !processAlive(holder)) rmSync(lock, { recursive: true, force: true });
      else pause(200);
    }
  }
  return () => undefined;
}

function synthesizeInto(
  entry: string | undefined,
  options: { context?: Record<string, unknown>; routes?: readonly Route[]; assetDir?: string; templateValidation?: boolean },
): Synthesized {
  const dir = mkdtempSync(join(entry ? dirname(entry) : scratchDir(), 'secrets-api-cdk-'));
  // As the CLI does: asset metadata names each nested stack's template file.
  const app = new App({ outdir: dir, context: { 'aws:cdk:enable-asset-metadata': true, ...options.context } });
  const deployment = addStacks(app, { assetDir: options.assetDir ?? stubAssetDir(options.routes), routes: options.routes });
  // CDK's CloudFormation template validation costs half a synth; app.test.ts runs it, once
  if (options.templateValidation) app.synth();
  else synthWithoutTemplateValidation(app);
  writeFileSync(join(dir, STACKS_FILE), JSON.stringify({ data: deployment.data.artifactId, api: deployment.api.artifactId }));
  if (!entry) return loadSynthesized(dir);
  // another worker may have finished the same context first: its directory is as good as ours
  try {
    renameSync(dir, entry);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
  return loadSynthesized(entry);
}

/** The templates of a synthesized directory. */
function loadSynthesized(dir: string): Synthesized {
  const stacks = JSON.parse(readFileSync(join(dir, STACKS_FILE), 'utf8')) as { data: string; api: string };
  const load = (file: string, passed: Record<string, any> = {}): SynthTemplate => {
    const path = join(dir, file);
    const json = JSON.parse(readFileSync(path, 'utf8')) as { Resources?: Record<string, CfnResource>; Parameters?: Record<string, unknown>; Outputs?: Record<string, unknown> };
    return { file, bytes: statSync(path).size, resources: json.Resources ?? {}, parameters: json.Parameters ?? {}, outputs: json.Outputs ?? {}, passed, passedFrom: {} };
  };
  const data = load(`${stacks.data}.template.json`);
  const api = load(`${stacks.api}.template.json`);
  const byId = new Map(
    Object.entries(api.resources)
      .filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack')
      // a copy: the values resolved below must not change the parent's own template
      .map(([id, r]) => [id, load(r.Metadata!['aws:asset:path'] as string, { ...((r.Properties?.Parameters ?? {}) as Record<string, any>) })] as const),
  );
  const nested = [...byId.values()];
  // a parameter carrying another nested template's output: the output's value in that template
  for (const t of nested) {
    for (const [param, value] of Object.entries(t.passed)) {
      const [id, attr] = (value?.['Fn::GetAtt'] ?? []) as [string?, string?];
      const from = id ? byId.get(id) : undefined;
      if (!from || !attr?.startsWith('Outputs.')) continue;
      t.passed[param] = (from.outputs[attr.slice('Outputs.'.length)] as { Value: unknown }).Value;
      t.passedFrom[param] = from;
    }
  }
  const background = nested.find((t) => t.file.includes('Background'));
  if (!background) throw new Error('no Background nested stack');
  const observability = nested.find((t) => t.file.includes('Observability'));
  if (!observability) throw new Error('no Observability nested stack');
  const families = nested.filter((t) => t !== background && t !== observability);
  return { dir, templates: [data, api, ...nested], data, api, nested, background, observability, families };
}

export function resourcesOfType(template: SynthTemplate, type: string): [string, CfnResource][] {
  return Object.entries(template.resources).filter(([, r]) => r.Type === type);
}

export function allOfType(s: Synthesized, type: string): { template: SynthTemplate; id: string; resource: CfnResource }[] {
  return s.templates.flatMap((template) => resourcesOfType(template, type).map(([id, resource]) => ({ template, id, resource })));
}

/** `{Ref: param}` in a nested template -> the parent's logical id that the parameter carries; `{Fn::GetAtt: [id, ...]}` -> `id`, in the template itself. */
export function parentRef(template: SynthTemplate, value: any): string {
  // a resource of the template itself (a route's own-items role pair, beside its function)
  if (value?.['Fn::GetAtt']) return value['Fn::GetAtt'][0] as string;
  const param = value?.Ref as string;
  const passed = template.passed[param];
  if (passed?.Ref) return passed.Ref as string;
  if (passed?.['Fn::GetAtt']) return passed['Fn::GetAtt'][0] as string;
  throw new Error(`${template.file}: ${JSON.stringify(value)} is not a parameter passed from the parent`);
}

/** Every AWS::ApiGateway::Resource of the API template as its full path (`/api/v1/secrets/{name}`), by logical id. */
export function resourcePaths(api: SynthTemplate): Map<string, string> {
  const paths = new Map<string, string>();
  const resolve = (id: string): string => {
    const cached = paths.get(id);
    if (cached) return cached;
    const r = api.resources[id]!;
    const parent = r.Properties!.ParentId;
    const prefix = parent['Fn::GetAtt'] ? '' : resolve(parent.Ref as string);
    const path = `${prefix}/${r.Properties!.PathPart as string}`;
    paths.set(id, path);
    return path;
  };
  for (const [id] of resourcesOfType(api, 'AWS::ApiGateway::Resource')) resolve(id);
  return paths;
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

const ENI_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];
/** Actions AWS only grants on Resource "*". */
export const STAR_ACTIONS = new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords', ...ENI_ACTIONS, 'cloudhsm:DescribeClusters', 'kms:CreateKey', 'kms:TagResource']);

/** What each grant of lib/routes.ts allows, restated independently of infra/grants.ts. */
/** `hsm`: the deployment has the CloudHSM context; `pin`: a PIN secret is configured; `payment`: a payment provider secret is. */
/**
 * With `route`: a tenant route (lib/routes.ts tenancyOf) holds its table and data-key actions
 * through its tenant-access role (actionsOf adds that role's), its execution role the account
 * read, the device nonce (device routes), the role's sealed shared sessions and
 * sts:AssumeRole/TagSession; no kms:DescribeKey.
 */
export function expectedActions(grants: readonly Grant[], hsm: boolean, pin = false, payment = false, route?: Route): string[] {
  const has = (g: Grant) => grants.includes(g);
  const tenant = route !== undefined && tenancyOf(route) === 'tenant';
  const a = new Set(['logs:CreateLogStream', 'logs:PutLogEvents', 'xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
  if (tenant) ['dynamodb:GetItem', 'sts:AssumeRole', 'sts:TagSession'].forEach((x) => a.add(x));
  // the role's shared sessions, sealed (TenantSessionCache, TenantSessionKey)
  if (tenant) ['dynamodb:PutItem', 'kms:GenerateDataKey', 'kms:Decrypt'].forEach((x) => a.add(x));
  if (tenant && route.auth === 'device') a.add('dynamodb:PutItem');
  // a self-authenticating route with own items (lib/routes.ts OWN_PARTITIONS): reads only if it declares own reads
  const ownItems = route !== undefined && !tenant ? OWN_PARTITIONS[route.key] : undefined;
  if ((has('table:read') || has('table:write')) && (!ownItems || ownItems.read)) ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'].forEach((x) => a.add(x));
  // listed items (lib/routes.ts OwnItems `listed`): the listings' Query on index plat, BatchGetItem of the listed items
  if (has('table:read') && ownItems?.listed) ['dynamodb:BatchGetItem', 'dynamodb:Query'].forEach((x) => a.add(x));
  if (has('table:ready')) a.add('dynamodb:GetItem');
  if (has('kms:describe')) a.add('kms:DescribeKey');
  if (has('table:meter') || has('table:write')) a.add('dynamodb:UpdateItem');
  if (has('table:write')) ['dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'].forEach((x) => a.add(x));
  if (has('kms:decrypt') || has('kms:encrypt')) (tenant ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:DescribeKey']).forEach((x) => a.add(x));
  if (has('kms:encrypt')) a.add('kms:GenerateDataKey');
  // a tenant route that seals without table:write creates the account's data-key record (TenantDataKeyCreate)
  if (tenant && has('kms:encrypt') && !has('table:write')) a.add('dynamodb:PutItem');
  if (has('documents:read') || has('documents:write')) ['s3:GetObject', 'kms:Decrypt'].forEach((x) => a.add(x));
  if (has('documents:write')) ['s3:PutObject', 's3:DeleteObject', 'kms:GenerateDataKey'].forEach((x) => a.add(x));
  if (has('queue:send') || has('jobs:send') || has('audit:send')) ['sqs:SendMessage', 'kms:GenerateDataKey', 'kms:Decrypt'].forEach((x) => a.add(x));
  if (has('hsm') && hsm) ENI_ACTIONS.forEach((x) => a.add(x));
  if ((has('hsm') || has('hsm:describe')) && hsm) a.add('cloudhsm:DescribeClusters');
  if (has('hsm') && pin) a.add('secretsmanager:GetSecretValue');
  if (has('payment') && payment) a.add('secretsmanager:GetSecretValue');
  if ((grants as readonly string[]).includes('kms:sign')) {
    ['kms:CreateKey', 'kms:TagResource', 'kms:Sign', 'kms:GetPublicKey', 'kms:ScheduleKeyDeletion'].forEach((x) => a.add(x));
  }
  return [...a].sort();
}


export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, unknown>;
}

/** Every identity-policy statement of the synthesized app, with the role logical ids it applies to. */
export function roleStatements(s: Synthesized): { template: SynthTemplate; roles: string[]; statement: Statement }[] {
  const out: { template: SynthTemplate; roles: string[]; statement: Statement }[] = [];
  for (const { template, resource } of allOfType(s, 'AWS::IAM::Policy')) {
    const roles = list(resource.Properties!.Roles as { Ref: string }[]).map((r) => r.Ref);
    for (const statement of list(resource.Properties!.PolicyDocument.Statement as Statement[])) out.push({ template, roles, statement });
  }
  for (const { template, id, resource } of allOfType(s, 'AWS::IAM::Role')) {
    for (const policy of list(resource.Properties!.Policies as { PolicyDocument: { Statement: Statement[] } }[])) {
      for (const statement of list(policy.PolicyDocument.Statement)) out.push({ template, roles: [id], statement });
    }
  }
  return out;
}

/** The route functions of the app (background jobs aside): route key (the function's description) -> template, logical id, resource. */
export function functionsByRoute(s: Synthesized): Map<string, { template: SynthTemplate; id: string; resource: CfnResource }> {
  const map = new Map<string, { template: SynthTemplate; id: string; resource: CfnResource }>();
  for (const f of allOfType(s, 'AWS::Lambda::Function')) {
    if (f.template === s.background || f.template === s.api) continue; // background jobs, the CORS preflight
    const key = f.resource.Properties!.Description as string;
    if (map.has(key)) throw new Error(`two functions for ${key}`);
    map.set(key, f);
  }
  return map;
}

/**
 * Actions granted to a function's role: roles of route functions live in the API template
 * (passed to the nested stack as parameters); `local` roles live next to the function.
 */
export function actionsOf(s: Synthesized, fn: { template: SynthTemplate; resource: CfnResource; local?: boolean }): string[] {
  const actions = new Set<string>();
  for (const { statement } of functionStatements(s, fn)) list(statement.Action).forEach((a) => actions.add(a));
  return [...actions].sort();
}

/**
 * The statements a function works with: its own role's, and (a tenant route, env
 * TENANT_ROLE_ARN) its tenant-access role's, each with the role it belongs to.
 */
export function functionStatements(
  s: Synthesized,
  fn: { template: SynthTemplate; resource: CfnResource; local?: boolean },
): { role: 'own' | 'tenant'; roleId: string; statement: Statement }[] {
  const roleRef = fn.resource.Properties!.Role;
  // a role beside the function (the preflight's; the role pair of a route with own items, in its family's stack) or passed from the parent
  const local = fn.local ?? roleRef?.['Fn::GetAtt'] !== undefined;
  const [home, role] = local ? [fn.template, roleRef['Fn::GetAtt'][0] as string] : [fn.template.passedFrom[roleRef.Ref] ?? s.api, parentRef(fn.template, roleRef)];
  const tenantRef = fn.resource.Properties!.Environment?.Variables?.TENANT_ROLE_ARN;
  const tenantRole = tenantRef === undefined ? undefined : local ? (tenantRef['Fn::GetAtt'][0] as string) : parentRef(fn.template, tenantRef);
  const out: { role: 'own' | 'tenant'; roleId: string; statement: Statement }[] = [];
  for (const { template, roles, statement } of roleStatements(s)) {
    if (template !== home) continue;
    if (roles.includes(role)) out.push({ role: 'own', roleId: role, statement });
    if (tenantRole && roles.includes(tenantRole)) out.push({ role: 'tenant', roleId: tenantRole, statement });
  }
  return out;
}
