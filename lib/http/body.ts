import type { APIGatewayProxyEvent } from 'aws-lambda';
import { header } from '../authn/authenticate.js';
import type { Wire } from '../routes.js';
import { badRequest, unsupportedMediaType } from '../core/errors.js';
import { parseJsonBody } from './json.js';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/**
 * The request body as a value for the handler's schema, by the route's wire format
 * (lib/routes.ts): JSON everywhere (with the depth limit); on an `oauth` route also
 * `application/x-www-form-urlencoded` (RFC 6749 §3.2, RFC 8628 §3.1), whose parameters
 * become string members and may each appear once only (RFC 6749 §3.1). Undefined when the
 * body is empty. A body without Content-Type is read as JSON.
 */
export function parseRequestBody(event: APIGatewayProxyEvent, wire: Wire, maxJsonDepth: number): unknown {
  if (event.body == null || event.body.length === 0) return undefined;
  const type = header(event.headers ?? {}, 'content-type');
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (wire === 'oauth' && type !== undefined && FORM_TYPE.test(type)) return parseForm(text);
  if (type !== undefined && !JSON_TYPE.test(type)) {
    throw wire === 'oauth'
      ? unsupportedMediaType('request body must be application/x-www-form-urlencoded (RFC 6749 §3.2) or JSON')
      : unsupportedMediaType();
  }
  return parseJsonBody(text, maxJsonDepth);
}

/** Form parameters as an object of strings; a parameter given twice is refused (RFC 6749 §3.1). */
export function parseForm(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(out, name)) throw badRequest(`parameter "${name}" is given more than once`, undefined, 'invalid_request');
    out[name] = value;
  }
  return { ...out };
}
