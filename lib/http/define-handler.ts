import middy, { type MiddlewareObj, type Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/v4';
import { config } from '../config.js';
import { routeByKey, tenancyOf, wireOf, type Route } from '../routes.js';
import { tenantScope } from '../tenancy/scope.js';
import { auditRouteScope } from '../audit/audit.js';
import { authenticate, type CredentialFacts, type Headers } from '../authn/authenticate.js';
import { ADMIN_SCOPE, missingScopes } from '../auth/scopes.js';
import type { Tenant } from '../store/tenants.js';
import { speculate } from '../core/admission.js';
import { speculativePrincipal } from './speculative-principal.js';
import type { CallContext, Principal } from '../auth/principal.js';
import { gate, withHeaders, type Gate } from '../ratelimit/gate.js';
import { parseRequestBody } from './body.js';
import { withCors } from './cors.js';
import type { ErrorCode } from './error-codes.js';
import {
  fieldIssues,
  forbidden,
  internalError,
  payloadTooLarge,
  preconditionRequired,
  toHttpError,
  validationFailed,
  type FieldIssue,
} from '../core/errors.js';
import { idempotency } from './idempotency.js';
import { logger } from '../core/logger.js';
import { metricFields, recordRequest, tracer } from '../core/metrics.js';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { errorResult, successResult, type Reply } from '../core/responses.js';

type Schema<T> = z.ZodType<T>;

export interface HandlerInput<P, Q, B> {
  readonly route: Route;
  readonly requestId: string;
  /** The verified caller; null only on routes that authenticate themselves (public, endpoint, temp-token). */
  readonly principal: Principal | null;
  /** Principal + request facts for domain calls and audit entries; throws on unauthenticated routes. */
  readonly ctx: CallContext;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** Request headers with lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The client's address (for audit entries of routes without a principal, e.g. temp-token). */
  readonly sourceIp: string | null;
  /** The body exactly as received (UTF-8), for signatures over the raw bytes (inbound payment webhooks); null when empty. */
  readonly rawBody: string | null;
}

/** The success statuses a handler can answer with. */
export type SuccessStatus = 200 | 201 | 202 | 204 | 302 | 304;

/**
 * What the API description (scripts/openapi.ts) says of a handler, declared beside it:
 * - `summary`: one line, imperative ("Read a secret"), for the operation's summary;
 * - `description`: what a user needs beyond the summary (behaviour, limits, idempotency);
 * - `responses`: every success status the handler answers with and the schema of what it
 *   sends: on the `envelope` wire the schema of `data`, on the other wires (lib/routes.ts
 *   `wireOf`) the whole body; `null` for a 204, a 302 (a browser redirect), a 304 (If-None-Match
 *   matched) or a body the document cannot type;
 * - `errors`: error codes (lib/http/error-codes.ts) the handler itself raises, beyond those
 *   every route of its kind can give (authentication, scopes, validation, limits).
 * The API tests hold every response they receive to the document built from these.
 */
export interface HandlerDoc {
  readonly summary?: string;
  readonly description?: string;
  readonly responses?: Readonly<Partial<Record<SuccessStatus, z.ZodType | null>>>;
  readonly errors?: readonly ErrorCode[];
  /**
   * `'required'`: the route changes a versioned resource and refuses a request without
   * `If-Match` (428 `precondition_required`, RFC 6585 §3) so no update is ever blind; the
   * description then marks the header required.
   */
  readonly ifMatch?: 'required';
  /**
   * The media types a success status is served as when not the wire's own (JSON; `text/plain`
   * on the `text` wire): a download, a page (`text/html`), a protocol's own JSON type
   * (`application/jwk-set+json`). The description declares exactly these for that status.
   */
  readonly media?: Readonly<Partial<Record<SuccessStatus, readonly string[]>>>;
}

interface HandlerSpec<P, Q, B> extends HandlerDoc {
  /**
   * On a route whose scopes its handler checks ("handler" in lib/routes.ts): the scopes every
   * variant of the route needs, checked right after authentication, before the request is
   * validated. The order is authentication, then authorization, then validation: a caller
   * without the scopes gets 403, never a 400 that tells it the params', query's or body's
   * shape. The handler checks what a variant needs beyond them (a private export's
   * export:read, which only the validated query or body names).
   */
  readonly scopes?: readonly string[];
  /**
   * A decision on the credential alone that the route table cannot express (a session-only
   * route: not an API key), taken with `scopes`, before validation; it throws the refusal.
   */
  readonly authorize?: (principal: Principal) => void;
  readonly params?: Schema<P>;
  readonly query?: Schema<Q>;
  readonly body?: Schema<B>;
  handler(input: HandlerInput<P, Q, B>): Promise<Reply>;
}

export type LambdaHandler = ((event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>) & {
  /** The handler's schemas and description, for the OpenAPI document. */
  readonly schemas?: HandlerDoc & { readonly params?: z.ZodType; readonly query?: z.ZodType; readonly body?: z.ZodType };
};

interface State {
  route?: Route;
  requestId: string;
  started: number;
  principal: Principal | null;
  meter?: Promise<void>;
  /** Rate limits, the usage meter and the API-key IP allow-list (lib/ratelimit/gate.ts). */
  gate?: Gate;
  /** Set when the handler runs speculatively (lib/core/admission.ts): authentication's remaining checks and the gate. */
  admission?: Promise<void>;
  body?: unknown;
  params?: unknown;
  query?: unknown;
}

type Req = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
type Mw = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/** Powertools' numeric INFO level: the request line is printed at this level or below. */
const INFO_LEVEL = 12;

const states = new WeakMap<APIGatewayProxyEvent, State>();
const state = (request: Req): State => states.get(request.event)!;

/** Request id, route lookup, and one structured log line per request (metadata only). */
const requestLog = (): Mw => {
  const finish = async (request: Req) => {
    const s = state(request);
    if (s.meter) await s.meter;
    const status = request.response?.statusCode ?? 500;
    const latency = Date.now() - s.started;
    // metrics by route family only (never per account: lib/core/metrics.ts)
    recordRequest(s.route?.family ?? 'unrouted', status, latency);
    // the metrics ride on the request line (EMF): one log line a request (docs/cost.md)
    const emf = metricFields(logger.level <= INFO_LEVEL);
    // What an operator traces a request by, and no more (CloudWatch Logs prices every byte,
    // docs/cost.md): the caller's address and user agent are in the stage's access log under
    // the same request id (infra/api-stack.ts), and in the audit entry of an audited action.
    logger.info('request', {
      request_id: s.requestId,
      route: s.route?.key ?? `${request.event.httpMethod} ${request.event.resource}`,
      status,
      // milliseconds; the same key as the EMF metric (METRIC.latency), so a line with metrics carries it once
      latency,
      tenant_id: s.principal?.tenantId,
      // `<kind>:<id>` (ids are UUIDs of every kind: the kind says where to look the credential up)
      principal: s.principal ? `${s.principal.kind}:${s.principal.id}` : undefined,
      ...emf,
    });
  };
  return {
    before: (request) => {
      const requestId = request.event.requestContext?.requestId ?? request.context.awsRequestId;
      states.set(request.event, { requestId, started: Date.now(), principal: null });
      const route = routeByKey(request.event.httpMethod, request.event.resource);
      if (!route) throw internalError(new Error(`no route for ${request.event.httpMethod} ${request.event.resource}`));
      state(request).route = route;
      tracer.putAnnotation('family', route.family);
      tracer.putAnnotation('route', route.key);
    },
    after: finish,
    onError: finish,
  };
};

/** The one error handler: typed errors to envelopes; anything else an opaque 500. */
const errorHandler = (): Mw => ({
  onError: (request) => {
    const error = toHttpError(request.error);
    const s = states.get(request.event);
    const requestId = s?.requestId ?? request.context.awsRequestId;
    if (error.status === 500) {
      logger.error('request failed', { request_id: requestId, code: error.code, error: (error.options.cause ?? error) as Error });
    } else if (error.status > 500 && error.options.cause) {
      logger.warn('dependency failed', { request_id: requestId, code: error.code, error: error.options.cause as Error });
    }
    request.response = errorResult(error, requestId, wireOf(s?.route));
  },
});

const bodyBytes = (event: APIGatewayProxyEvent): number =>
  event.body == null ? 0 : event.isBase64Encoded ? Math.floor((event.body.length * 3) / 4) : Buffer.byteLength(event.body, 'utf8');

/** The route's body size limit, before any other work. */
const bodyLimit = (): Mw => ({
  before: (request) => {
    const route = state(request).route!;
    if (bodyBytes(request.event) > route.maxBodyBytes) throw payloadTooLarge(route.maxBodyBytes, route.bodyLimitNote);
  },
});

/**
 * Mutations whose handlers were checked to issue no write outside the table's client before
 * their first table write (which waits for admission), or to wait for `admitted()` before
 * one (the lease issue opens its session on the customer's database only then): they run
 * speculatively too. Every other mutation waits for admission first; reads (GET) always
 * speculate.
 */
const SPECULATIVE_MUTATIONS: ReadonlySet<string> = new Set([
  'PUT /api/v1/secrets/{name}',
  'POST /api/v1/crypto/sign',
  'POST /api/v1/database/roles/{id}/credentials',
]);
const speculative = (route: Route) => route.auth === 'bearer' && (route.method === 'GET' || SPECULATIVE_MUTATIONS.has(route.key));

/**
 * Authentication for the route's auth kind, then the route table's scopes, then admission
 * (rate limits). On a speculative route (above) whose credential grants the route's scopes,
 * the rest of the stack goes on as soon as the credential is found: the account check, the
 * scopes and the gate finish as `admission`, which the handler's writes and its answer wait
 * for (lib/core/admission.ts), and whose failure is the answer.
 */
const authentication = (): Mw => ({
  before: async (request) => {
    const s = state(request);
    const route = s.route!;
    s.gate = gate(route, request.event);
    let early: ((p: Principal) => void) | undefined;
    const identified = new Promise<Principal>((ok) => {
      early = ok;
    });
    const onIdentified = (tenantId: string, credentialId: string, tenant: Promise<Tenant | undefined>, facts?: CredentialFacts) => {
      s.gate!.identify(tenantId, credentialId, tenant);
      if (facts && speculative(route) && missingScopes(facts.scopes, route.scopes).length === 0) {
        early!(speculativePrincipal(facts, tenant, ADMIN_SCOPE));
      }
    };
    const admission = (async () => {
      const principal = await authenticate(route, request.event.headers ?? {}, request.event, onIdentified);
      s.principal = principal;
      s.meter = s.gate!.start(principal);
      if (principal) {
        const missing = missingScopes(principal.scopes, route.scopes);
        if (missing.length > 0) throw forbidden(`missing scope: ${missing.join(', ')}`, 'insufficient_scope');
      }
      await s.gate!.enforce();
    })();
    const first = await Promise.race([admission.then(() => undefined), identified]);
    if (!first) return; // admitted (or failed) before a speculative start
    s.principal ??= first; // the verified principal, when admission has already set it
    s.admission = admission;
  },
  after: (request) => {
    const h = state(request).gate?.headers();
    if (request.response && h) request.response.headers = { ...request.response.headers, ...h };
  },
  onError: async (request) => {
    const s = states.get(request.event);
    if (!s?.gate) return;
    // a speculative run's error counts only once admission passed; a failed admission is the answer
    if (s.admission) request.error = ((await s.admission.then(() => undefined, (e: unknown) => e)) as Error | undefined) ?? request.error;
    await s.gate.auditDenied(request.error, s.requestId);
    request.error = withHeaders(request.error, s.gate.headers()) as Error;
  },
});

/** The handler's own route-wide scopes (`scopes`) and credential decision (`authorize`), then JSON body (content type, depth) and zod validation of params, query and body. */
const validation = <P, Q, B>(spec: HandlerSpec<P, Q, B>): Mw => ({
  before: (request) => {
    const s = state(request);
    const { event } = request;
    if (spec.scopes && s.principal) {
      // on a speculative start this is the credential's own scope list; a failed admission still answers first (onError above)
      const missing = missingScopes(s.principal.scopes, spec.scopes);
      if (missing.length > 0) throw forbidden(`missing scope: ${missing.join(', ')}`, 'insufficient_scope');
    }
    if (spec.authorize && s.principal) spec.authorize(s.principal);
    const details: FieldIssue[] = [];
    const check = <T>(where: string, schema: Schema<T> | undefined, value: unknown): T | undefined => {
      if (!schema) return undefined;
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      details.push(...fieldIssues(where, parsed.error.issues));
      return undefined;
    };
    s.params = check('params', spec.params, event.pathParameters ?? {});
    s.query = check('query', spec.query, event.queryStringParameters ?? {});
    if (spec.body) {
      s.body = check('body', spec.body, parseRequestBody(event, wireOf(s.route), config().MAX_JSON_DEPTH));
    }
    if (details.length > 0) throw validationFailed(details);
    if (spec.ifMatch === 'required' && !Object.keys(event.headers ?? {}).some((h) => h.toLowerCase() === 'if-match'))
      throw preconditionRequired(
        'this update must be conditional: send If-Match with the ETag header of a GET of the resource (or * to overwrite any version)',
      );
  },
});

function lowerCaseHeaders(headers: Headers | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) out[k.toLowerCase()] = v;
  return out;
}

/**
 * The only place the middy stack is composed (docs/architecture.md, "The request path"): CORS
 * headers for allowed origins (outermost, lib/http/cors.ts), request id and structured
 * logging, security headers, body size limit, authentication and the route's scopes,
 * JSON parsing with a depth limit, zod validation, Idempotency-Key on mutations, and one
 * error handler.
 */
export function defineHandler<P = unknown, Q = unknown, B = unknown>(spec: HandlerSpec<P, Q, B>): LambdaHandler {
  const core = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const s = states.get(event)!;
    const run = (principal: Principal | null) => {
      const ctx = (): CallContext => {
        if (!principal) throw internalError(new Error('route has no authenticated principal'));
        return {
          principal,
          requestId: s.requestId,
          sourceIp: event.requestContext?.identity?.sourceIp ?? null,
          userAgent: event.requestContext?.identity?.userAgent ?? null,
        };
      };
      return spec.handler({
        route: s.route!,
        requestId: s.requestId,
        principal,
        get ctx() {
          return ctx();
        },
        params: s.params as P,
        query: s.query as Q,
        body: s.body as B,
        headers: lowerCaseHeaders(event.headers),
        sourceIp: event.requestContext?.identity?.sourceIp ?? null,
        rawBody: event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : null,
      });
    };
    if (!s.admission) return successResult(await run(s.principal), s.requestId, wireOf(s.route));
    // speculative: the run's writes wait for admission; nothing answers before it passed
    const { outcome, missed } = await speculate(s.admission, () => run(s.principal));
    await s.admission;
    const final = missed ? await run(s.principal).then((value) => ({ value }), (error: unknown) => ({ error })) : outcome;
    if ('error' in final) throw final.error;
    return successResult(final.value, s.requestId, wireOf(s.route));
  };
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    // a subsegment around the request; never the response (it may hold a secret)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(requestLog())
    .use(errorHandler())
    .use(bodyLimit())
    .use(authentication())
    .use(validation(spec))
    .use(
      idempotency(
        (request) => states.get(request.event)?.principal ?? null,
        async (request) => states.get(request.event)?.admission,
      ),
    )
    .handler(core);
  // CORS outermost, around the whole stack: errors and early answers (idempotent replays,
  // for which middy runs no `after`) carry the headers too.
  const cors = withCors(handler, () => config().CORS_ALLOWED_ORIGINS);
  // a tenant route's whole request runs in a tenant scope (lib/tenancy/scope.ts): authentication
  // names the account, and from then on its table and KMS calls use that account's credentials
  const outer = (event: APIGatewayProxyEvent, context: Context) => {
    const route = routeByKey(event.httpMethod, event.resource);
    if (!route) return cors(event, context);
    // recordAudit takes the route's audit path (written, or sent to the audit queue) from it
    return auditRouteScope(route, () => (tenancyOf(route) === 'tenant' ? tenantScope(() => cors(event, context)) : cors(event, context)));
  };
  const { summary, description, responses, errors, ifMatch, media, params, query, body } = spec;
  return Object.assign(outer, { schemas: { summary, description, responses, errors, ifMatch, media, params, query, body } }) as LambdaHandler;
}
