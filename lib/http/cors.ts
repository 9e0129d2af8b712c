import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { ROUTES, type Route } from '../routes.js';
import { forbidden, routeNotFound } from '../core/errors.js';
import { errorResult } from '../core/responses.js';

/**
 * CORS for browser clients (docs/operations.md, "CORS"), configured by CORS_ALLOWED_ORIGINS
 * (lib/config.ts; context `corsOrigins` in infra). Origins are compared exactly, as the
 * browser sends them (`https://app.example.com`, `http://localhost:5173`): no wildcards, no
 * suffix matching. A request from an origin not on the list gets no CORS header at all, so
 * the browser withholds the response from that page; nothing else about it changes.
 *
 * Two places answer:
 * - every function response, success or error (`withCors` around the middy stack in
 *   lib/http/define-handler.ts): Access-Control-Allow-Origin (the request's origin),
 *   Vary: Origin, and the response headers a page may read;
 * - the preflight function (functions/public/cors.ts), integrated as the OPTIONS method of
 *   every path in AWS and used by the local gateway: 204 with the path's methods and the
 *   request headers a page may send, for an allowed origin asking for a method the path has.
 *
 * No Access-Control-Allow-Credentials: the API authenticates with the Authorization header,
 * which a page sets itself; it uses no cookies.
 */

/** Request headers a page may send (besides the CORS-safelisted ones). */
export const ALLOW_HEADERS: readonly string[] = ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key'];
/** Response headers a page may read (besides the CORS-safelisted ones). */
export const EXPOSE_HEADERS: readonly string[] = ['ETag', 'X-Request-Id', 'Retry-After', 'Idempotent-Replayed'];
/** How long a browser may cache a preflight answer (seconds). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

type Headers = Readonly<Record<string, string | undefined>> | null | undefined;

function headerValue(headers: Headers, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() === name && v !== undefined) return v;
  return undefined;
}

/** The request's Origin when it is one of `origins`, else undefined. */
function allowedOrigin(origins: readonly string[], headers: Headers): string | undefined {
  const origin = headerValue(headers, 'origin');
  return origin !== undefined && origins.includes(origin) ? origin : undefined;
}

/** The CORS headers of an actual (non-preflight) response; empty for an origin not allowed. */
function responseCorsHeaders(origins: readonly string[], headers: Headers): Record<string, string> {
  const origin = allowedOrigin(origins, headers);
  if (!origin) return {};
  return { 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSE_HEADERS.join(', '), Vary: 'Origin' };
}

/** Adds the CORS headers to a response (merging Vary); unchanged for an origin not allowed. */
export function addCorsHeaders(result: APIGatewayProxyResult, origins: readonly string[], headers: Headers): APIGatewayProxyResult {
  const cors = responseCorsHeaders(origins, headers);
  if (!cors.Vary) return result;
  const existing = Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === 'vary');
  const vary = existing ? [...new Set([...String(existing[1]).split(',').map((s) => s.trim()).filter(Boolean), 'Origin'])].join(', ') : 'Origin';
  const rest = Object.fromEntries(Object.entries(result.headers ?? {}).filter(([k]) => k.toLowerCase() !== 'vary'));
  return { ...result, headers: { ...rest, ...cors, Vary: vary } };
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The outermost layer of every function (lib/http/define-handler.ts): whatever the middy
 * stack answers, a response, an error envelope, or an early answer such as an idempotent
 * replay (for which middy runs no `after` middleware), leaves with the CORS headers of an
 * allowed origin. `origins` is read per request from the parsed configuration; when the
 * configuration itself is invalid the stack has already answered 500, without CORS headers.
 */
export function withCors(handler: Handler, origins: () => readonly string[]): Handler {
  return async (event, context) => {
    const result = await handler(event, context);
    let list: readonly string[];
    try {
      list = origins();
    } catch {
      return result;
    }
    return list.length > 0 ? addCorsHeaders(result, list, event.headers) : result;
  };
}

/** The methods of each path template of the route table (sorted). */
export function methodsByPath(routes: readonly Route[] = ROUTES): ReadonlyMap<string, readonly string[]> {
  const map = new Map<string, string[]>();
  for (const r of routes) map.set(r.path, [...(map.get(r.path) ?? []), r.method]);
  for (const methods of map.values()) methods.sort();
  return map;
}

interface PreflightAnswer {
  readonly status: 204 | 403 | 404;
  /** CORS headers; empty unless the preflight is allowed. */
  readonly headers: Readonly<Record<string, string>>;
  /** Why it was refused (for the error body; never sent as a CORS header). */
  readonly refusal?: string;
}

/**
 * The answer to a preflight (OPTIONS) on `path` (a route-table path template): 204 with
 * the CORS headers when the origin is allowed and the requested method
 * (Access-Control-Request-Method) is one the path has; 404 for a path that is not in the
 * route table; 403 otherwise. Refusals carry no CORS header.
 */
export function answerPreflight(origins: readonly string[], path: string, headers: Headers, paths = methodsByPath()): PreflightAnswer {
  const methods = paths.get(path);
  if (!methods) return { status: 404, headers: {}, refusal: 'no route matches this path' };
  const origin = allowedOrigin(origins, headers);
  if (!origin) return { status: 403, headers: {}, refusal: 'CORS preflight refused: origin not allowed' };
  const requested = headerValue(headers, 'access-control-request-method');
  if (!requested || !methods.includes(requested.toUpperCase())) {
    return { status: 403, headers: {}, refusal: 'CORS preflight refused: the path has no such method' };
  }
  return {
    status: 204,
    headers: {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
      'Access-Control-Allow-Headers': ALLOW_HEADERS.join(', '),
      'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_SECONDS),
      Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    },
  };
}

/**
 * The preflight function's handler: the OPTIONS method of every path integrates it (Lambda
 * proxy), so `event.resource` is the path template. Refusals answer in the error envelope
 * (lib/core/responses.ts) without any CORS header.
 */
export function preflightHandler(origins: () => readonly string[]): Handler {
  const paths = methodsByPath();
  return async (event, context) => {
    const requestId = event.requestContext?.requestId ?? context.awsRequestId;
    const answer = answerPreflight(origins(), event.resource, event.headers, paths);
    if (answer.status === 204) return { statusCode: 204, headers: { ...answer.headers, 'X-Request-Id': requestId }, body: '' };
    const error = answer.status === 404 ? routeNotFound() : forbidden(answer.refusal);
    return errorResult(error, requestId);
  };
}
