import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, inject } from 'vitest';
import { requestValidator } from '../helpers/request-validator.js';
import { responseValidator } from '../helpers/response-validator.js';
import { type ContractCounts, noCounts } from './contract.js';

/**
 * Every request a test sends to the runtime (test/helpers/api.ts `api()`, the typed client and
 * any raw `fetch` to its base URL), and every response it receives, is held to the OpenAPI
 * document built for the run (test/setup/openapi.ts), in both directions:
 * - the response: a status the route does not declare, a media type its status does not
 *   declare, or a body that does not match the schema of its status
 *   (test/helpers/response-validator.ts);
 * - the request: path, query and header parameters, media type and body the document calls
 *   invalid but the server accepted (2xx/3xx) (test/helpers/request-validator.ts).
 * A mismatch fails the test that met it (or, outside a test, the file); the counts go to the
 * run's total (test/setup/contract.ts). So the description cannot drift from the code.
 * A request the document calls valid that the server refused as invalid (400
 * `validation_failed`) is counted and listed in the total, not failed: most such rules are ones
 * JSON Schema cannot state (a date in the future, a checksum, an address that parses), which the
 * description gives in words.
 */
const baseUrl = inject('baseUrl');
const contractDir = inject('contractDir') as string | undefined;
const doc = JSON.parse(readFileSync(inject('openapiFile'), 'utf8'));
const checkResponse = responseValidator(doc);
const checkRequest = requestValidator(doc);
const pending: Promise<void>[] = [];
const problems: string[] = [];
const counts: ContractCounts = noCounts();

/** The error envelope's `code` and the fields its `details` name (never values). */
function errorOf(body: string): { code?: string; details?: string } {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; details?: { path?: unknown; message?: unknown }[] };
    const details = Array.isArray(parsed.details) ? parsed.details.map((d) => `${String(d.path)} ${String(d.message)}`).join('; ') : undefined;
    return { code: typeof parsed.code === 'string' ? parsed.code : undefined, details };
  } catch {
    return {};
  }
}

const original = globalThis.fetch;
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
  const url = input instanceof Request ? input.url : String(input);
  if (!url.startsWith(`${baseUrl}/`)) return original(input, init);
  // one Request of what is sent, so the check reads the same method, headers and body the server gets
  const request = new Request(input, init);
  const sentBody = request.body ? await request.clone().text() : '';
  const res = await original(request);
  const path = url.slice(baseUrl.length);
  const headers = Object.fromEntries(request.headers);
  const contentType = res.headers.get('content-type');
  const streamed = contentType?.startsWith('text/event-stream') ?? false;
  const received = streamed ? Promise.resolve('') : res.clone().text();
  pending.push(
    received.then((body) => {
      if (!streamed) {
        counts.responses++;
        const problem = checkResponse({ method: request.method, path, status: res.status, contentType, body });
        if (problem) {
          counts.responseMismatches++;
          problems.push(problem);
        }
      }
      const error = res.status >= 400 ? errorOf(body) : {};
      counts.requests++;
      const found = checkRequest({
        method: request.method,
        path,
        headers,
        body: sentBody,
        status: res.status,
        errorCode: error.code,
        errorDetails: error.details,
      });
      if (found === null) return;
      if (found.kind === 'expected') counts.refusedInvalid++;
      else if (found.kind === 'refused') counts.uncarried.push(found.message);
      else {
        // a request the server took that the description refuses: it fails its test, and the
        // run's total lists each (test/setup/contract.ts)
        counts.requestMismatches++;
        counts.requestMismatchList.push(found.message);
        problems.push(found.message);
      }
    }),
  );
  return res;
};

const flush = async () => {
  await Promise.all(pending.splice(0));
  const found = problems.splice(0);
  if (found.length === 0) return;
  const message = `requests or responses that do not match the OpenAPI document (scripts/openapi.ts):\n${[...new Set(found)].join('\n')}`;
  throw new Error(message);
};

afterEach(flush);
afterAll(async () => {
  await Promise.all(pending.splice(0));
  if (contractDir && counts.requests + counts.responses > 0) {
    writeFileSync(join(contractDir, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`), JSON.stringify(counts));
  }
  await flush();
});
