import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { buildRouter } from '../../scripts/local/router.js';
import { openApiPath } from '../../lib/routes.js';
import { describeErrors } from './response-validator.js';

/**
 * Holds one HTTP request, with the status the server answered it, to the OpenAPI document
 * (scripts/openapi.ts), the other direction of test/helpers/response-validator.ts. The route is
 * found as the gateway finds it; then its path parameters, query parameters and header
 * parameters (each declared one, `required` honoured, values coerced from strings as OpenAPI's
 * `form`/`simple` styles do), the media type of the body and the body itself (JSON Schema
 * 2020-12) are checked. A request the document calls invalid is a mismatch only when the server
 * accepted it (a 2xx or 3xx): a test sending bad input on purpose gets its 4xx. The other way
 * round, a request the document calls valid that the server refuses as invalid (400
 * `validation_failed`, 415 `unsupported_media_type`) is a mismatch too: the server enforces a
 * rule the document does not carry. Problems name the route, the status and ajv's errors
 * (instance paths and keywords, never values: a request may carry secrets).
 */
export interface RequestCheck {
  readonly method: string;
  /** The path and query as requested (the base URL stripped). */
  readonly path: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as sent (UTF-8), empty when none. */
  readonly body: string;
  /** The status the server answered. */
  readonly status: number;
  /** The `code` of the server's error body, if any. */
  readonly errorCode?: string;
  /** The fields the server's error names (`details`: path and problem, never a value). */
  readonly errorDetails?: string;
}

type Parameter = { $ref?: string; name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: unknown };
type Operation = {
  'x-unknown-query-parameters'?: 'refused' | 'ignored';
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
};
type Doc = { paths: Record<string, Record<string, Operation>>; components?: { parameters?: Record<string, Parameter> } };

const DOC_ID = 'openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
/** What the document's media type keys match: `application/json` serves any JSON (`+json`) type as the server reads them (lib/http/body.ts). */
const JSON_MEDIA = /^application\/([\w.+-]+\+)?json$/;

/**
 * The outcome of one request check, with why: `invalid`, the server accepted what the document
 * refuses; `refused`, the server refused what the document accepts; `expected`, both refuse it
 * (no mismatch: a test's deliberate bad input).
 */
export type RequestProblem = { readonly kind: 'invalid' | 'refused' | 'expected'; readonly message: string };

export function requestValidator(doc: Doc) {
  const options = { strict: false, allErrors: true, validateFormats: true } as const;
  const bodies = new Ajv2020(options);
  // parameters and form fields arrive as strings: coerced to the declared type, as OpenAPI's styles do
  const strings = new Ajv2020({ ...options, coerceTypes: true });
  for (const ajv of [bodies, strings]) {
    // ajv-formats is CommonJS: its function is the module's `default` export
    (formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
    ajv.addSchema(doc as object, DOC_ID);
  }
  const route = buildRouter();
  const compiled = new Map<string, ValidateFunction>();
  const once = (key: string, make: () => ValidateFunction) => {
    let v = compiled.get(key);
    if (!v) compiled.set(key, (v = make()));
    return v;
  };

  /** The operation's parameters of one location as one object schema (names of headers in lower case), refs to the document's own. */
  const parametersOf = (path: string, method: string, op: Operation, where: 'path' | 'query' | 'header') =>
    once(`${path} ${method} ${where}`, () => {
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      (op.parameters ?? []).forEach((p, i) => {
        const ptr = p.$ref ? `${p.$ref}/schema` : `#/${pointer('paths', path, method, 'parameters', String(i), 'schema')}`;
        const param = p.$ref ? doc.components?.parameters?.[p.$ref.split('/').pop()!] : p;
        if (!param || param.in !== where) return;
        const name = where === 'header' ? param.name.toLowerCase() : param.name;
        properties[name] = param.schema === undefined ? {} : { $ref: `${DOC_ID}${ptr}` };
        if (param.required) required.push(name);
      });
      // a query parameter the operation does not declare: invalid where the document says the server refuses it
      const closed = where === 'query' && op['x-unknown-query-parameters'] === 'refused';
      return strings.compile({ type: 'object', properties, required, ...(closed ? { additionalProperties: false } : {}) });
    });

  const bodyOf = (path: string, method: string, media: string, form: boolean) => {
    const ptr = `${DOC_ID}#/${pointer('paths', path, method, 'requestBody', 'content', media, 'schema')}`;
    return once(`${ptr} ${form}`, () => (form ? strings : bodies).compile({ $ref: ptr }));
  };

  /** The request's problem (null when the document accepts it and the server did not refuse it as invalid, or it is no route's: the gateway's own 404/405, preflights). */
  return (r: RequestCheck): RequestProblem | null => {
    if (r.method === 'OPTIONS') return null;
    const url = new URL(r.path, 'http://x');
    const match = route(r.method, url.pathname);
    if (match.kind !== 'route') return null;
    const { route: rt, params } = match;
    const path = openApiPath(rt);
    const method = rt.method.toLowerCase();
    const op = doc.paths[path]?.[method];
    const where = `${rt.key} -> ${r.status}`;
    if (!op) return { kind: 'invalid', message: `${where}: the document has no operation ${rt.key}` };

    const problems: string[] = [];
    const check = (what: string, v: ValidateFunction, value: unknown) => {
      if (!v(value)) problems.push(`${what}: ${describeErrors(v.errors)}`);
    };
    check('path parameters', parametersOf(path, method, op, 'path'), { ...params });
    // API Gateway passes the last value of a repeated query parameter (queryStringParameters)
    check('query parameters', parametersOf(path, method, op, 'query'), Object.fromEntries(url.searchParams));
    check('headers', parametersOf(path, method, op, 'header'), { ...r.headers });

    const content = op.requestBody?.content;
    const media = (r.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (r.body.length === 0) {
      if (op.requestBody?.required) problems.push('the body is required and none was sent');
    } else if (!content) {
      problems.push(`a body (${media || 'without Content-Type'}) where the document declares none`);
    } else {
      const declared = Object.keys(content).find((m) => m === media) ?? (JSON_MEDIA.test(media) ? Object.keys(content).find((m) => JSON_MEDIA.test(m)) : undefined);
      if (!declared) problems.push(`a body of ${media || 'no Content-Type'} where the document declares ${Object.keys(content).join(', ')}`);
      else if (declared === 'application/x-www-form-urlencoded') check('body', bodyOf(path, method, declared, true), Object.fromEntries(new URLSearchParams(r.body)));
      else {
        let value: unknown;
        try {
          value = JSON.parse(r.body);
        } catch {
          problems.push(`the body is not JSON although its Content-Type is ${media}`);
        }
        if (value !== undefined) check('body', bodyOf(path, method, declared, false), value);
      }
    }

    const accepted = r.status >= 200 && r.status < 400;
    if (problems.length > 0) {
      return { kind: accepted ? 'invalid' : 'expected', message: `${where}: the server ${accepted ? 'accepted' : 'refused'} a request the document calls invalid: ${problems.join('; ')}` };
    }
    if ((r.status === 400 && r.errorCode === 'validation_failed') || r.status === 415) {
      return { kind: 'refused', message: `${where} (${r.errorCode}): the server refused a request the document calls valid (a rule the document does not carry)${r.errorDetails ? `: ${r.errorDetails}` : ''}` };
    }
    return null;
  };
}
