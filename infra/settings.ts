import type { Node } from 'constructs';
import { parseOrigins } from '../lib/core/origins.js';
import { DEFAULT_THROTTLING, type Limit, type ThrottleSettings } from './throttling.js';

/**
 * Every deployment setting, read once from CDK context (`cdk synth -c key=value`, or the
 * "context" block of cdk.json) with its default. docs/deployment.md ("Variants") lists them.
 */
export interface Settings {
  /** Prefix of stack, function and log group names (several deployments per account: vary it). */
  readonly name: string;
  /** API Gateway stage name; the API is at https://<api>.execute-api.<region>.amazonaws.com/<stage>. */
  readonly stage: string;
  /** A prebuilt bundle (infra/bundle.ts output); absent: infra/app.ts builds into dist/lambda. */
  readonly assetDir?: string;
  /** Ship linked source maps in the code assets and run functions with --enable-source-maps. */
  readonly sourceMaps: boolean;
  /** Absolute base URL clients use (custom domain); default: the execute-api URL of the stage. */
  readonly publicBaseUrl?: string;
  readonly memoryMb: number;
  readonly logRetentionDays: number;
  /** Keep function and access log groups when the stack is deleted. */
  readonly retainLogs: boolean;
  /** Method throttling per route group and route (infra/throttling.ts). */
  readonly throttling: ThrottleSettings;
  /** AWS WAFv2 web ACL (REGIONAL scope) to associate with the stage. */
  readonly wafWebAclArn?: string;
  /** Allowed CORS origins (exact, lib/core/origins.ts); empty = CORS off (no OPTIONS methods, no preflight function). */
  readonly corsOrigins: readonly string[];
  /** SNS topic notified by every alarm; absent: the data stack creates `<name>-alarms` (infra/alarms.ts). */
  readonly alarmTopicArn?: string;
  /** E-mail address subscribed to the deployment's own alarm topic (not with alarmTopicArn: subscribe to your topic yourself). */
  readonly alarmEmail?: string;
  /** The operator's IPFS node (Kubo RPC API URL) for POST /ipfs/store and /fetch; unset: those routes answer 503. */
  readonly ipfsApiUrl?: string;
  /** The k-anonymity range API of the breach check (default: api.pwnedpasswords.com). */
  readonly breachRangeUrl?: string;
  /** Create the account-wide API Gateway CloudWatch role (needed once per account and region for access logs). */
  readonly apiGatewayCloudWatchRole: boolean;
  readonly hsm: HsmSettings;
  /**
   * Billing: the Secrets Manager secret of the payment provider (Stripe), JSON
   * {"secret_key", "webhook_secret", "prices": {"<plan>": "<price id>"}}. Absent: the billing
   * routes that need the provider answer 503 and the inbound webhook 404.
   */
  readonly paymentSecretArn?: string;
  /** The integrator helpers (GET /api/v1/mock/templates/{type}, POST /api/v1/mock/configure); off by default: 404. */
  readonly mockRoutes: boolean;
  /** The stage's X-Ray sampling rule (infra/api-stack.ts): the share of requests traced beyond the reservoir. */
  readonly xraySampleRate: number;
  /** Requests traced each second before the rate applies (the rule's reservoir). */
  readonly xrayReservoir: number;
}

/**
 * The stage's X-Ray sampling: 1 % of requests beyond one a second. X-Ray's default rule (5 %)
 * applies to whatever no rule of the account matches; at $5 per million traces recorded, 5 %
 * is $0.25 per million requests, a sixth of a read's own cost (docs/cost.md); 1 % is $0.05.
 */
export const XRAY_DEFAULTS = { sampleRate: 0.01, reservoir: 1 } as const;

