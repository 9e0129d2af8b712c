import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mkdtemp, readFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { ROUTES, type Route } from '../../lib/routes.js';
import { badRequest, HttpError, methodNotAllowed, routeNotFound, payloadTooLarge } from '../../lib/core/errors.js';
import { errorResult } from '../../lib/core/responses.js';
import type { LambdaHandler } from '../../lib/http/define-handler.js';
import { buildRouter } from './router.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** API Gateway's own payload limit; routes enforce their smaller limits themselves. */
export const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

/** Loads every route's handler export once, failing fast on a missing module or export. */
export async function loadHandlers(routes: readonly Route[] = ROUTES): Promise<Map<string, LambdaHandler>> {
  const modules = new Map<string, Record<string, unknown>>();
  const load = async (module: string) => {
    if (!modules.has(module)) modules.set(module, (await import(pathToFileURL(resolve(ROOT, 'functions', `${module}.ts`)).href)) as Record<string, unknown>);
    return modules.get(module)!;
  };
  const handlers = new Map<string, LambdaHandler>();
  for (const route of routes) {
    const [module, exportName] = route.handler ? splitHandler(route.handler) : ['not-implemented', 'handler'];
    const fn = (await load(module))[exportName];
    if (typeof fn !== 'function') throw new Error(`${route.key}: functions/${module}.ts has no export "${exportName}"`);
    handlers.set(route.key, fn as LambdaHandler);
  }
  return handlers;
}

export function splitHandler(handler: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  return [handler.slice(0, dot), handler.slice(dot + 1)];
}

