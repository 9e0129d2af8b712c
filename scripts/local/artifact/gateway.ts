/**
 * API Gateway (REST, Lambda proxy) as the synthesized templates configure it: the methods
 * and their resource paths, each method's integration function, the gateway responses, the
 * binary media types, the 10 MB request limit and the 29 s integration timeout. Requests
 * that match no method get the MISSING_AUTHENTICATION_TOKEN response, as in AWS (a known path
 * with an undefined method included). A function that fails (init error, unhandled error,
 * crash, malformed result) gets INTEGRATION_FAILURE; one that runs out of time,
 * INTEGRATION_TIMEOUT. Both then render through the templates' DEFAULT_5XX customisation.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Route } from '../../../lib/routes.js';
import { buildEvent, keepIdleConnections, readBody } from '../gateway.js';
import { buildRouter } from '../router.js';
import type { Deployment, GatewayResponseSpec, MethodSpec } from './deployment.js';
import type { FunctionHost } from './host.js';

/** Lambda's synchronous invocation payload limit (request and response). */
const MAX_INVOKE_BYTES = 6 * 1024 * 1024;
const INTEGRATION_TIMEOUT_MS = 29_000;

/** Status and message of the response types the runtime produces, before customisation. */
const RESPONSE_TYPES: Readonly<Record<string, { status: number; message: string }>> = {
  MISSING_AUTHENTICATION_TOKEN: { status: 403, message: 'Missing Authentication Token' },
  REQUEST_TOO_LARGE: { status: 413, message: 'Request Too Long' },
  INTEGRATION_FAILURE: { status: 502, message: 'Internal server error' },
  INTEGRATION_TIMEOUT: { status: 504, message: 'Endpoint request timed out' },
};

export interface MethodStats {
  readonly method: MethodSpec;
  readonly statuses: Map<number, number>;
}

export interface ArtifactGateway {
  readonly server: Server;
  /** Per method (`GET /api/v1/secrets`): the statuses it answered, with counts. */
  readonly stats: ReadonlyMap<string, MethodStats>;
  /** Function failures seen by the gateway (init errors, crashes, timeouts, malformed results). */
  readonly failures: { method: string; errorType: string; errorMessage: string }[];
}

const methodKey = (m: Pick<MethodSpec, 'httpMethod' | 'path'>) => `${m.httpMethod} ${m.path}`;

function mediaTypeMatches(pattern: string, type: string): boolean {
  if (pattern === '*/*') return true;
  const [p, q] = [pattern.toLowerCase(), type.toLowerCase().split(';')[0]!.trim()];
  return p.endsWith('/*') ? q.startsWith(p.slice(0, -1)) : p === q;
}

