import * as z from 'zod/v4';
import { CATALOG } from '../catalog.js';

const Type = z.enum(Object.keys(CATALOG) as [string, ...string[]], {
  message: 'type must be a resource type of the catalogue (e.g. secret, wifi_credential)',
});

export const TraceBody = z.strictObject({
  /** Only reads are traced: a described read of one of the caller's own resources. */
  operation: z.literal('read', { message: 'operation must be "read"' }).default('read'),
  type: Type,
  id: z.uuid({ message: 'id must be the resource id (a UUID)' }),
  /** Also open the sealed part (key provider calls); the value is never returned. */
  open: z.boolean().default(true),
});

export const ConfigureBody = z.strictObject({ secrets: z.number().int().min(1).max(50).default(3) }).default({ secrets: 3 });

export const TemplateParams = z.strictObject({
  type: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z_]+$/, 'type must be a catalogue type name (lower-case letters and _)'),
});

/* Responses */

const Scope = z.string().describe('A scope, e.g. `secrets:read`.');

/** GET /api/v1/diagnostics */
const Probe = z.looseObject({
  name: z.enum(['table', 'key_provider', 'hsm', 'queue', 's3', 'payment_provider']),
  status: z.enum(['ok', 'error', 'configured', 'not_configured', 'unavailable']),
  latency_ms: z.int().min(0).optional(),
  error: z.string().optional().describe('The error’s class name (never its message).'),
});

export const Diagnostics = z.object({
  diagnostics: z.object({
    detail: z
      .enum(['operator', 'account'])
      .describe(
        '`operator` for a platform operator: every probe’s details, the runtime version and the configuration; `account` for an account admin: each dependency’s status only.',
      ),
    status: z.enum(['ok', 'degraded']).describe('`degraded` when a dependency probe failed.'),
    dependencies: z.array(Probe),
    versions: z.object({ service: z.string(), node: z.string().optional().describe('Platform operator only.') }),
    configuration: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Platform operator only: the configuration with secret-bearing values `[redacted]`.'),
    caller: z.object({
      tenant_id: z.uuid(),
      principal: z.object({ kind: z.string(), id: z.string(), user: z.string().nullable() }),
      operator: z.boolean(),
      scopes: z.array(Scope),
      effective_scopes: z.array(Scope).describe('Every scope the credential holds (`admin:*` expanded).'),
    }),
  }),
});

/** GET /api/v1/diagnostics/auth */
const CredentialKind = z.enum(['access_token', 'api_token', 'api_key']);
export const AuthDiagnosis = z.object({
  accepted: z.boolean().describe('Whether the credential authenticates.'),
  reason: z.string().optional().describe('Why it does not (e.g. `missing_credentials`, `expired`, `unknown_credential`).'),
  explanation: z.string().optional().describe('What to do about it.'),
  expired_at: z.string().optional(),
  credential: z
    .object({
      kind: CredentialKind,
      id: z.string().optional(),
      account_id: z.uuid().optional(),
      user: z.string().nullable().optional(),
      scopes: z.array(Scope).optional(),
      operator: z.boolean().optional(),
    })
    .optional()
    .describe('The credential as understood (never the credential itself).'),
  route: z
    .object({
      key: z.string(),
      allowed: z.boolean(),
      reason: z.string().optional(),
      missing_scopes: z.array(Scope).optional(),
      note: z.string().optional(),
    })
    .optional()
    .describe('With `?route=`: whether the credential passes that route’s checks.'),
});

/** POST /api/v1/diagnostics/trace */
const Phase = z.object({
  name: z.string().describe('`read_head`, `open_sealed` or `total`.'),
  ms: z.number().min(0),
  dynamodb_round_trips: z.int().min(0),
  dynamodb_operations: z.array(z.string()),
  key_provider_calls: z.int().min(0),
  key_provider_operations: z.array(z.string()),
});
export const Trace = z.object({
  trace: z.object({
    request: z.object({ operation: z.literal('read'), type: z.string(), id: z.uuid(), open: z.boolean() }),
    result: z.object({
      found: z.literal(true),
      version: z.int().min(1),
      sealed_fields: z.int().min(0).optional().describe('How many fields the sealed part holds (never their values).'),
    }),
    total: Phase,
    phases: z.array(Phase),
  }),
});

/** GET /api/v1/mock/templates/{type} */
export const MockTemplate = z.object({
  template: z.object({
    type: z.string(),
    create: z.object({ method: z.literal('POST'), path: z.string() }).describe('The route that creates the type.'),
    body: z.record(z.string(), z.unknown()).describe('A valid example body for that route.'),
    note: z.string().optional(),
  }),
});

/** POST /api/v1/mock/configure */
const Fixture = z.object({ type: z.enum(['container', 'secret']), name: z.string() });
export const Sandbox = z.object({
  sandbox: z.object({
    container_id: z.uuid(),
    created: z.array(Fixture).describe('Fixtures created by this call.'),
    existing: z.array(Fixture).describe('Fixtures already there (the call is idempotent).'),
  }),
});
