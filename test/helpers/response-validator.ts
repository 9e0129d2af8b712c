import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { buildRouter } from '../../scripts/local/router.js';
import { openApiPath } from '../../lib/routes.js';

/**
 * Holds one HTTP response to the OpenAPI document (scripts/openapi.ts): the route is found
 * as the gateway finds it (path template + method), the status must be one the operation
 * declares, the media type of a body one that status declares, and a JSON body must validate (JSON Schema 2020-12) against the schema of that
 * status. Problems name the route, the status and ajv's errors (instance paths and keywords,
 * never the body's values: a body may carry secrets).
 */
export interface ResponseCheck {
  readonly method: string;
  /** The path and query as requested (the base URL stripped). */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly body: string;
}

type Doc = { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };

const DOC_ID = 'openapi.json';
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** ajv's errors without values: where, which keyword, and the keyword's own parameters. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => `${e.instancePath || '/'} ${e.keyword} ${e.message ?? ''} ${JSON.stringify(e.params)} (schema ${e.schemaPath})`)
    .join('; ');
}

export function responseValidator(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // ajv-formats is CommonJS: its function is the module's `default` export
  (formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
  ajv.addSchema(doc as object, DOC_ID);
  const route = buildRouter();
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (path: string, method: string, status: string, media: string) => {
    const ptr = `#/${pointer('paths', path, method, 'responses', status, 'content', media, 'schema')}`;
    let v = compiled.get(ptr);
    if (!v) {
      v = ajv.getSchema(`${DOC_ID}${ptr}`);
      if (!v) throw new Error(`no schema at ${ptr}`);
      compiled.set(ptr, v);
    }
    return v;
  };

  /** The problem with this response, or null when it matches the document (or is no route's: the gateway's own 404/405, preflights). */
  return (r: ResponseCheck): string | null => {
    const url = new URL(r.path, 'http://x');
    const match = route(r.method, url.pathname);
    if (match.kind !== 'route') return null;
    const { route: rt } = match;
    const op = doc.paths[openApiPath(rt)]?.[rt.method.toLowerCase()];
    const where = `${rt.key} -> ${r.status}`;
    if (!op) return `${where}: the document has no operation ${rt.key}`;
    const responses = op.responses ?? {};
    const status = String(r.status);
    const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : null;
    if (!key) return `${where}: status ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`;
    const content = responses[key]!.content;
    if (!content || r.body.length === 0) return null;
    const media = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    // the media type served must be one the status declares, exactly
    const declared = Object.keys(content).find((m) => m.toLowerCase() === media);
    if (!declared) return `${where}: a body of ${media || 'no Content-Type'} where the document declares ${Object.keys(content).join(', ')}`;
    if (!/^application\/([\w.+-]+\+)?json$/.test(media)) return null; // downloads, pages and text: the document types them as strings
    let value: unknown;
    try {
      value = JSON.parse(r.body);
    } catch {
      return `${where}: the body is not JSON although its Content-Type is ${media}`;
    }
    const validate = validatorAt(openApiPath(rt), rt.method.toLowerCase(), key, declared);
    return validate(value) ? null : `${where}: the body does not match the document: ${describeErrors(validate.errors)}`;
  };
}