export async function startArtifactGateway(opts: {
  port: number;
  host?: string;
  deployment: Deployment;
  functions: FunctionHost;
  log?: NodeJS.WritableStream;
}): Promise<ArtifactGateway> {
  const { deployment, functions } = opts;
  const log = opts.log ?? process.stderr;
  const routes = deployment.methods.map((m) => ({ key: methodKey(m), path: m.path, method: m.httpMethod, spec: m }));
  const match = buildRouter(routes as unknown as Route[]);
  const stats = new Map<string, MethodStats>(deployment.methods.map((m) => [methodKey(m), { method: m, statuses: new Map() }]));
  const failures: ArtifactGateway['failures'] = [];
  const isBinary = (type: string | undefined) => Boolean(type) && deployment.binaryMediaTypes.some((p) => mediaTypeMatches(p, type!));

  const gatewayResponse = (res: ServerResponse, type: string, requestId: string) => {
    const base = RESPONSE_TYPES[type] ?? { status: 500, message: 'Internal server error' };
    const group = base.status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
    const spec: GatewayResponseSpec | undefined = deployment.gatewayResponses.get(type) ?? deployment.gatewayResponses.get(group);
    const status = Number(spec?.statusCode ?? base.status);
    const template = spec?.templates['application/json'];
    const body = template
      ? template
          .replaceAll('$context.error.messageString', JSON.stringify(base.message))
          .replaceAll('$context.error.message', base.message)
          .replaceAll('$context.error.responseType', type)
          .replaceAll('$context.requestId', requestId)
      : JSON.stringify({ message: base.message });
    res.writeHead(status, { 'Content-Type': 'application/json', ...spec?.headers, 'x-amzn-RequestId': requestId, 'x-amzn-ErrorType': type });
    res.end(body);
    return status;
  };

  const server = createServer(async (req, res) => {
    const requestId = randomUUID();
    let key = '';
    const record = (status: number) => {
      const s = stats.get(key);
      if (s) s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    };
    try {
      const url = new URL(req.url ?? '/', 'http://artifact');
      const found = match(req.method ?? 'GET', url.pathname);
      if (found.kind !== 'route') return void gatewayResponse(res, 'MISSING_AUTHENTICATION_TOKEN', requestId);
      key = found.route.key;
      const spec = (found.route as unknown as { spec: MethodSpec }).spec;
      const body = await readBody(req);
      if (body === 'too_large') return record(gatewayResponse(res, 'REQUEST_TOO_LARGE', requestId));
      const fn = spec.functionKey ? deployment.functions.get(spec.functionKey) : undefined;
      if (!fn) throw new Error(`${key}: integration ${spec.integrationType} with no function of this deployment`);
      const event = buildEvent(req, url, found.route, found.params, body, requestId, isBinary);
      event.requestContext.stage = 'prod';
      if (Buffer.byteLength(JSON.stringify(event)) > MAX_INVOKE_BYTES) {
        failures.push({ method: key, errorType: 'RequestEntityTooLargeException', errorMessage: 'the event exceeds the 6 MB invocation payload' });
        return record(gatewayResponse(res, 'INTEGRATION_FAILURE', requestId));
      }
      const started = Date.now();
      const outcome = await functions.invoke(fn, event, requestId);
      if (!outcome.ok) {
        failures.push({ method: key, errorType: outcome.error.errorType, errorMessage: outcome.error.errorMessage });
        log.write(
          `artifact gateway ${requestId}: ${key} -> ${fn.functionName} (${fn.handler}) failed in ${outcome.phase}: ${outcome.error.errorType}: ${outcome.error.errorMessage}\n`,
        );
        const timedOut = outcome.error.errorType === 'Sandbox.Timedout' || Date.now() - started >= INTEGRATION_TIMEOUT_MS;
        return record(gatewayResponse(res, timedOut ? 'INTEGRATION_TIMEOUT' : 'INTEGRATION_FAILURE', requestId));
      }
      const result = outcome.result as {
        statusCode?: unknown;
        headers?: Record<string, unknown>;
        multiValueHeaders?: Record<string, unknown[]>;
        body?: unknown;
        isBase64Encoded?: boolean;
      } | null;
      if (
        !result ||
        typeof result.statusCode !== 'number' ||
        (result.body !== undefined && result.body !== null && typeof result.body !== 'string')
      ) {
        failures.push({
          method: key,
          errorType: 'MalformedProxyResponse',
          errorMessage: 'the function returned no {statusCode, headers, body} object',
        });
        return record(gatewayResponse(res, 'INTEGRATION_FAILURE', requestId));
      }
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(result.headers ?? {})) headers[k] = String(v);
      for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
      headers['x-amzn-RequestId'] = requestId;
      const bodyText = typeof result.body === 'string' ? result.body : '';
      res.writeHead(result.statusCode, headers);
      res.end(result.isBase64Encoded ? Buffer.from(bodyText, 'base64') : bodyText);
      record(result.statusCode);
    } catch (error) {
      log.write(`artifact gateway ${requestId}: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) record(gatewayResponse(res, 'INTEGRATION_FAILURE', requestId));
    }
  });
  keepIdleConnections(server);
  await new Promise<void>((ok) => server.listen(opts.port, opts.host ?? '127.0.0.1', ok));
  return { server, stats, failures };
}
