/**
 * Writes the OpenAPI 3.1 document of all 322 routes, derived from the route table
 * (lib/routes.ts) and what each handler declares beside its code (lib/http/define-handler.ts
 * `HandlerDoc`: request schemas, summary, description, success responses, own error codes):
 * `npm run openapi` -> build/openapi.json (or the path given; `--server <url>` and
 * OPENAPI_SERVER_URL set the server, else a `{scheme}://{host}` server with variables).
 *
 * The error responses of a route are derived in one place (`errorCodesOf`) from its facts:
 * its auth kind, path parameters, query, body, If-Match and Idempotency-Key, plus the
 * handler's own codes. The API tests hold every response they receive to this document
 * (test/setup/responses.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as z from 'zod/v4';
import type { HandlerDoc, LambdaHandler, SuccessStatus } from '../lib/http/define-handler.js';
import { ERROR_CODES, type ErrorCode } from '../lib/http/error-codes.js';
import { KNOWN_SCOPES, openApiPath, ROUTES, type Route, wireOf, type Wire } from '../lib/routes.js';

export { openApiPath };
import { loadHandlers } from './local/gateway.js';

type Json = Record<string, unknown>;
type Schemas = NonNullable<LambdaHandler['schemas']>;

export const DEFAULT_OUTPUT = 'build/openapi.json';

/** A zod schema as JSON Schema 2020-12, without the per-schema `$schema` (the document's dialect applies). */
export function jsonSchema(s: z.ZodType | undefined, io: 'input' | 'output' = 'input'): Json | undefined {
  if (!s) return undefined;
  const { $schema: _, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      flaglessPatterns(ctx);
      registeredFormats(ctx);
      if (io === 'input') defaultDiscriminator(ctx);
    },
  }) as Json;
  return rest;
}

/**
 * A pattern the description carries is its source alone (JSON Schema's `pattern`, read with
 * `u`): a flag that changes what it matches (`i`, `m`, `s`) would be dropped, and the
 * description would refuse what the server takes (`/^select/i` and `SELECT`). Such a schema
 * is a mistake to fix where it is written: `[sS]`, `[a-fA-F]`.
 */
function flaglessPatterns(ctx: { zodSchema: unknown }) {
  type Check = { _zod?: { def?: { pattern?: unknown } } };
  const checks = (ctx.zodSchema as { _zod?: { def?: { checks?: Check[] } } })._zod?.def?.checks ?? [];
  for (const p of checks.map((c) => c._zod?.def?.pattern)) {
    if (p instanceof RegExp && /[ims]/.test(p.flags))
      throw new Error(
        `/${p.source}/${p.flags}: the OpenAPI document cannot carry the regex flags "${p.flags.replace(/[^ims]/g, '')}"; write the pattern without them (e.g. [a-fA-F] for /i)`,
      );
  }
}

/**
 * The `format`s of the OpenAPI Format Registry (spec.openapis.org/registry/format) and JSON
 * Schema 2020-12 that zod emits. zod also names its own checks as formats (`starts_with`,
 * `ends_with`, `includes`, `base64`, `hex`, `cidrv4`, `e164`, `jwt`, ...), which no validator or
 * generator knows: ajv warned "unknown format ... ignored" 70 times a run and checked nothing.
 * Their rule is in the `pattern` (and `contentEncoding: base64`) zod writes beside them, so such a
 * format is dropped.
 */
const REGISTERED_FORMATS = new Set([
  'base64url',
  'date',
  'date-time',
  'duration',
  'email',
  'hostname',
  'idn-email',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'iri',
  'iri-reference',
  'json-pointer',
  'regex',
  'relative-json-pointer',
  'time',
  'uri',
  'uri-reference',
  'uri-template',
  'uuid',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]);
function registeredFormats(ctx: { jsonSchema: Json }) {
  const format = ctx.jsonSchema.format;
  if (typeof format === 'string' && !REGISTERED_FORMATS.has(format)) delete ctx.jsonSchema.format;
}

/**
 * A union whose discriminator the server fills in when it is missing (lib/credentials/model.ts,
 * POST /passwords/generate): the request may leave it out for that branch, so the branch the
 * `x-default-discriminator` names does not require it.
 */