export interface HsmSettings {
  readonly clusterId?: string;
  /** The cluster's VPC: the signing functions' security group is created in it. */
  readonly vpcId?: string;
  /** Subnets of the signing functions (private subnets of that VPC that reach the HSMs). */
  readonly subnetIds: readonly string[];
  /** The cluster's security group (CloudHSM creates it): the stack adds the ingress rule from the signing functions. */
  readonly securityGroupId?: string;
  /**
   * Where the signing functions write the Client SDK 5 configuration after looking the
   * cluster's HSMs up (CLOUDHSM_CLIENT_CONFIG; the layer links /opt/cloudhsm/etc/cloudhsm-pkcs11.cfg to it).
   */
  readonly clientConfigPath: string;
  /** Directory (or .zip) holding the layer: /opt/cloudhsm/... and /opt/nodejs/node_modules/pkcs11js. */
  readonly layerPath?: string;
  /** Path of the PKCS#11 library inside the layer (PKCS11_MODULE). */
  readonly libraryPath: string;
  /** Label of the token (PKCS11_TOKEN_LABEL; CloudHSM's is hsm1). */
  readonly tokenLabel: string;
  /** Secrets Manager secret holding the crypto user's PIN (`<user>:<password>`). */
  readonly pinSecretArn?: string;
  /** Client connections the signing functions may hold in all (CloudHSM allows 900). */
  readonly connectionBudget: number;
  /** Fail synthesis instead of warning when signing routes exist but the HSM context is incomplete. */
  readonly required: boolean;
}

/**
 * The CloudHSM context keys that are not set, by their `-c` names: signing needs every one (the
 * cluster, its VPC, subnets and security group to place the functions, the layer with the
 * PKCS#11 library, and the secret holding the crypto user's PIN, the only PIN source a
 * deployment has: lib/signing/registry.ts).
 */
export function missingHsmContext(hsm: HsmSettings): string[] {
  const present: Record<string, boolean> = {
    hsmClusterId: Boolean(hsm.clusterId),
    hsmVpcId: Boolean(hsm.vpcId),
    hsmSubnetIds: hsm.subnetIds.length > 0,
    hsmSecurityGroupId: Boolean(hsm.securityGroupId),
    hsmLayerPath: Boolean(hsm.layerPath),
    hsmPinSecretArn: Boolean(hsm.pinSecretArn),
  };
  return Object.keys(present).filter((k) => !present[k]);
}

/** True when the signing functions can be placed in the cluster's VPC with the layer and a PIN source. */
export function hsmConfigured(hsm: HsmSettings): boolean {
  return missingHsmContext(hsm).length === 0;
}

