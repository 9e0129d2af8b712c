import * as z from 'zod/v4';
import { config } from '../../config.js';
import { readResource } from '../../resources/store.js';
import { databaseRoleProblems } from '../../database/records.js';
import { CertificatePem, Email, Host, HttpUrl, Port, PrivateKeyPem, Secret, Text } from '../fields.js';
import { Problems, type Fields, type TypeSpec } from '../model.js';

/**
 * The integration catalogue (GET /api/v1/integration-providers) and the two collections
 * that are validated against it: `integrations` (a configured connection to an external
 * system, one provider per entry) and `service-config` (service settings, and database
 * roles that the database-lease capability issues credentials from).
 *
 * Every provider is a zod object; the catalogue publishes it as JSON Schema with its secret
 * fields named, and an integration's body is validated by the same object. Which providers
 * a deployment offers is configuration (INTEGRATION_PROVIDERS; default all).
 */
type ProviderCategory = 'database' | 'directory' | 'storage' | 'payment' | 'hsm' | 'email' | 'cloud';

interface Provider {
  readonly id: string;
  readonly name: string;
  readonly category: ProviderCategory;
  readonly description: string;
  readonly shape: z.ZodRawShape;
  readonly secret: readonly string[];
}

/** TLS to a database, in libpq's sslmode terms (MySQL/MariaDB: DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY). */
const databaseTls = {
  tls_mode: z.enum(['disable', 'require', 'verify-ca', 'verify-full']).default('verify-full'),
  tls_ca_certificate: CertificatePem.optional(),
  tls_client_certificate: CertificatePem.optional(),
  tls_client_key: PrivateKeyPem.optional(),
};
const DB_SECRET = ['password', 'tls_client_key'];

const database = (id: string, name: string, port: number, extra: z.ZodRawShape = {}): Provider => ({
  id,
  name,
  category: 'database',
  description: `${name} server: the administrative connection used to create and revoke database users.`,
  shape: {
    host: Host,
    port: Port.default(port),
    database: Text(128),
    username: Text(128),
    password: Secret(1024),
    ...databaseTls,
    connect_timeout_seconds: z.number().int().min(1).max(120).default(10),
    ...extra,
  },
  secret: DB_SECRET,
});