/** The request body, or 'too_large' past API Gateway's payload limit (read to the end either way). */
export function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > GATEWAY_MAX_BODY) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => resolveBody(tooLarge ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const isText = (type: string | undefined) => !type || /^(application\/([\w.+-]+\+)?json|text\/|application\/x-www-form-urlencoded)/i.test(type);

/** The API Gateway REST proxy event (payload v1) that Lambda would receive. */
export function buildEvent(
  req: IncomingMessage,
  url: URL,
  route: Pick<Route, 'key' | 'path' | 'method'>,
  params: Record<string, string>,
  body: Buffer,
  requestId: string,
  /** Whether API Gateway passes this body base64-encoded (its binary media types); default: anything not textual. */
  isBinary: (contentType: string | undefined) => boolean = (type) => !isText(type),
): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const value = req.rawHeaders[i + 1]!;
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const text = !isBinary(req.headers['content-type']);
  const hasQuery = Object.keys(query).length > 0;
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(params).length > 0 ? params : null,
    stageVariables: null,
    body: body.length === 0 ? null : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${req.httpVersion}`,
      httpMethod: route.method,
      path: url.pathname,
      stage: 'local',
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.key,
      resourcePath: route.path,
      identity: {
        sourceIp,
        userAgent: req.headers['user-agent'] ?? null,
        accessKey: null, accountId: null, apiKey: null, apiKeyId: null, caller: null, clientCert: null,
        cognitoAuthenticationProvider: null, cognitoAuthenticationType: null, cognitoIdentityId: null,
        cognitoIdentityPoolId: null, principalOrgId: null, user: null, userArn: null,
      },
    },
  };
}

function lambdaContext(route: Route, requestId: string): Context {
  const deadline = Date.now() + 29_000;
  const name = route.key.replace(/[^A-Za-z0-9]+/g, '-');
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/** Node's HTTP parser refusals as the errors a client of API Gateway would get: 431 for oversized headers, else 400. */
function parserError(error: NodeJS.ErrnoException): HttpError {
  if (error.code === 'HPE_HEADER_OVERFLOW') return new HttpError(431, 'headers_too_large', 'request header fields too large: send smaller headers');
  if (error.code === 'HPE_INVALID_METHOD') return badRequest('malformed request: unknown HTTP method');
  return badRequest('malformed HTTP request');
}

/**
 * Answers a request Node's parser refused (it never reaches the handler) with the same
 * envelope and X-Request-Id as every other error, then closes the connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const result = errorResult(parserError(error), randomUUID());
  const body = Buffer.from(result.body, 'utf8');
  const headers = { ...result.headers, 'Content-Length': String(body.length), Connection: 'close' };
  const head = [`HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ''}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${String(v)}`)];
  socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), body]));
}

/**
 * The local gateway: matches the route table, builds the REST proxy event, invokes the
 * route's handler export, and answers unknown paths 404 and wrong methods 405 itself.
 */
/** A published PKI file (lib/certificates/publish.ts), served without credentials as the S3 object is in AWS; undefined when none. */
async function pkiFile(dir: string | undefined, pathname: string): Promise<APIGatewayProxyResult | undefined> {
  const name = /^\/pki\/([0-9a-f-]{36}\.(crl|crt))$/.exec(pathname);
  if (!dir || !name) return undefined;
  try {
    const body = await readFile(join(dir, name[1]!));
    const type = name[2] === 'crl' ? 'application/pkix-crl' : 'application/pkix-cert';
    return { statusCode: 200, headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=3600' }, body: body.toString('base64'), isBase64Encoded: true };
  } catch {
    return undefined;
  }
}

const DOCS_TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'guide.html': 'text/html; charset=utf-8',
  'openapi.json': 'application/json',
};
let docsBuilt: Promise<string> | undefined;
/**
 * The docs page (`npm run docs`: the reference, the walk-through, the document) at /docs/,
 * built on the first request of the process (it imports every handler for the document):
 * what a person opens on the local runtime. test/docs/docs-served.test.ts opens it with every
 * request to another host blocked.
 */
async function docsFile(pathname: string): Promise<APIGatewayProxyResult | undefined> {
  if (pathname === '/docs') return { statusCode: 301, headers: { Location: '/docs/' }, body: '' };
  const name = /^\/docs\/([\w.-]*)$/.exec(pathname)?.[1];
  if (name === undefined) return undefined;
  const file = name === '' ? 'index.html' : name;
  if (!DOCS_TYPES[file]) return undefined;
  docsBuilt ??= import('../docs.js').then(async (m) => {
    const dir = await mkdtemp(join(tmpdir(), 'secrets-api-docs-'));
    // built for this process only: gone with it
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return m.buildDocs(dir);
  });
  const dir = await docsBuilt;
  return { statusCode: 200, headers: { 'Content-Type': DOCS_TYPES[file]!, 'Cache-Control': 'no-cache' }, body: await readFile(join(dir, file), 'utf8') };
}

export async function startGateway(opts: { port: number; host?: string; pkiDir?: string | undefined }): Promise<Server> {
  const handlers = await loadHandlers();
  const match = buildRouter();
  // CORS preflights, as in AWS: the one preflight function answers OPTIONS on every path.
  const preflight = process.env.CORS_ALLOWED_ORIGINS?.trim()
    ? ((await import(pathToFileURL(resolve(ROOT, 'functions', 'public', 'cors.ts')).href)) as { preflight: LambdaHandler }).preflight
    : undefined;
  const server = createServer(async (req, res) => {
    const requestId = randomUUID();
    const fail = (error: HttpError) => send(res, errorResult(error, requestId));
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      if (req.method === 'GET' && (url.pathname === '/docs' || url.pathname.startsWith('/docs/'))) {
        const page = await docsFile(url.pathname);
        if (page) return send(res, page);
      }
      if (req.method === 'GET' && url.pathname.startsWith('/pki/')) {
        const file = await pkiFile(opts.pkiDir, url.pathname);
        if (file) return send(res, file);
      }
      const found = match(req.method ?? 'GET', url.pathname);
      if (found.kind === 'not_found') return fail(routeNotFound(found.suggestion));
      if (found.kind === 'method_not_allowed' && preflight && req.method === 'OPTIONS') {
        const sibling = match(found.allow[0]!, url.pathname);
        if (sibling.kind !== 'route') return fail(routeNotFound());
        const route = { ...sibling.route, key: `OPTIONS ${sibling.route.path}`, method: 'OPTIONS' } as unknown as Route;
        const event = buildEvent(req, url, route, sibling.params, Buffer.alloc(0), requestId);
        return send(res, await preflight(event, lambdaContext(route, requestId)));
      }
      if (found.kind === 'method_not_allowed') return fail(methodNotAllowed(found.allow));
      const body = await readBody(req);
      if (body === 'too_large') return fail(payloadTooLarge(GATEWAY_MAX_BODY));
      const event = buildEvent(req, url, found.route, found.params, body, requestId);
      send(res, await handlers.get(found.route.key)!(event, lambdaContext(found.route, requestId)));
    } catch (error) {
      process.stderr.write(`gateway error ${requestId}: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) send(res, { statusCode: 502, body: JSON.stringify({ success: false, error: 'bad gateway', code: 'bad_gateway', request_id: requestId }) });
    }
  });
  server.on('clientError', answerClientError);
  keepIdleConnections(server);
  await new Promise<void>((ok) => server.listen(opts.port, opts.host ?? '127.0.0.1', ok));
  return server;
}

/**
 * Idle keep-alive connections are closed by the client, never by the server. A server that
 * closes an idle connection races a client that is just reusing it: the request is lost with
 * "other side closed" (undici keeps a connection until 1 s before the server's advertised
 * timeout, and a worker whose event loop lags more than that under load reuses it too late;
 * a busy run lost a test to it after one 70 s request). With no server timeout, Node advertises
 * none and clients close after their own idle time (undici: 4 s); stopping the runtime closes
 * whatever is left (closeAllConnections).
 */
export function keepIdleConnections(server: Server): void {
  server.keepAliveTimeout = 0;
}
