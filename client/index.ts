/**
 * The typed client of the API: openapi-fetch over the types generated from the OpenAPI
 * document (client/schema.d.ts, `npm run client`). It imports nothing of the server: the
 * command-line client and the API tests build on it.
 *
 *   const api = createApiClient({ baseUrl, token });
 *   const created = dataOf(await api.POST('/api/v1/secrets', { body, headers: idempotency() }));
 *   const read = await api.GET('/api/v1/secrets/{name}', { params: { path: { name } } });
 *   await api.PUT('/api/v1/secrets/{name}', { params: { path: { name }, header: ifMatch(etagOf(read)!) }, body });
 *
 * Results are openapi-fetch's `{ data, error, response }`; `unwrap` / `dataOf` turn a failure
 * into a thrown `ApiError` (the error envelope) or `OAuthError` (the OAuth routes' RFC 6749 §5.2
 * object), and `errorOf` reads either without throwing.
 */
import createClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/** The machine codes of the error envelope (the document's catalogue, lib/http/error-codes.ts on the server). */
export type ErrorCode = components['schemas'] extends { Error: { code: infer C } } ? C : string;

type LooseClient = Client<paths, 'application/json'>;
type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The second argument: optional when the operation needs no parameter and no body. */
type Operation<P extends keyof paths, M extends Method> = paths[P][M] extends Record<string | number, any> ? paths[P][M] : never;
type InitArgs<I> = undefined extends I ? [init?: I] : [init: I];
/**
 * One method of the client, with the request's options typed by the operation itself (not
 * inferred from the call, as openapi-fetch does): an object literal with a property the
 * description does not declare (a misspelled or extra body field, parameter or option) fails to
 * compile, as the server would refuse it (400 `validation_failed`).
 */
type StrictMethod<M extends Method> = <P extends ClientPathsWithMethod<LooseClient, M>>(
  url: P,
  ...init: InitArgs<MaybeOptionalInit<paths[P], M>>
) => Promise<FetchResponse<Operation<P, M>, MaybeOptionalInit<paths[P], M>, 'application/json'>>;

export type ApiClient = Omit<LooseClient, 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH'> & {
  readonly GET: StrictMethod<'get'>;
  readonly PUT: StrictMethod<'put'>;
  readonly POST: StrictMethod<'post'>;
  readonly DELETE: StrictMethod<'delete'>;
  readonly PATCH: StrictMethod<'patch'>;
};

export interface ApiClientOptions {
  /** The API's origin, e.g. `https://api.example.com` (paths start with /api/v1). */
  readonly baseUrl: string;
  /** The bearer credential (API key `scm_...` or access token), or a function giving the current one; none on public routes. */
  readonly token?: string | null | (() => string | null | Promise<string | null>);
  /** A fetch of your own (tests, proxies, retries); defaults to the global fetch. */
  readonly fetch?: (input: Request) => Promise<Response>;
  /** Headers sent with every request (e.g. a User-Agent). */
  readonly headers?: Record<string, string>;
}

/** A client whose requests carry `Authorization: Bearer <token>` (when a token is given). */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  if (options.token) client.use(bearer(options.token));
  // the same functions; only their parameter types are stricter (StrictMethod)
  return client as unknown as ApiClient;
}

/** The bearer authentication middleware (createApiClient installs it; exported for clients built otherwise). */
export function bearer(token: NonNullable<ApiClientOptions['token']>): Middleware {
  return {
    async onRequest({ request }) {
      const value = typeof token === 'function' ? await token() : token;
      if (value && !request.headers.has('authorization')) request.headers.set('Authorization', `Bearer ${value}`);
      return request;
    },
  };
}

interface Result {
  readonly response: Response;
  readonly data?: unknown;
  readonly error?: unknown;
}

/** The ETag of a response (or of an openapi-fetch result): the version to send back in If-Match; null when none. */
export function etagOf(response: Response | Result): string | null {
  return ('response' in response ? response.response : response).headers.get('etag');
}

/** The If-Match header of a conditional write or delete (an update requires it: 428 without): it fails with 409 `stale_etag` when the resource moved on. */
export function ifMatch(etag: string): { 'If-Match': string } {
  return { 'If-Match': etag };
}

/** A fresh Idempotency-Key: one per logical operation. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * The Idempotency-Key header of one logical operation: keep the object and send it with
 * every retry of that operation (the server answers the first outcome again); a new
 * operation takes a new one.
 */
export function idempotency(key: string = newIdempotencyKey()): { 'Idempotency-Key': string } {
  return { 'Idempotency-Key': key };
}

/** An error envelope (`{ success: false, error, code, request_id, details? }`) as an exception. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    /** What went wrong and what to do, for people. */
    readonly error: string,
    readonly request_id: string,
    /** Per-field problems of a `validation_failed` (and other codes that carry some). */
    readonly details: readonly unknown[] | undefined,
  ) {
    super(`${status} ${String(code)}: ${error} (request ${request_id})`);
  }
}

/** An OAuth route's RFC 6749 §5.2 / RFC 8628 §3.5 error object as an exception. */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly status: number,
    readonly error: string,
    readonly error_description: string | undefined,
  ) {
    super(`${status} ${error}${error_description ? `: ${error_description}` : ''}`);
  }
}

/** A failure whose body is neither an error envelope nor an OAuth error (a proxy's page, an empty body). */
export class UnexpectedResponseError extends Error {
  override readonly name = 'UnexpectedResponseError';
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${status}: unexpected response ${typeof body === 'string' ? body.slice(0, 200) : JSON.stringify(body)?.slice(0, 200)}`);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The error of a failed result (null when it succeeded), typed by the body's wire. */
export function errorOf(result: Result): ApiError | OAuthError | UnexpectedResponseError | null {
  const { response, error: body } = result;
  if (response.ok) return null;
  if (isRecord(body) && body.success === false && typeof body.code === 'string' && typeof body.error === 'string') {
    return new ApiError(
      response.status,
      body.code as ErrorCode,
      body.error,
      typeof body.request_id === 'string' ? body.request_id : (response.headers.get('x-request-id') ?? ''),
      Array.isArray(body.details) ? body.details : undefined,
    );
  }
  if (isRecord(body) && typeof body.error === 'string' && !('success' in body)) {
    return new OAuthError(response.status, body.error, typeof body.error_description === 'string' ? body.error_description : undefined);
  }
  return new UnexpectedResponseError(response.status, body);
}

/** The body of a successful result; throws the typed error of a failed one. */
export function unwrap<R extends Result>(result: R): NonNullable<R['data']> {
  const error = errorOf(result);
  if (error) throw error;
  return result.data as NonNullable<R['data']>;
}

/** The `data` of a successful envelope result; throws the typed error of a failed one. */
export function dataOf<R extends Result>(result: R): NonNullable<R['data']> extends { data: infer D } ? D : never {
  const body = unwrap(result) as { data?: unknown } | undefined;
  if (!isRecord(body) || !('data' in body)) throw new UnexpectedResponseError(result.response.status, body);
  return body.data as never;
}