const PROVIDERS: readonly Provider[] = [
  database('postgresql', 'PostgreSQL', 5432),
  database('mysql', 'MySQL', 3306),
  database('mariadb', 'MariaDB', 3306),
  database('mongodb', 'MongoDB', 27017, { auth_source: Text(128).default('admin'), replica_set: Text(128).optional() }),
  {
    id: 'redis',
    name: 'Redis',
    category: 'database',
    description: 'Redis server (ACL user).',
    shape: {
      host: Host,
      port: Port.default(6379),
      username: Text(128).default('default'),
      password: Secret(1024),
      db: z.number().int().min(0).max(15).default(0),
      ...databaseTls,
    },
    secret: DB_SECRET,
  },
  {
    id: 'ldap',
    name: 'LDAP directory',
    category: 'directory',
    description: 'LDAP or Active Directory: bind account and search base.',
    shape: {
      url: z.url({ protocol: /^ldaps?$/ }).max(2048),
      bind_dn: Text(1024),
      password: Secret(1024),
      base_dn: Text(1024),
      user_filter: Text(1024).default('(objectClass=person)'),
      start_tls: z.boolean().default(false),
      ca_certificate: CertificatePem.optional(),
    },
    secret: ['password'],
  },
  {
    id: 'ipfs',
    name: 'IPFS',
    category: 'storage',
    description: 'An IPFS node or pinning service (Kubo RPC API).',
    shape: {
      api_url: HttpUrl,
      gateway_url: HttpUrl.optional(),
      auth: z.enum(['none', 'basic', 'bearer']).default('none'),
      username: Text(256).optional(),
      password: Secret(1024).optional(),
      bearer_token: Secret(4096).optional(),
    },
    secret: ['password', 'bearer_token'],
  },
  {
    id: 'stripe',
    name: 'Stripe',
    category: 'payment',
    description: 'Stripe payments: API keys and the webhook signing secret of POST /webhooks/stripe.',
    shape: {
      mode: z.enum(['test', 'live']),
      publishable_key: z.string().regex(/^pk_(test|live)_[A-Za-z0-9]{10,256}$/, 'a Stripe publishable key (pk_...)'),
      secret_key: z.string().regex(/^(sk|rk)_(test|live)_[A-Za-z0-9]{10,256}$/, 'a Stripe secret or restricted key (sk_... / rk_...)'),
      webhook_secret: z
        .string()
        .regex(/^whsec_[A-Za-z0-9+/=]{10,256}$/, 'a Stripe webhook signing secret (whsec_...)')
        .optional(),
      account_id: z
        .string()
        .regex(/^acct_[A-Za-z0-9]{6,64}$/)
        .optional(),
    },
    secret: ['secret_key', 'webhook_secret'],
  },
  {
    id: 'paypal',
    name: 'PayPal',
    category: 'payment',
    description: 'PayPal REST API app credentials and the webhook id.',
    shape: { environment: z.enum(['sandbox', 'live']), client_id: Text(256), client_secret: Secret(256), webhook_id: Text(128).optional() },
    secret: ['client_secret'],
  },
  {
    id: 'pkcs11',
    name: 'PKCS#11 HSM',
    category: 'hsm',
    description: 'A PKCS#11 token (SoftHSM2, YubiHSM, Luna, nCipher): module, token label and user PIN.',
    shape: { module_path: Text(1024), token_label: Text(32), pin: Secret(256), key_label_prefix: Text(64).optional() },
    secret: ['pin'],
  },
  {
    id: 'aws-cloudhsm',
    name: 'AWS CloudHSM',
    category: 'hsm',
    description: 'An AWS CloudHSM cluster: crypto user and the cluster CA certificate.',
    shape: {
      cluster_id: z.string().regex(/^cluster-[a-z0-9]{11}$/, 'cluster-xxxxxxxxxxx'),
      region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, 'an AWS region'),
      crypto_user: Text(32),
      password: Secret(256),
      cluster_ca_certificate: CertificatePem,
    },
    secret: ['password'],
  },
  {
    id: 'smtp',
    name: 'SMTP relay',
    category: 'email',
    description: 'An outbound mail relay.',
    shape: {
      host: Host,
      port: Port.default(587),
      security: z.enum(['starttls', 'tls', 'none']).default('starttls'),
      username: Text(256).optional(),
      password: Secret(1024).optional(),
      from_address: Email,
    },
    secret: ['password'],
  },
  {
    id: 'aws',
    name: 'Amazon Web Services',
    category: 'cloud',
    description: 'An IAM access key (prefer a role to assume).',
    shape: {
      access_key_id: z.string().regex(/^(AKIA|ASIA)[A-Z0-9]{16}$/, 'an AWS access key id'),
      secret_access_key: z.string().regex(/^[A-Za-z0-9/+=]{40}$/, 'an AWS secret access key'),
      region: z.string().regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, 'an AWS region'),
      role_arn: z
        .string()
        .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/)
        .optional(),
    },
    secret: ['secret_access_key'],
  },
];

const DATABASE_PROVIDERS: readonly string[] = PROVIDERS.filter((p) => p.category === 'database').map((p) => p.id);

/** The providers this deployment offers (INTEGRATION_PROVIDERS, comma-separated; default all). */
export function availableProviders(): readonly Provider[] {
  const allowed = config()
    .INTEGRATION_PROVIDERS?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return allowed ? PROVIDERS.filter((p) => allowed.includes(p.id)) : PROVIDERS;
}

const providerObject = (p: Provider) => z.strictObject({ provider: z.literal(p.id), ...p.shape });

export function catalogueEntry(p: Provider) {
  const schema = z.toJSONSchema(z.strictObject(p.shape), { io: 'input' }) as { properties?: Record<string, unknown>; required?: string[] };
  return {
    id: p.id,
    name: p.name,
    category: p.category,
    description: p.description,
    fields: schema.properties ?? {},
    required: schema.required ?? [],
    secret_fields: p.secret,
  };
}