function defaultDiscriminator(ctx: { jsonSchema: Json }) {
  const d = ctx.jsonSchema['x-default-discriminator'] as { property: string; value: unknown } | undefined;
  if (!d) return;
  for (const branch of (ctx.jsonSchema.oneOf ?? ctx.jsonSchema.anyOf ?? []) as {
    properties?: Record<string, { const?: unknown }>;
    required?: string[];
  }[]) {
    if (branch.properties?.[d.property]?.const === d.value && branch.required) branch.required = branch.required.filter((k) => k !== d.property);
  }
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

/** The route's path parameters, in order. */
export const pathParams = (route: Pick<Route, 'path'>) => [...route.path.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]!);

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Writes to one resource (its id or name last in the path) honour If-Match (lib/resources/store.ts checkIfMatch). */
export const takesIfMatch = (route: Route) =>
  route.auth === 'bearer' && (route.method === 'PUT' || route.method === 'PATCH' || route.method === 'DELETE') && /\{\w+\}$/.test(route.path);
/** Mutations of an authenticated caller honour Idempotency-Key (lib/http/idempotency.ts). */
export const takesIdempotencyKey = (route: Route) => MUTATIONS.has(route.method) && ['bearer', 'operator', 'device'].includes(route.auth);
/** Reads and writes of one resource answer its ETag. */
export const etagged = (route: Route) =>
  route.auth === 'bearer' && route.method !== 'DELETE' && (route.method === 'POST' || /\{\w+\}$/.test(route.path));
/** Every caller-identified route passes the rate limits (lib/ratelimit/gate.ts); public routes are left to API Gateway's throttling. */
export const rateLimited = (route: Route) => route.auth !== 'public';

/**
 * THE rule for which error codes a route can answer with: from its facts (auth kind, path
 * parameters, query, body, If-Match, Idempotency-Key, built or not) and the handler's own
 * `errors`. Every code is one of the catalogue (lib/http/error-codes.ts).
 */
export function errorCodesOf(route: Route, schemas: Schemas | undefined): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal_error']);
  if (!route.handler) codes.add('not_implemented');
  if (route.auth === 'bearer' || route.auth === 'operator') {
    for (const c of [
      'unauthorized',
      'unsupported_credentials',
      'credentials_expired',
      'forbidden',
      'insufficient_scope',
      'tenant_suspended',
      'ip_not_allowed',
    ] as const)
      codes.add(c);
  }
  if (route.auth === 'operator') codes.add('operator_required');
  if (route.auth === 'device')
    for (const c of ['unauthorized', 'invalid_signature', 'forbidden', 'insufficient_scope', 'tenant_suspended'] as const) codes.add(c);
  if (rateLimited(route)) codes.add('rate_limited');
  if (pathParams(route).length > 0) codes.add('not_found');
  if (schemas?.query || schemas?.params) {
    codes.add('validation_failed');
    codes.add('bad_request');
  }
  if (schemas?.body || MUTATIONS.has(route.method)) {
    for (const c of ['validation_failed', 'invalid_json', 'json_too_deep', 'payload_too_large', 'unsupported_media_type'] as const) codes.add(c);
  }
  if (takesIfMatch(route)) {
    codes.add('stale_etag');
    codes.add('precondition_failed');
  }
  if (takesIdempotencyKey(route))
    for (const c of ['invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_in_progress'] as const) codes.add(c);
  for (const c of schemas?.errors ?? []) codes.add(c);
  return [...codes];
}

