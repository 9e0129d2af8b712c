/**
 * Typed errors and the one place that maps them to statuses (the spec's Errors table plus
 * the gateway's 404/405/501); every code is one of lib/http/error-codes.ts
 * (test/unit/error-codes.test.ts checks each throw site). An error carries its status, a machine code, a sentence for
 * the client and whether that sentence may be shown: a 5xx never exposes its message.
 */
export interface FieldIssue {
  readonly path: string;
  readonly message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: {
      readonly expose?: boolean;
      readonly details?: readonly FieldIssue[];
      readonly headers?: Readonly<Record<string, string>>;
      readonly cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'HttpError';
  }

  /** Whether the message may be sent to the client (never for 5xx). */
  get expose(): boolean {
    return this.options.expose ?? this.status < 500;
  }
}

export const badRequest = (message: string, details?: readonly FieldIssue[], code = 'bad_request') =>
  new HttpError(400, code, message, details ? { details } : {});
export const validationFailed = (details: readonly FieldIssue[]) => new HttpError(400, 'validation_failed', 'request validation failed', { details });
export const unauthorized = (message = 'missing, invalid or expired credentials', code = 'unauthorized') =>
  new HttpError(401, code, message, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (message = 'access denied', code = 'forbidden') => new HttpError(403, code, message);
export const notFound = (what = 'resource') => new HttpError(404, 'not_found', `${what} not found`);
export const conflict = (message: string, code = 'conflict') => new HttpError(409, code, message);
export const preconditionFailed = (message: string) => new HttpError(412, 'precondition_failed', message);
export const preconditionRequired = (message: string) => new HttpError(428, 'precondition_required', message);
export const payloadTooLarge = (limit: number, note?: string) =>
  new HttpError(413, 'payload_too_large', `request body exceeds the ${limit} byte limit of this route${note ? `; ${note}` : ''}`);
export const unsupportedMediaType = (message = 'request body must be JSON (Content-Type: application/json)') =>
  new HttpError(415, 'unsupported_media_type', message);
export const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', 'too many requests; retry later', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
export const notImplemented = () => new HttpError(501, 'not_implemented', 'not implemented', { expose: true });
export const serviceUnavailable = (message: string, cause?: unknown) => new HttpError(503, 'service_unavailable', message, { expose: true, cause });
export const badGateway = (message: string, cause?: unknown) => new HttpError(502, 'device_error', message, { expose: true, cause });
export const routeNotFound = (suggestion?: string) =>
  new HttpError(
    404,
    'route_not_found',
    suggestion ? `no route matches this path; paths are case-sensitive: did you mean ${suggestion}?` : 'no route matches this path',
  );
export const methodNotAllowed = (allow: readonly string[]) =>
  new HttpError(405, 'method_not_allowed', 'method not allowed on this path', { headers: { Allow: allow.join(', ') } });
export const internalError = (cause?: unknown) => new HttpError(500, 'internal_error', 'internal error', { cause });

/** Any thrown value as an HttpError: unknown errors become an opaque 500. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  return internalError(error);
}

/** Zod issues as `details` (the one mapper): `where` is params, query, body, or a field path. */
export const fieldIssues = (where: string, issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[]): FieldIssue[] =>
  issues.map((i) => ({ path: [where, ...i.path.map(String)].join('.'), message: i.message }));
