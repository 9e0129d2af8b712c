import { readFileSync } from 'node:fs';
import { afterAll, afterEach, inject } from 'vitest';
import { responseValidator } from '../helpers/response-validator.js';

/**
 * Every response a test receives from the runtime (test/helpers/api.ts `api()` and any raw
 * `fetch` to its base URL) is held to the OpenAPI document built for the run
 * (test/setup/openapi.ts): a status the route does not declare, or a body that does not
 * match the schema of its status, fails the test that received it (or, outside a test, the
 * file). So the description cannot drift from the code.
 */
const baseUrl = inject('baseUrl');
const check = responseValidator(JSON.parse(readFileSync(inject('openapiFile'), 'utf8')));
const pending: Promise<void>[] = [];
const problems: string[] = [];

const original = globalThis.fetch;
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
  const res = await original(input, init);
  const url = input instanceof Request ? input.url : String(input);
  if (url.startsWith(`${baseUrl}/`) && !res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    pending.push(
      res
        .clone()
        .text()
        .then((body) => {
          const problem = check({ method, path: url.slice(baseUrl.length), status: res.status, contentType: res.headers.get('content-type'), body });
          if (problem) problems.push(problem);
        }),
    );
  }
  return res;
};

const flush = async () => {
  await Promise.all(pending.splice(0));
  const found = problems.splice(0);
  if (found.length === 0) return;
  const message = `responses that do not match the OpenAPI document (scripts/openapi.ts):\n${[...new Set(found)].join('\n')}`;
  throw new Error(message);
};

afterEach(flush);
afterAll(flush);
