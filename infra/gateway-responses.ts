import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { EXPOSE_HEADERS } from '../lib/http/cors.js';

/**
 * Responses API Gateway produces itself (before any function runs), rewritten into the
 * service's error envelope (lib/core/responses.ts): `{"success":false,"error":...,"code":...,
 * "request_id":...}`. Gateway-response templates substitute $context variables but run no
 * VTL, so each type has a fixed code.
 *
 * An unknown path answers 404 route_not_found. API Gateway reports a known path with an
 * undefined method the same way (MISSING_AUTHENTICATION_TOKEN), so in AWS that case is also
 * 404 route_not_found, where the local gateway answers 405 method_not_allowed: telling them
 * apart would take an extra method on every resource.
 */
export interface GatewayErrorResponse {
  readonly type: string;
  /** Omitted: keep API Gateway's status for the type. */
  readonly status?: string;
  readonly code: string;
  /** A fixed sentence, or null to use API Gateway's message for the type. */
  readonly message: string | null;
  readonly headers?: Readonly<Record<string, string>>;
}

export const GATEWAY_RESPONSES: readonly GatewayErrorResponse[] = [
  { type: 'MISSING_AUTHENTICATION_TOKEN', status: '404', code: 'route_not_found', message: 'no route matches this path' },
  { type: 'RESOURCE_NOT_FOUND', status: '404', code: 'route_not_found', message: 'no route matches this path' },
  { type: 'THROTTLED', status: '429', code: 'rate_limited', message: 'too many requests; retry later', headers: { 'Retry-After': "'1'" } },
  { type: 'QUOTA_EXCEEDED', status: '429', code: 'rate_limited', message: 'too many requests; retry later', headers: { 'Retry-After': "'60'" } },
  { type: 'REQUEST_TOO_LARGE', status: '413', code: 'payload_too_large', message: 'request body exceeds the gateway limit' },
  { type: 'UNSUPPORTED_MEDIA_TYPE', status: '415', code: 'unsupported_media_type', message: 'request body must be JSON (Content-Type: application/json)' },
  { type: 'WAF_FILTERED', status: '403', code: 'forbidden', message: 'request blocked' },
  { type: 'ACCESS_DENIED', status: '403', code: 'forbidden', message: 'access denied' },
  { type: 'INTEGRATION_TIMEOUT', status: '503', code: 'service_unavailable', message: 'the service did not answer in time; retry reads with backoff' },
  { type: 'DEFAULT_4XX', code: 'bad_request', message: null },
  // 500 never carries internals: a fixed sentence, whatever API Gateway's message was.
  { type: 'DEFAULT_5XX', status: '500', code: 'internal_error', message: 'internal error' },
];

/** The headers of every function response (lib/core/responses.ts SECURITY_HEADERS) that a static gateway value can carry. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': "'application/json; charset=utf-8'",
  'Cache-Control': "'no-store'",
  'X-Content-Type-Options': "'nosniff'",
  'X-Frame-Options': "'DENY'",
  'Referrer-Policy': "'no-referrer'",
  'Strict-Transport-Security': "'max-age=63072000; includeSubDomains'",
};

/**
 * `corsOrigin`: the one configured CORS origin, whose header every gateway response then
 * carries (static values only: with several origins there is none, see infra/api-stack.ts).
 */
export function gatewayResponseOptions(response: GatewayErrorResponse, corsOrigin?: string): apigw.GatewayResponseOptions {
  const error = response.message === null ? '$context.error.messageString' : JSON.stringify(response.message);
  return {
    type: apigw.ResponseType.of(response.type),
    ...(response.status ? { statusCode: response.status } : {}),
    responseHeaders: {
      ...SECURITY_HEADERS,
      ...response.headers,
      ...(corsOrigin ? { 'Access-Control-Allow-Origin': `'${corsOrigin}'`, 'Access-Control-Expose-Headers': `'${EXPOSE_HEADERS.join(', ')}'` } : {}),
    },
    templates: {
      'application/json': `{"success":false,"error":${error},"code":"${response.code}","request_id":"$context.requestId"}`,
    },
  };
}
