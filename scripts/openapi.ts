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
import type { HandlerDoc, LambdaHandler } from '../lib/http/define-handler.js';
import { ERROR_CODES, type ErrorCode } from '../lib/http/error-codes.js';
import { KNOWN_SCOPES, ROUTES, type Route, wireOf, type Wire } from '../lib/routes.js';
import { loadHandlers } from './local/gateway.js';

type Json = Record<string, unknown>;
type Schemas = NonNullable<LambdaHandler['schemas']>;

export const DEFAULT_OUTPUT = 'build/openapi.json';

/** A zod schema as JSON Schema 2020-12, without the per-schema `$schema` (the document's dialect applies). */
export function jsonSchema(s: z.ZodType | undefined, io: 'input' | 'output' = 'input'): Json | undefined {
  if (!s) return undefined;
  const { $schema: _, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

/** The route's path parameters, in order. */
export const pathParams = (route: Pick<Route, 'path'>) => [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Writes to one resource (its id or name last in the path) honour If-Match (lib/store/resources.ts checkIfMatch). */
export const takesIfMatch = (route: Route) =>
  route.auth === 'bearer' && (route.method === 'PUT' || route.method === 'PATCH' || route.method === 'DELETE') && /\{\w+\}$/.test(route.path);
/** Mutations of an authenticated caller honour Idempotency-Key (lib/http/idempotency.ts). */
export const takesIdempotencyKey = (route: Route) => MUTATIONS.has(route.method) && ['bearer', 'operator', 'device'].includes(route.auth);
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
  if (schemas?.query || schemas?.params) codes.add('validation_failed');
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

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid',
  401: 'Not authenticated',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone',
  412: 'Precondition failed',
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal error',
  501: 'Not implemented',
  502: 'A dependency failed',
  503: 'A dependency is unavailable',
};

/** The success body of a status in the route's wire format. */
function successContent(wire: Wire, schema: z.ZodType | null | undefined, untyped: boolean): Json | undefined {
  const data = schema ? jsonSchema(schema, 'output') : undefined;
  if (wire === 'envelope') {
    if (!data && !untyped) return json(ref('Success'));
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
    const content = status === '204' ? undefined : successContent(wire, schema, schema === null);
    out[status] = {
      description: status === '201' ? 'Created' : status === '202' ? 'Accepted' : status === '204' ? 'No content' : 'Success',
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
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`,
      'x-error-codes': codes,
      content: json(body),
    };
  }
  return out;
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
      description: 'The deployment (API Gateway stage URL or custom domain); `npm start` serves http://127.0.0.1:3000',
      variables: { scheme: { enum: ['https', 'http'], default: 'https' }, host: { default: '127.0.0.1:3000' } },
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
    const bearer = route.auth === 'bearer' || route.auth === 'operator';
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.key.replace(/[^A-Za-z0-9]+/g, '_'),
      tags: [route.family],
      ...(schemas?.summary ? { summary: schemas.summary } : {}),
      ...(route.handler
        ? schemas?.description
          ? { description: schemas.description }
          : {}
        : { description: 'Not implemented yet: answers 501 after authentication and the scope check.' }),
      'x-auth': route.auth,
      'x-scopes': route.handlerScopes ? 'checked in the handler' : route.scopes,
      security: bearer ? [{ bearer: route.scopes }] : [],
      parameters: [
        ...pathParams(route).map((name) => ({ name, in: 'path', required: true, schema: params?.properties?.[name] ?? { type: 'string' } })),
        ...Object.entries(query?.properties ?? {}).map(([name, s]) => ({
          name,
          in: 'query',
          required: query?.required?.includes(name) ?? false,
          schema: s,
        })),
      ],
      'x-wire': wire,
      ...(body
        ? {
            requestBody: {
              required: true,
              content: wire === 'oauth' ? { 'application/x-www-form-urlencoded': { schema: body }, ...json(body) } : json(body),
            },
          }
        : {}),
      responses: responsesOf(route, schemas),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'secrets-api', version: '0.1.0' },
    servers: serversOf(opts),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'API key (scm_...) or JWT access token' } },
      schemas: {
        Success: { type: 'object', required: ['success', 'data'], properties: { success: { const: true }, data: {} } },
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
            details: { type: 'array', items: { type: 'object' } },
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