/** One tag per family of the route table, with what it holds (docs/api.md has the guide to each). */
export const FAMILY_TAGS: Readonly<Record<string, string>> = {
  public: 'Health, pricing and the service\u2019s public documents.',
  auth: 'Sign-in: users, sessions, refresh tokens, passkeys, SSO, CLI and workload tokens, zero-knowledge passwords.',
  account: 'The account: its API keys, settings, quotas and usage.',
  operator: 'Platform operators: accounts (tenants) and their lifecycle.',
  secrets: 'Generic secrets: versioned name/value data with ETags and history.',
  credentials: 'Typed credentials: one collection per credential type, each with its own schema.',
  passwords: 'Passwords: generation, strength, the password vault and policies.',
  tokens: 'API tokens kept for third-party services.',
  containers: 'Containers that group resources.',
  keys: 'Keys: SSH, PGP, age, OpenSSL and other key kinds, import, export and conversions.',
  certificates: 'Certificates: a private CA, CSRs, issuance, revocation, CRLs and ACME.',
  signing: 'Operation-only signing on the HSM (PKCS#11: SoftHSM2 locally, CloudHSM in AWS).',
  database: 'Database leases: short-lived database credentials, rotation and revocation.',
  variables: 'Variables: non-secret configuration values.',
  agents: 'Agents (device identities): enrolment, the device flow, signed device requests, leases.',
  sharing: 'History, sharing, temporary access links and lookup.',
  documents: 'Protected documents: sealed PDFs, grants, rendering and downloads.',
  federation: 'Federation: OIDC clients, JWK sets and tokens; SAML metadata and assertions.',
  audit: 'The audit trail.',
  webhooks: 'Webhooks: subscriptions and deliveries of events.',
  billing: 'Billing through the payment provider.',
  diagnostics: 'Diagnostics and integrator helpers.',
  tools: 'Tools: S/KEY, time-locks, escrow, steganography, transforms, exports, breach checks, LDAP, IPFS, extraction.',
};

