/**
 * Writes the OpenAPI 3.1 document of all 322 routes, derived from the route table and the
 * handlers' zod schemas: `npm run openapi` -> openapi.json (or the path given).
 */
import { writeFileSync } from 'node:fs';
import * as z from 'zod/v4';
import { ERROR_CODES } from '../lib/http/error-codes.js';
import { ROUTES, wireOf, type Wire } from '../lib/routes.js';
import { loadHandlers } from './local/gateway.js';

const schema = (s: z.ZodType | undefined) =>
  s ? (z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>) : undefined;
const ERROR = { $ref: '#/components/schemas/Error' };

/** Request and response media of a route by its wire kind (lib/routes.ts, docs/api.md "Protocol endpoints"). */
function media(wire: Wire, body: Record<string, unknown> | undefined) {
  const json = (schema: unknown) => ({ 'application/json': { schema } });
  const request = body
    ? {
        requestBody: {
          required: true,
          content: wire === 'oauth' ? { 'application/x-www-form-urlencoded': { schema: body }, ...json(body) } : json(body),
        },
      }
    : {};
  const success =
    wire === 'envelope'
      ? json({ $ref: '#/components/schemas/Success' })
      : wire === 'text'
        ? { 'text/plain': { schema: { type: 'string' } } }
        : json({
            type: 'object',
            description: wire === 'oauth' ? 'the RFC 6749 / RFC 8628 response object, at the top level' : 'the standard document, at the top level',
          });
  const error = wire === 'oauth' ? json({ $ref: '#/components/schemas/OAuthError' }) : json(ERROR);
  return { ...request, responses: { '200': { description: 'success', content: success }, default: { description: 'error', content: error } } };
}

export async function buildOpenApi() {
  const handlers = await loadHandlers();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const schemas = handlers.get(route.key)!.schemas ?? {};
    const params = schema(schemas.params) as { properties?: Record<string, unknown> } | undefined;
    const query = schema(schemas.query) as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const bearer = route.auth === 'bearer' || route.auth === 'operator';
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.key.replace(/[^A-Za-z0-9]+/g, '_'),
      tags: [route.family],
      ...(route.handler ? {} : { description: 'Not implemented yet: answers 501 after authentication and the scope check.' }),
      'x-auth': route.auth,
      'x-scopes': route.handlerScopes ? 'checked in the handler' : route.scopes,
      security: bearer ? [{ bearer: route.scopes }] : [],
      parameters: [
        ...names.map((name) => ({ name, in: 'path', required: true, schema: params?.properties?.[name] ?? { type: 'string' } })),
        ...Object.entries(query?.properties ?? {}).map(([name, s]) => ({
          name,
          in: 'query',
          required: query?.required?.includes(name) ?? false,
          schema: s,
        })),
      ],
      'x-wire': wireOf(route),
      ...media(wireOf(route), schema(schemas.body)),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'secrets-api', version: '0.1.0' },
    servers: [{ url: 'http://127.0.0.1:3000' }],
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
            details: { type: 'array' },
          },
        },
      },
    },
    'x-error-codes': Object.entries(ERROR_CODES).map(([code, [status, meaning]]) => ({ code, status, meaning })),
    paths,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = await buildOpenApi();
  const out = process.argv[2] ?? 'openapi.json';
  writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(
    `wrote ${out}: ${Object.keys(doc.paths).length} paths, ${Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0)} operations\n`,
  );
}
