import * as z from 'zod/v4';
import { parseOrigins } from './core/origins.js';

/**
 * Every environment variable the service reads, parsed once at cold start with zod and
 * failing fast. Handlers never read process.env; they get what they need from here.
 */
const Env = z
  .object({
    TABLE_NAME: z.string().min(3).default('secrets'),
    /** Set only for DynamoDB Local (the embedded runtime and tests). */
    DYNAMODB_ENDPOINT: z.url().optional(),
    AWS_REGION: z.string().default('us-east-1'),
    /** `kms` in AWS; `local` for the embedded runtime (a master key file wraps data keys). */
    KEY_PROVIDER: z.enum(['kms', 'local']).default('kms'),
    KMS_KEY_ID: z.string().optional(),
    /**
     * The tenant-access role of this function (infra/grants.ts): after authentication, the
     * table and KMS calls of a tenant route use an STS session of it tagged with the tenant
     * (lib/tenancy). Unset (the source runtime): the function's own credentials, with the
     * same partition rule enforced in code.
     */
    TENANT_ROLE_ARN: z.string().optional(),
    /** Set only for the local STS stand-in (the artifact runtime and tests). */
    STS_ENDPOINT: z.url().optional(),
    LOCAL_MASTER_KEY_FILE: z.string().optional(),
    /** How long an unwrapped tenant data key stays in memory. */
    DATA_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(300),
    SERVICE_NAME: z.string().default('secrets-api'),
    SERVICE_VERSION: z.string().default('0.1.0'),
    /** Public base URL of the API, used to build absolute links (temporary access URLs). */
    PUBLIC_BASE_URL: z.url().optional(),
    /** Largest accepted nesting depth of a JSON body. */
    MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(64).default(16),
    /** Integration providers this deployment offers (comma-separated ids; absent = all). functions/credentials/integrations.ts */
    INTEGRATION_PROVIDERS: z.string().optional(),
    /** Webhook queue (lib/events/queue.ts): `sqs` in AWS; `memory` = the local runtime's in-process queue. */
    QUEUE_PROVIDER: z.enum(['sqs', 'memory']).default('sqs'),
    WEBHOOK_QUEUE_URL: z.url().optional(),
    WEBHOOK_DLQ_URL: z.url().optional(),
    /** Development only: lets an account opt in (settings) to loopback webhook receivers. Refused with KMS. */
    WEBHOOKS_ALLOW_LOOPBACK: z
      .enum(['0', '1', 'true', 'false'])
      .default('0')
      .transform((v) => v === '1' || v === 'true'),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(10_000),
    WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(8),
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
    WEBHOOK_RETRY_MAX_MS: z.coerce.number().int().min(10).max(43_200_000).default(3_600_000),
    /** Token bucket of unauthenticated routes per source IP (lib/ratelimit). */
    RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().min(1).max(100_000_000).default(6_000),
    /** PKCS#11 signing (lib/signing): the module (CloudHSM's libcloudhsm_pkcs11.so in AWS, SoftHSM2 locally); unset = the pkcs11 backend is unavailable (503). */
    PKCS11_MODULE: z.string().min(1).optional(),
    /** The token is found by this label, never by slot number (CloudHSM: hsm1). */
    PKCS11_TOKEN_LABEL: z.string().min(1).max(32).default('secrets-api'),
    /** The crypto user's PIN (CloudHSM: `<user>:<password>`), or PKCS11_PIN_SECRET_ID: a Secrets Manager secret holding it (a string, or JSON {username, password}). */
    PKCS11_PIN: z.string().min(1).optional(),
    PKCS11_PIN_SECRET_ID: z.string().min(1).optional(),
    /** PKCS#11 sessions per process (one operation per session at a time). */
    PKCS11_POOL_SIZE: z.coerce.number().int().min(1).max(64).default(4),
    /** CloudHSM (lib/signing/cloudhsm.ts): the cluster whose HSM addresses are looked up (DescribeClusters) before the PKCS#11 library starts. */
    CLOUDHSM_CLUSTER_ID: z
      .string()
      .regex(/^cluster-[2-7a-zA-Z]{11,16}$/, 'must be a CloudHSM cluster id (cluster-...)')
      .optional(),
    /** Where that lookup writes the Client SDK 5 configuration (the layer links /opt/cloudhsm/etc/cloudhsm-pkcs11.cfg here: /opt is read-only). */
    CLOUDHSM_CLIENT_CONFIG: z.string().startsWith('/').default('/tmp/cloudhsm/cloudhsm-pkcs11.cfg'),
    /** Another CloudHSM API endpoint (a VPC interface endpoint; tests point it at a fake). */
    CLOUDHSM_ENDPOINT: z.url().optional(),
    /** Browser origins allowed by CORS (comma-separated, exact `scheme://host[:port]`); empty = no CORS headers. lib/http/cors.ts */
    CORS_ALLOWED_ORIGINS: z
      .string()
      .optional()
      .transform((value, ctx) => {
        try {
          return parseOrigins(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    /** Development only: ACME enrollment may use a directory on a loopback address (a local pebble). Refused with KMS. */
    ACME_ALLOW_LOOPBACK: z
      .enum(['0', '1', 'true', 'false'])
      .default('0')
      .transform((v) => v === '1' || v === 'true'),
    /** Upper bound of one ACME enrollment (order, http-01 validation, finalization), within API Gateway's 29 s. */
    ACME_TIMEOUT_MS: z.coerce.number().int().min(1000).max(28_000).default(25_000),
    /** The AWS KMS asymmetric signing backend; default: on with KEY_PROVIDER=kms. */
    SIGNING_KMS_ENABLED: z
      .enum(['0', '1', 'true', 'false'])
      .optional()
      .transform((v) => (v === undefined ? undefined : v === '1' || v === 'true')),
    /** Database leases (lib/database): connect and per-statement limits on customer database servers. */
    DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(20_000).default(5_000),
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(25_000).default(10_000),
    /** Development only: database connections to loopback addresses (the local servers). Refused with KMS. */
    DATABASE_ALLOW_LOOPBACK: z
      .enum(['0', '1', 'true', 'false'])
      .default('0')
      .transform((v) => v === '1' || v === 'true'),
    /**
     * Customer databases on private addresses (RDS in a VPC): the CIDR blocks the platform
     * operator opens per account, as JSON `{"<account id>": ["10.20.0.0/16", …]}`. Only private,
     * unique-local and carrier-grade NAT addresses inside a listed block are admitted, only for
     * that account (lib/events/ssrf.ts); a deployment setting, so no tenant can set it. Absent: none.
     */
    DATABASE_PRIVATE_NETWORKS: z
      .string()
      .optional()
      .transform((raw, ctx) => {
        if (!raw) return {} as Readonly<Record<string, readonly string[]>>;
        let json: unknown;
        try {
          json = JSON.parse(raw);
        } catch {
          json = undefined;
        }
        const parsed = z.record(z.uuid(), z.array(z.cidrv4().or(z.cidrv6())).max(100)).safeParse(json);
        if (!parsed.success) {
          ctx.addIssue({ code: 'custom', message: 'a JSON object of account id → list of CIDR blocks' });
          return z.NEVER;
        }
        return parsed.data as Readonly<Record<string, readonly string[]>>;
      }),
    /**
     * Where relying parties fetch each account CA's CRL and issuer certificate
     * (lib/certificates/publish.ts): the public URL prefix of `<ca id>.crl` and `<ca id>.crt`,
     * named in every issued certificate (CRL Distribution Points, Authority Information Access).
     * Unset: certificates name none and nothing is published.
     */
    PKI_PUBLIC_BASE_URL: z.url().optional(),
    /** Where the files are written: an S3 bucket (AWS, as AWS Private CA publishes CRLs), or a directory the local gateway serves at /pki/. */
    PKI_PUBLISH_BUCKET: z.string().min(3).optional(),
    PKI_PUBLISH_PREFIX: z.string().default('pki/'),
    PKI_PUBLISH_DIR: z.string().min(1).optional(),
    /** Days a published CRL is current (its nextUpdate); it is re-published on every revocation. */
    PKI_CRL_VALIDITY_DAYS: z.coerce.number().int().min(1).max(30).default(7),
    /** Protected documents (lib/documents/storage.ts): the S3 bucket holding the sealed PDFs; unset = document routes answer 503. */
    DOCUMENTS_BUCKET: z.string().min(3).optional(),
    /** Development only: an S3-compatible endpoint (the local engine, path-style addressing). */
    DOCUMENTS_S3_ENDPOINT: z.url().optional(),
    /** Breach checks (lib/tools/breach.ts): the k-anonymity range API (HIBP model: GET <url><5 hex>). The local runtime serves a small corpus. */
    BREACH_RANGE_URL: z.url().default('https://api.pwnedpasswords.com/range/'),
    /** IPFS (lib/tools/ipfs.ts): the Kubo RPC API of the operator's node (AWS), or a filesystem blockstore (the local runtime). */
    IPFS_API_URL: z.url().optional(),
    IPFS_BLOCKSTORE_DIR: z.string().min(1).optional(),
    /**
     * The audit queue (lib/audit/queue.ts): where a read-only route (grant `audit:send`, lib/routes.ts)
     * sends its audit entries for the audit writer (functions/audit/writer.ts) to write. Set for
     * those functions only (infra); the local runtimes point it at fauxqs.
     */
    AUDIT_QUEUE_URL: z.url().optional(),
    /** Extraction jobs (lib/tools/extraction.ts): the jobs queue (SQS in AWS; the local runtime runs jobs in-process). */
    JOBS_QUEUE_URL: z.url().optional(),
    /** LDAP (lib/tools/ldap.ts): connect and operation time limit. */
    LDAP_TIMEOUT_MS: z.coerce.number().int().min(500).max(25_000).default(10_000),
    /** Development only: the tool routes (range API, IPFS node, LDAP servers) may reach loopback addresses. Refused with KMS. */
    TOOLS_ALLOW_LOOPBACK: z
      .enum(['0', '1', 'true', 'false'])
      .default('0')
      .transform((v) => v === '1' || v === 'true'),
    /** Days a revoked (or expired) lease record is kept before DynamoDB TTL removes it. */
    LEASE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    /** The local runtime's lease-expiry sweeper period (AWS: an EventBridge schedule). */
    LEASE_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
    /**
     * Billing (lib/billing): the payment provider; `stripe` in AWS (set by infra where the
     * deployment has the payment secret), `local` = the embedded runtime's simulated provider.
     * Unset: the billing routes that need a provider answer 503.
     */
    PAYMENT_PROVIDER: z.enum(['stripe', 'local']).optional(),
    /** Secrets Manager secret holding the provider's JSON {"secret_key", "webhook_secret", "prices"} (never a request). */
    PAYMENT_SECRET_ID: z.string().min(1).optional(),
    /** The local provider's stand-in for that secret: a file the runtime creates with a fresh signing secret. */
    PAYMENT_SECRET_FILE: z.string().min(1).optional(),
    /** The integrator helpers GET /api/v1/mock/templates/{type} and POST /api/v1/mock/configure (off: 404). */
    MOCK_ROUTES_ENABLED: z
      .enum(['0', '1', 'true', 'false'])
      .default('0')
      .transform((v) => v === '1' || v === 'true'),
  })
  .superRefine((env, ctx) => {
    if (env.KEY_PROVIDER === 'kms' && !env.KMS_KEY_ID) {
      ctx.addIssue({ code: 'custom', path: ['KMS_KEY_ID'], message: 'KMS_KEY_ID is required when KEY_PROVIDER=kms' });
    }
    if (env.KEY_PROVIDER === 'kms' && env.DATABASE_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['DATABASE_ALLOW_LOOPBACK'],
        message: 'loopback database servers are for local development only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'kms' && env.ACME_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['ACME_ALLOW_LOOPBACK'],
        message: 'loopback ACME directories are for local development only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'kms' && env.WEBHOOKS_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['WEBHOOKS_ALLOW_LOOPBACK'],
        message: 'loopback webhook receivers are for local development only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'kms' && env.TOOLS_ALLOW_LOOPBACK) {
      ctx.addIssue({
        code: 'custom',
        path: ['TOOLS_ALLOW_LOOPBACK'],
        message: 'loopback tool endpoints are for local development only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'kms' && env.QUEUE_PROVIDER === 'memory') {
      ctx.addIssue({
        code: 'custom',
        path: ['QUEUE_PROVIDER'],
        message: 'the in-process queue is for the local runtime only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'kms' && env.PAYMENT_PROVIDER === 'local') {
      ctx.addIssue({
        code: 'custom',
        path: ['PAYMENT_PROVIDER'],
        message: 'the local payment provider is for the local runtime only (not with KEY_PROVIDER=kms)',
      });
    }
    if (env.KEY_PROVIDER === 'local' && !env.LOCAL_MASTER_KEY_FILE) {
      ctx.addIssue({ code: 'custom', path: ['LOCAL_MASTER_KEY_FILE'], message: 'LOCAL_MASTER_KEY_FILE is required when KEY_PROVIDER=local' });
    }
  });

type Config = z.infer<typeof Env>;

let cached: Config | undefined;

export function config(): Config {
  if (!cached) {
    const parsed = Env.safeParse(process.env);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new Error(`invalid configuration: ${problems}`);
    }
    cached = parsed.data;
  }
  return cached;
}