/** Response headers (components/headers). */
const HEADERS = {
  'X-Request-Id': {
    description: 'The request\u2019s id, also in the error body\u2019s `request_id`: quote it when reporting a problem.',
    schema: { type: 'string' },
  },
  ETag: {
    description: 'The strong version tag `"<id>.<version>"` of the resource: send it in If-Match to update or delete that version.',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  RateLimit: {
    description: 'draft-ietf-httpapi-ratelimit-headers: `"<policy>";r=<requests left>;t=<seconds until full>`.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': { description: 'draft-ietf-httpapi-ratelimit-headers: `"<policy>";q=<requests>;w=60`.', schema: { type: 'string' } },
  Location: {
    description: 'Where a redirect sends the browser (the client\u2019s redirect URI with the code or error, or the identity provider).',
    schema: { type: 'string', format: 'uri-reference' },
  },
  'Idempotent-Replayed': {
    description: '`true` when the answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
  },
} as const;
const header = (name: keyof typeof HEADERS) => ({ [name]: { $ref: `#/components/headers/${name}` } });

/** Request header parameters (components/parameters). */
const PARAMETERS = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The ETag of the version the change is based on (`*`: any version). A stale tag or a concurrent write: 409 `stale_etag`; a malformed tag, or one for a missing resource: 412 `precondition_failed`.',
    schema: { type: 'string' },
  },
  IfMatchRequired: {
    name: 'If-Match',
    in: 'header',
    required: true,
    description:
      'Required (RFC 6585 §3): the ETag of a GET of the resource, the version the change is based on (`*`: any version). Without it: 428 `precondition_required`. A stale tag or a concurrent write: 409 `stale_etag`; a malformed tag, or one for a missing resource: 412 `precondition_failed`.',
    schema: { type: 'string', minLength: 1 },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retried mutation safe: 1-255 printable characters; the same key with the same request answers the stored answer (`Idempotent-Replayed: true`), with another request 409 `idempotency_key_reused`.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  Signature: {
    name: 'Signature',
    in: 'header',
    required: true,
    description: 'RFC 9421: `sig1=:<base64 signature over the signature base>:`.',
    schema: { type: 'string' },
  },
  SignatureInput: {
    name: 'Signature-Input',
    in: 'header',
    required: true,
    description: 'RFC 9421: `sig1=("@method" "@path" "@query" "content-digest");created=<unix s>;nonce="<nonce>";keyid="<device id>";alg="ed25519"`.',
    schema: { type: 'string' },
  },
  ContentDigest: {
    name: 'Content-Digest',
    in: 'header',
    required: true,
    description: 'RFC 9530: `sha-256=:<base64 of SHA-256(body bytes)>:` (of the empty string for an empty body).',
    schema: { type: 'string' },
  },
} as const;
const param = (name: keyof typeof PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

/** Examples of the main flows, by route key: request bodies and success answers (README walk-through). */
const EXAMPLES: Readonly<Record<string, { request?: unknown; response?: unknown }>> = {
  'POST /api/v1/secrets': {
    request: { name: 'db-password', data: { value: 's3cr3t' } },
  },
  'PUT /api/v1/secrets/{name}': { request: { data: { value: 'n3w' } } },
  'POST /api/v1/api-keys': { request: { name: 'ci', scopes: ['secrets:read', 'secrets:write'] } },
  'POST /api/v1/admin/tenants': { request: { name: 'acme', admin_email: 'alice@acme.example' } },
  'POST /api/v1/crypto/sign': {
    request: { backend: 'pkcs11', key_id: '0190f5c2-7a1e-7c3b-9d4e-2f6a8b1c3d5e', message: 'aGVsbG8=', purpose: 'release v1.2.0' },
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid',
  401: 'Not authenticated',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone',
  412: 'Precondition failed',
  428: 'Precondition required',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal error',
  501: 'Not implemented',
  502: 'A dependency failed',
  503: 'A dependency is unavailable',
};

const SUCCESS_TEXT: Readonly<Record<`${SuccessStatus}`, string>> = {
  200: 'Success',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  302: 'Found: a browser redirect (see Location)',
  304: 'Not modified: the If-None-Match ETag is current (no body)',
};

/** The success body of a status in the route's wire format, or as each of the media types the handler declares for it. */
function successContent(wire: Wire, schema: z.ZodType | null | undefined, media?: readonly string[]): Json | undefined {
  const data = schema ? jsonSchema(schema, 'output') : undefined;
  if (media && media.length > 0) {
    return Object.fromEntries(media.map((m) => [m, { schema: /^application\/([\w.+-]+\+)?json$/.test(m) && data ? data : { type: 'string' } }]));
  }
  if (wire === 'envelope') {
    return json({ type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data: data ?? {} } });
  }
  if (wire === 'text') return { 'text/plain': { schema: data ?? { type: 'string' } } };
  return json(
    data ?? {
      type: 'object',
      description: wire === 'oauth' ? 'the RFC 6749 / RFC 8628 response object, at the top level' : 'the standard document, at the top level',
    },
  );
}

/** Every response of a route: its success statuses and its error statuses with their codes. */
function responsesOf(route: Route, schemas: Schemas | undefined): Json {
  const wire = wireOf(route);
  const out: Json = {};
  const declared = schemas?.responses as HandlerDoc['responses'] | undefined;
  const successes = declared && Object.keys(declared).length > 0 ? Object.entries(declared) : [['200', undefined] as const];
  for (const [status, schema] of successes) {
    const content =
      status === '204' || status === '302' || status === '304'
        ? undefined
        : successContent(wire, schema, schemas?.media?.[Number(status) as SuccessStatus]);
    const headers = {
      ...header('X-Request-Id'),
      ...(status === '302' ? header('Location') : {}),
      ...(rateLimited(route) ? { ...header('RateLimit'), ...header('RateLimit-Policy') } : {}),
      ...(etagged(route) || status === '304' ? header('ETag') : {}),
      ...(takesIdempotencyKey(route) ? header('Idempotent-Replayed') : {}),
    };
    const example = EXAMPLES[route.key]?.response;
    if (content && example !== undefined) (Object.values(content)[0] as Json).example = example;
    out[status] = {
      description: SUCCESS_TEXT[status as `${SuccessStatus}`],
      headers,
      ...(content ? { content } : {}),
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route, schemas)) {
    const status = ERROR_CODES[code][0];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const body = wire === 'oauth' ? ref('OAuthError') : { allOf: [ref('Error')], properties: { code: { enum: codes } } };
    out[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.map((c) => `\`${c}\` (${ERROR_CODES[c][1]})`).join('; ')}`,
      'x-error-codes': codes,
      headers: {
        ...header('X-Request-Id'),
        ...(status === 429 ? { ...header('Retry-After'), ...header('RateLimit'), ...header('RateLimit-Policy') } : {}),
        ...(status === 503 ? header('Retry-After') : {}),
      },
      content: json(body),
    };
  }
  return out;
}

/** A summary from the route itself while its handler declares none (issue 23: the handlers' own are being written). */
function fallbackSummary(route: Route): string {
  const verb = { GET: 'Read', POST: 'Create or run', PUT: 'Update', PATCH: 'Change', DELETE: 'Delete' }[route.method];
  return `${verb} ${route.path.replace(/^\/api\/v1\//, '')}`;
}

const AUTH_TEXT: Record<Route['auth'], string> = {
  public: 'No authentication.',
  endpoint: 'Authenticates itself (a sign-in flow, a protocol endpoint or a provider\u2019s signed callback); rate-limited per source address.',
  'temp-token': 'Authenticated by the temporary access token in the path.',
  bearer: 'A bearer credential: an API key (`scm_…`) or a JWT access token.',
  operator: 'A platform operator\u2019s bearer credential.',
  device: 'A signed device request (RFC 9421 HTTP Message Signatures with an RFC 9530 Content-Digest).',
};

function descriptionOf(route: Route, schemas: Schemas | undefined): string {
  const parts = [
    route.handler
      ? (schemas?.description ?? schemas?.summary ?? fallbackSummary(route))
      : 'Not implemented yet: answers 501 after authentication and the scope check.',
  ];
  parts.push(`**Authentication:** ${AUTH_TEXT[route.auth]}`);
  if (route.handlerScopes) parts.push('**Scopes:** checked by the handler, for the resource it acts on.');
  else if (route.scopes.length > 0) parts.push(`**Scopes:** ${route.scopes.map((s) => `\`${s}\``).join(', ')}.`);
  return parts.join('\n\n');
}

function securityOf(route: Route): Json[] {
  if (route.auth === 'bearer' || route.auth === 'operator') return [{ bearerAuth: route.scopes }];
  if (route.auth === 'device') return [{ deviceSignature: [] }];
  return [];
}

export interface OpenApiOptions {
  /** Server URLs; default: OPENAPI_SERVER_URL, else a `{scheme}://{host}` server with variables. */
  readonly servers?: readonly string[];
}

function serversOf(opts: OpenApiOptions) {
  const urls = opts.servers ?? (process.env.OPENAPI_SERVER_URL ? process.env.OPENAPI_SERVER_URL.split(',') : []);
  if (urls.length > 0) return urls.map((url) => ({ url }));
  return [
    {
      url: '{scheme}://{host}',
      description: 'The deployment (API Gateway stage URL or custom domain); `npm start` serves http://localhost:3000',
      variables: { scheme: { enum: ['https', 'http'], default: 'https' }, host: { default: 'localhost:3000' } },
    },
  ];
}

export async function buildOpenApi(opts: OpenApiOptions = {}) {
  const handlers = await loadHandlers();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const schemas = handlers.get(route.key)!.schemas;
    const params = jsonSchema(schemas?.params) as { properties?: Record<string, unknown> } | undefined;
    const query = jsonSchema(schemas?.query) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const body = jsonSchema(schemas?.body);
    const wire = wireOf(route);
    const example = EXAMPLES[route.key]?.request;
    (paths[openApiPath(route)] ??= {})[route.method.toLowerCase()] = {
      operationId: route.key.replace(/[^A-Za-z0-9]+/g, '_'),
      summary: schemas?.summary ?? fallbackSummary(route),
      description: descriptionOf(route, schemas),
      tags: [route.family],
      'x-auth': route.auth,
      'x-scopes': route.handlerScopes ? 'checked in the handler' : route.scopes,
      security: securityOf(route),
      parameters: [
        ...pathParams(route).map((name) => ({
          name,
          in: 'path',
          required: true,
          ...(route.auth === 'temp-token' && name === 'token'
            ? { description: 'The temporary access token (the link\u2019s secret part): it authenticates the request.' }
            : {}),
          schema: params?.properties?.[name] ?? { type: 'string' },
        })),
        ...Object.entries(query?.properties ?? {}).map(([name, s]) => ({
          name,
          in: 'query',
          required: query?.required?.includes(name) ?? false,
          schema: s,
        })),
        ...(takesIfMatch(route) ? [param(schemas?.ifMatch === 'required' ? 'IfMatchRequired' : 'IfMatch')] : []),
        ...(takesIdempotencyKey(route) ? [param('IdempotencyKey')] : []),
        ...(route.auth === 'device' ? [param('Signature'), param('SignatureInput'), param('ContentDigest')] : []),
      ],
      'x-wire': wire,
      // a strict query schema refuses a parameter it does not name (400); otherwise unknown ones are ignored
      'x-unknown-query-parameters': (query as Json | undefined)?.additionalProperties === false ? 'refused' : 'ignored',
      ...(body
        ? {
            requestBody: {
              // a body the schema accepts when absent (defaults for every field) is optional
              required: schemas?.body?.safeParse(undefined).success !== true,
              content:
                wire === 'oauth'
                  ? { 'application/x-www-form-urlencoded': { schema: body }, ...json(body) }
                  : { 'application/json': { schema: body, ...(example !== undefined ? { example } : {}) } },
            },
          }
        : {}),
      responses: responsesOf(route, schemas),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'secrets-api',
      version: '0.1.0',
      description:
        'Multi-tenant secrets and credentials management. Every answer is the JSON envelope `{"success": true, "data": …}` or `{"success": false, "error", "code", "request_id"}` (the protocol endpoints speak their standard\u2019s format: `x-wire`). The error codes are listed in `x-error-codes` with their status and meaning; each operation lists the codes it can answer per status.',
      license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      contact: { name: 'secrets-api maintainers' },
    },
    servers: serversOf(opts),
    tags: Object.entries(FAMILY_TAGS).map(([name, description]) => ({ name, description })),
    security: [],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: `An API key (\`scm_…\`, created with POST /api/v1/api-keys) or a JWT access token (a session\u2019s or a workload\u2019s). An operation\u2019s security requirement lists the scopes the credential must hold (OpenAPI 3.1 roles; \`admin:*\` holds them all). Scopes: ${KNOWN_SCOPES.map((s) => `\`${s}\``).join(', ')}.`,
        },
        deviceSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'Signature',
          description:
            'A signed device request (docs/api.md "Signed device requests"): RFC 9421 `Signature` and `Signature-Input` over `@method`, `@path`, `@query` and the RFC 9530 `Content-Digest` of the body, with the enrolled device\u2019s key (`keyid` = device id), a fresh nonce and `created` time.',
        },
      },
      headers: HEADERS,
      parameters: PARAMETERS,
      schemas: {
        OAuthError: {
          type: 'object',
          description: 'RFC 6749 §5.2 (and RFC 8628 §3.5) error response',
          required: ['error'],
          properties: { error: { type: 'string' }, error_description: { type: 'string' } },
        },
        Error: {
          type: 'object',
          required: ['success', 'error', 'code', 'request_id'],
          properties: {
            success: { const: false },
            error: { type: 'string' },
            code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'lib/http/error-codes.ts: see x-error-codes' },
            request_id: { type: 'string' },
            details: {
              type: 'array',
              description: 'On `validation_failed`: one entry per field problem.',
              items: {
                type: 'object',
                required: ['path', 'message'],
                properties: {
                  path: { type: 'string', description: 'Where: `body`, `query` or `params`, then the field\u2019s path (dots between levels)' },
                  message: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
    'x-error-codes': Object.entries(ERROR_CODES).map(([code, [status, meaning]]) => ({ code, status, meaning })),
    paths,
  };
}

/** `npm run openapi [-- <out>] [--server <url>]...` */
export async function writeOpenApi(argv: readonly string[]) {
  const servers: string[] = [];
  let out = DEFAULT_OUTPUT;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--server') servers.push(argv[++i]!);
    else out = argv[i]!;
  }
  const doc = await buildOpenApi(servers.length > 0 ? { servers } : {});
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  return { out, doc };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { out, doc } = await writeOpenApi(process.argv.slice(2));
  process.stdout.write(
    `wrote ${out}: ${Object.keys(doc.paths).length} paths, ${Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0)} operations\n`,
  );
}