export function readSettings(node: Node): Settings {
  const raw = (key: string): unknown => node.tryGetContext(key);
  const str = (key: string): string | undefined => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`context "${key}" must be a string`);
    return v;
  };
  const list = (key: string): string[] => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return [];
    if (Array.isArray(v)) return v.map(String);
    return String(v).split(',').map((s) => s.trim()).filter(Boolean);
  };
  const int = (key: string, fallback: number, min: number, max: number): number => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`context "${key}" must be an integer in ${min}..${max}`);
    return n;
  };
  const fraction = (key: string, fallback: number): number => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`context "${key}" must be a number in 0..1 (0.01 is 1 %)`);
    return n;
  };
  const bool = (key: string, fallback: boolean): boolean => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return fallback;
    if (v === true || v === 'true' || v === '1') return true;
    if (v === false || v === 'false' || v === '0') return false;
    throw new Error(`context "${key}" must be true or false`);
  };
  const name = str('name') ?? 'secrets-api';
  if (!/^[a-z][a-z0-9-]{1,23}$/.test(name)) throw new Error('context "name" must be 2-24 lower-case letters, digits or dashes, starting with a letter');
  const stage = str('stage') ?? 'prod';
  if (!/^[A-Za-z0-9_]{1,64}$/.test(stage)) throw new Error('context "stage" must be letters, digits or underscores');
  return {
    name,
    stage,
    assetDir: str('assetDir'),
    sourceMaps: bool('sourceMaps', false),
    publicBaseUrl: str('publicBaseUrl'),
    memoryMb: int('memoryMb', 512, 128, 10240),
    logRetentionDays: int('logRetentionDays', 90, 1, 3653),
    retainLogs: bool('retainLogs', false),
    throttling: {
      groups: {
        default: { rate: int('throttleRate', DEFAULT_THROTTLING.groups.default.rate, 1, 1_000_000), burst: int('throttleBurst', DEFAULT_THROTTLING.groups.default.burst, 0, 1_000_000) },
        public: { rate: int('throttlePublicRate', DEFAULT_THROTTLING.groups.public.rate, 1, 1_000_000), burst: int('throttlePublicBurst', DEFAULT_THROTTLING.groups.public.burst, 0, 1_000_000) },
        signing: { rate: int('throttleSigningRate', DEFAULT_THROTTLING.groups.signing.rate, 1, 1_000_000), burst: int('throttleSigningBurst', DEFAULT_THROTTLING.groups.signing.burst, 0, 1_000_000) },
      },
      routes: routeThrottles(raw('throttleRoutes')),
    },
    wafWebAclArn: str('wafWebAclArn'),
    corsOrigins: (() => {
      try {
        return parseOrigins(list('corsOrigins'));
      } catch (error) {
        throw new Error(`context "corsOrigins": ${(error as Error).message}`);
      }
    })(),
    alarmTopicArn: str('alarmTopicArn'),
    alarmEmail: (() => {
      const email = str('alarmEmail');
      if (email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new Error('context "alarmEmail" must be one e-mail address (name@example.com)');
      if (email !== undefined && str('alarmTopicArn')) {
        throw new Error('context "alarmEmail" subscribes to the deployment\'s own alarm topic; with alarmTopicArn set, subscribe the address to that topic instead');
      }
      return email;
    })(),
    ipfsApiUrl: str('ipfsApiUrl'),
    breachRangeUrl: str('breachRangeUrl'),
    apiGatewayCloudWatchRole: bool('apiGatewayCloudWatchRole', true),
    paymentSecretArn: str('paymentSecretArn'),
    mockRoutes: bool('mockRoutes', false),
    xraySampleRate: fraction('xraySampleRate', XRAY_DEFAULTS.sampleRate),
    xrayReservoir: int('xrayReservoir', XRAY_DEFAULTS.reservoir, 0, 1_000_000),
    hsm: {
      clusterId: str('hsmClusterId'),
      vpcId: str('hsmVpcId'),
      subnetIds: list('hsmSubnetIds'),
      securityGroupId: str('hsmSecurityGroupId'),
      clientConfigPath: underTmp(str('hsmClientConfigPath') ?? '/tmp/cloudhsm/cloudhsm-pkcs11.cfg'),
      layerPath: str('hsmLayerPath'),
      libraryPath: str('hsmLibraryPath') ?? '/opt/cloudhsm/lib/libcloudhsm_pkcs11.so',
      tokenLabel: str('hsmTokenLabel') ?? 'hsm1',
      pinSecretArn: str('hsmPinSecretArn'),
      connectionBudget: int('hsmConnectionBudget', 300, 1, 900),
      required: bool('requireHsm', false),
    },
  };
}

/**
 * Context `throttleRoutes`: an object (cdk.json) or its JSON text (`-c throttleRoutes=...`)
 * mapping route keys to {rate, burst}. Whether each key is a route is checked against the
 * route table when the stage is built (infra/throttling.ts routeLimits).
 */
function routeThrottles(value: unknown): Record<string, Limit> {
  if (value === undefined || value === null || value === '') return {};
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new Error('context "throttleRoutes" must be JSON: {"<METHOD> <path>": {"rate": <n>, "burst": <n>}}');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('context "throttleRoutes" must be an object of route keys');
  const out: Record<string, Limit> = {};
  for (const [key, limit] of Object.entries(parsed)) {
    const { rate, burst } = (limit ?? {}) as { rate?: unknown; burst?: unknown };
    const ok = (n: unknown, min: number) => typeof n === 'number' && Number.isInteger(n) && n >= min && n <= 1_000_000;
    if (!ok(rate, 1) || !ok(burst, 0)) throw new Error(`context "throttleRoutes": "${key}" needs integer rate (1..1000000) and burst (0..1000000)`);
    out[key] = { rate: rate as number, burst: burst as number };
  }
  return out;
}

/** Lambda can write only under /tmp. */
function underTmp(path: string): string {
  if (!/^\/tmp\/[^\0]+$/.test(path) || path.split('/').includes('..')) throw new Error('context "hsmClientConfigPath" must be a file under /tmp/ (the only writable directory in Lambda)');
  return path;
}
