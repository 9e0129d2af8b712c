import { existsSync, readFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContractCounts } from '../setup/contract.js';
import { type RequestCheck, type RequestProblem, requestValidator } from './request-validator.js';
import { type ResponseCheck, responseValidator } from './response-validator.js';

/**
 * The check of every request and response an HTTP test exchanges with the runtime against the
 * run's OpenAPI document (test/setup/responses.ts), hosted once per runtime project in the
 * vitest main process (test/setup/contract.ts): one ajv instance and its compiled validators
 * serve every test file, where each isolated file used to parse the 3 MB document, build the
 * validators (~300 ms CPU) and compile each schema it met (~2.5 ms each) itself. The checks are
 * test/helpers/response-validator.ts and request-validator.ts, unchanged; a file sends each
 * exchange (one POST) and counts and fails on the answer as it did on the local checkers'.
 */
export interface Exchange {
  /** Absent for a streamed response (text/event-stream): only its request is checked. */
  readonly response?: ResponseCheck;
  readonly request: RequestCheck;
}
export interface ExchangeResult {
  /** The response's problem (response-validator.ts), null when it matches or was not checked. */
  readonly response: string | null;
  readonly request: RequestProblem | null;
}

/** Both checks over one document. */
export function exchangeChecker(doc: unknown): (x: Exchange) => ExchangeResult {
  const checkResponse = responseValidator(doc as never);
  const checkRequest = requestValidator(doc as never);
  return (x) => ({ response: x.response ? checkResponse(x.response) : null, request: checkRequest(x.request) });
}

/** Where the service says what it is, in every message about it. */
const SERVICE = 'the OpenAPI contract service (test/setup/contract.ts)';

/**
 * Starts the service on 127.0.0.1, a free port. The document is read on the first exchange,
 * waiting for test/setup/openapi.ts to write it (or its `.error`); the server never keeps the
 * process alive, and `close` ends it and its connections.
 */
export async function startContractService(openapiFile: string): Promise<{ url: string; close: () => Promise<void> }> {
  let checker: Promise<(x: Exchange) => ExchangeResult> | undefined;
  const load = async () => {
    while (!existsSync(openapiFile) && !existsSync(`${openapiFile}.error`)) await new Promise((r) => setTimeout(r, 100).unref());
    if (!existsSync(openapiFile)) throw new Error(`the OpenAPI document did not build: ${readFileSync(`${openapiFile}.error`, 'utf8')}`);
    return exchangeChecker(JSON.parse(readFileSync(openapiFile, 'utf8')));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/check') return answer(404, { error: `${SERVICE} answers POST /check only` });
      checker ??= load();
      checker.then(
        (check) => {
          try {
            answer(200, check(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Exchange));
          } catch (error) {
            answer(500, { error: (error as Error).message });
          }
        },
        (error: Error) => answer(500, { error: error.message }),
      );
    });
  });
  // idle connections stay open (the workers' kept-alive sockets; a worker's end and `close` end
  // them): a server closing one as a worker reuses it fails that check ("socket hang up")
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One exchange sent to the service at `url`; throws, naming the service, when it does not answer or answers an error. */
export function contractClient(url: string): (x: Exchange) => Promise<ExchangeResult> {
  // idle sockets of a keep-alive agent are unref'd: they never keep a worker alive
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const send = (x: Exchange, body: string, retried: boolean) =>
    new Promise<ExchangeResult>((resolve, reject) => {
      const fail = (why: string) =>
        reject(new Error(`${SERVICE} at ${url} did not check an exchange (${x.request.method} ${pathShape(x.request.path)}): ${why}`));
      const req = httpRequest(
        `${url}/check`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => fail(e.message));
          res.on('end', () => {
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              return fail(`status ${res.statusCode}, not JSON`);
            }
            if (res.statusCode !== 200) return fail((parsed as { error?: string }).error ?? `status ${res.statusCode}`);
            resolve(parsed as ExchangeResult);
          });
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        // a kept-alive socket closed as it was reused: once more, on a new one (a check has no effect)
        if (req.reusedSocket && e.code === 'ECONNRESET' && !retried) send(x, body, true).then(resolve, reject);
        else fail(e.message);
      });
      req.end(body);
    });
  return (x) => send(x, JSON.stringify(x), false);
}

/**
 * A path as a message may show it: its query dropped and every segment that is not a plain
 * word as `{}` (a temporary-access token travels in the path, /api/v1/t/{token}), as the
 * validators' own messages name the route's template.
 */
export const pathShape = (path: string): string =>
  (path.split('?')[0] ?? '')
    .split('/')
    .map((segment) => (segment === '' || /^[a-z][a-z0-9-]*$/.test(segment) ? segment : '{}'))
    .join('/');

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

/**
 * A fetch that holds every exchange with `baseUrl` to the document through `check` (and passes
 * any other URL to `original` untouched), the counts of what it checked, and `flush`, which
 * throws the problems found since its last call (test/setup/responses.ts calls it after each
 * test). `settle` waits for the checks in flight.
 */
export function contractInterceptor(options: {
  baseUrl: string;
  original: typeof fetch;
  check: (x: Exchange) => Promise<ExchangeResult>;
  counts: ContractCounts;
}) {
  const { baseUrl, original, check, counts } = options;
  const pending: Promise<void>[] = [];
  const problems: string[] = [];

  const intercepted = async (input: string | URL | Request, init?: RequestInit) => {
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
      received
        .then(async (body) => {
          const error = res.status >= 400 ? errorOf(body) : {};
          const result = await check({
            response: streamed ? undefined : { method: request.method, path, status: res.status, contentType, body },
            request: {
              method: request.method,
              path,
              headers,
              body: sentBody,
              status: res.status,
              errorCode: error.code,
              errorDetails: error.details,
            },
          });
          if (!streamed) {
            counts.responses++;
            if (result.response) {
              counts.responseMismatches++;
              problems.push(result.response);
            }
          }
          counts.requests++;
          const found = result.request;
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
        })
        // an exchange left unchecked (the service unreachable, an error in the check) fails the test too
        .catch((error: Error) => {
          problems.push(error.message);
        }),
    );
    return res;
  };

  const settle = async () => {
    await Promise.all(pending.splice(0));
  };
  const flush = async () => {
    await settle();
    const found = problems.splice(0);
    if (found.length === 0) return;
    throw new Error(`requests or responses that do not match the OpenAPI document (scripts/openapi.ts):\n${[...new Set(found)].join('\n')}`);
  };
  return { fetch: intercepted as typeof fetch, flush, settle };
}
