import type { APIGatewayProxyResult } from 'aws-lambda';
import type { HttpError } from './errors.js';

/** What a handler returns: status, the `data` payload and extra headers. */
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

export function successResult(reply: Reply, requestId: string): APIGatewayProxyResult {
  return {
    statusCode: reply.status,
    headers: { ...SECURITY_HEADERS, ...reply.headers, 'X-Request-Id': requestId },
    body: reply.raw ?? JSON.stringify({ success: true, data: reply.data }),
  };
}

/** The error envelope (docs/api.md, "Conventions"). A 5xx message is replaced unless the error allows it. */
export function errorResult(error: HttpError, requestId: string): APIGatewayProxyResult {
  const body: Record<string, unknown> = {
    success: false,
    error: error.expose ? error.message : 'internal error',
    code: error.code,
    request_id: requestId,
  };
  if (error.options.details && error.options.details.length > 0) body.details = error.options.details;
  return {
    statusCode: error.status,
    headers: { ...SECURITY_HEADERS, ...error.options.headers, 'X-Request-Id': requestId },
    body: JSON.stringify(body),
  };
}
