import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Wire } from '../routes.js';
import type { HttpError } from './errors.js';

/** What a handler returns: status, the `data` payload (on a protocol route: the whole document) and extra headers. */
export interface Reply {
  readonly status: number;
  readonly data: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** A body sent as is instead of the JSON envelope (downloads: CSV, JSON Lines); set Content-Type in headers. */
  readonly raw?: string;
}

export const ok = (data: unknown, headers?: Record<string, string>): Reply => ({ status: 200, data, headers });
export const created = (data: unknown, headers?: Record<string, string>): Reply => ({ status: 201, data, headers });
/** A 200 download: the body as is, with its content type (e.g. `text/csv; charset=utf-8`). */
export const download = (body: string, contentType: string, headers?: Record<string, string>): Reply => ({
  status: 200,
  data: null,
  raw: body,
  headers: { ...headers, 'Content-Type': contentType },
});

/** Headers on every response, success or error. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
};

/** The security headers with the reply's own; a reply that sets Cache-Control drops the `Pragma: no-cache` fallback. */
function headersOf(extra: Readonly<Record<string, string>> | undefined, requestId: string): Record<string, string> {
  const headers: Record<string, string> = { ...SECURITY_HEADERS, ...extra, 'X-Request-Id': requestId };
  if (extra && Object.keys(extra).some((k) => k.toLowerCase() === 'cache-control')) delete headers.Pragma;
  return headers;
}

/**
 * A success in the route's wire format (lib/routes.ts, `Wire`): the envelope, or for a
 * protocol route the payload itself at the top level (`document`, `oauth`), or the raw body
 * (`text`, and any `download`).
 */
export function successResult(reply: Reply, requestId: string, wire: Wire = 'envelope'): APIGatewayProxyResult {
  let body: string;
  if (reply.raw !== undefined) body = reply.raw;
  else if (wire === 'envelope') body = JSON.stringify({ success: true, data: reply.data });
  else if (wire === 'text') body = typeof reply.data === 'string' ? reply.data : JSON.stringify(reply.data);
  else body = reply.data === undefined || reply.data === null ? '' : JSON.stringify(reply.data);
  return { statusCode: reply.status, headers: headersOf(reply.headers, requestId), body };
}

/**
 * A protocol answer (a route whose wire is not `envelope`): the payload as the top-level
 * JSON document, with the given headers (e.g. its Cache-Control and content type).
 */
export const protocol = (data: unknown, headers?: Record<string, string>, status = 200): Reply => ({ status, data, headers });

/** RFC 6749 §5.2, RFC 6750 §3.1 and RFC 8628 §3.5 error codes: an HttpError whose code is one of these keeps it. */
export const OAUTH_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  // RFC 6750 §3.1: the authorization server's own protected resource (userinfo)
  'invalid_token',
  'insufficient_scope',
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
  'server_error',
  'temporarily_unavailable',
] as const;
type OAuthErrorCode = (typeof OAUTH_ERRORS)[number];

/** The OAuth error code for any other error of an `oauth` route, by status. */
function oauthCode(error: HttpError): OAuthErrorCode {
  if ((OAUTH_ERRORS as readonly string[]).includes(error.code)) return error.code as OAuthErrorCode;
  if (error.status === 401) return 'invalid_client';
  if (error.status === 403) return 'access_denied';
  if (error.status === 429) return 'slow_down';
  if (error.status === 503) return 'temporarily_unavailable';
  if (error.status >= 500) return 'server_error';
  return 'invalid_request';
}

/** The error envelope (docs/api.md, "Conventions"), or on an `oauth` route the RFC 6749 §5.2 error object. A 5xx message is replaced unless the error allows it. */
export function errorResult(error: HttpError, requestId: string, wire: Wire = 'envelope'): APIGatewayProxyResult {
  const message = error.expose ? error.message : 'internal error';
  const details = error.options.details && error.options.details.length > 0 ? error.options.details : undefined;
  let body: Record<string, unknown>;
  if (wire === 'oauth') {
    // error_description: RFC 6749 allows %x20-21 / %x23-5B / %x5D-7E only (no '"', no '\\')
    const description = [message, ...(details ?? []).map((d) => `${d.path}: ${d.message}`)]
      .join('; ')
      .replace(/"/g, "'")
      .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, ' ');
    body = { error: oauthCode(error), error_description: description };
  } else {
    body = { success: false, error: message, code: error.code, request_id: requestId };
    if (details) body.details = details;
  }
  return { statusCode: error.status, headers: headersOf(error.options.headers, requestId), body: JSON.stringify(body) };
}