export const integration: TypeSpec = {
  type: 'integration',
  summary: 'A configured connection to an external system, validated against GET /api/v1/integration-providers.',
  fields: { key: 'provider', options: PROVIDERS.map(providerObject) },
  secret: [...new Set(PROVIDERS.flatMap((p) => p.secret))],
  update: 'replace',
  immutable: ['provider'],
  updateSemantics:
    'PUT replaces the whole configuration of the same provider (provider cannot change): public fields left out take their defaults or are cleared; secret fields left out keep their stored value.',
  prepare(_ctx, f) {
    const p = new Problems();
    p.check(
      availableProviders().some((x) => x.id === f.provider),
      'provider',
      `provider "${String(f.provider)}" is not offered by this deployment`,
    );
    if (f.provider === 'ipfs') {
      if (f.auth === 'basic') p.check(f.username !== undefined && f.password !== undefined, 'username', 'basic auth needs username and password');
      if (f.auth === 'bearer') p.check(f.bearer_token !== undefined, 'bearer_token', 'bearer auth needs bearer_token');
    }
    if (typeof f.tls_mode === 'string' && f.tls_mode.startsWith('verify') && f.tls_client_certificate !== undefined) {
      p.check(f.tls_client_key !== undefined, 'tls_client_key', 'a client certificate needs its key');
    }
    p.throwIfAny();
    return f;
  },
};

// ---- service-config -------------------------------------------------------------------

const Statements = z
  .array(
    z
      .string()
      .trim()
      .min(1)
      .max(16 * 1024),
  )
  .max(50);
const Settings = z
  .record(
    z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-"'),
    z.string().max(4096),
  )
  .refine((s) => Object.keys(s).length <= 200, { message: 'at most 200 settings' });

/**
 * A database role (kind `database-role`): the statements that create and revoke a
 * short-lived user on the database of `connection_id` (an integration of a database
 * provider), and the lease TTLs. Placeholders: {{name}}, {{password}}, {{expiration}}.
 */
export const DatabaseRole = z.strictObject({
  kind: z.literal('database-role'),
  connection_id: z.uuid(),
  creation_statements: Statements.min(1).refine((s) => s.some((x) => x.includes('{{name}}')), { message: 'must use {{name}}' }),
  revocation_statements: Statements.optional(),
  rotation_statements: Statements.optional(),
  default_ttl_seconds: z.number().int().min(60).max(31_536_000).default(3600),
  max_ttl_seconds: z.number().int().min(60).max(31_536_000).default(86_400),
  username_template: Text(256).optional(),
});
export type DatabaseRole = z.infer<typeof DatabaseRole>;

export const serviceConfig: TypeSpec = {
  type: 'service_config',
  summary:
    'Configuration of a service (settings with secret settings sealed), or a database role (kind "database-role") for database credential leases.',
  fields: {
    key: 'kind',
    options: [
      z.strictObject({
        kind: z.literal('generic'),
        service: Text(128),
        environment: Text(64).optional(),
        endpoint: HttpUrl.optional(),
        settings: Settings.optional(),
        secret_settings: Settings.optional(),
      }),
      DatabaseRole,
    ],
  },
  secret: ['secret_settings'],
  update: 'replace',
  immutable: ['kind'],
  updateSemantics: 'PUT replaces the whole configuration of the same kind (kind cannot change); secret_settings left out keep their stored value.',
  async prepare(ctx, f: Fields) {
    if (f.kind !== 'database-role') return f;
    const p = new Problems();
    p.check((f.default_ttl_seconds as number) <= (f.max_ttl_seconds as number), 'default_ttl_seconds', 'must not exceed max_ttl_seconds');
    const conn = await readResource<Fields>(ctx.principal.tenantId, 'integration', f.connection_id as string);
    p.check(
      conn !== undefined && DATABASE_PROVIDERS.includes(conn.record.meta.provider as string),
      'connection_id',
      'no database integration with this id',
    );
    // statement and username templates, checked against the connection's engine (lib/database)
    for (const issue of databaseRoleProblems(f, conn?.record.meta.provider as string | undefined)) p.add(issue.field, issue.message);
    p.throwIfAny();
    return f;
  },
};

/* Responses of GET /api/v1/integration-providers (functions/credentials/integrations.ts). */
export const ProviderList = z.strictObject({
  providers: z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      category: z.enum(['database', 'directory', 'storage', 'payment', 'hsm', 'email', 'cloud']),
      description: z.string(),
      fields: z.record(z.string(), z.unknown()).describe('The JSON Schema of each field an integration of this provider takes.'),
      required: z.array(z.string()),
      secret_fields: z.array(z.string()),
    }),
  ),
  total: z.int().min(0),
});
