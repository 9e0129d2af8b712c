import { request } from 'node:http';
import { logger } from './logger.js';

/**
 * A container's end (docs/cost.md, "A container's end"). What Lambda does, and what this
 * module relies on:
 *
 * - Lambda sends SIGTERM to the runtime process at shutdown only when at least one extension
 *   is registered for the function, and gives it up to 500 ms when the runtime has an internal
 *   extension (300 ms with external extensions only) before SIGKILL; without an extension the
 *   process is killed with no signal it can see (aws-samples/graceful-shutdown-with-aws-lambda,
 *   README: "Lambda reserves up to 300 ms (500 ms for a runtime with an internal extension) for
 *   the runtime process to perform a graceful shutdown"; the Lambda Extensions API guide).
 * - An internal extension is registered from within the runtime process: POST
 *   `http://${AWS_LAMBDA_RUNTIME_API}/2020-01-01/extension/register` with the header
 *   `Lambda-Extension-Name` and the body `{"events":[]}` (it needs no event: the SIGTERM its
 *   registration brings is what it is for), then `GET .../extension/event/next` with the
 *   `Lambda-Extension-Identifier` the register answered: the Init phase completes only once the
 *   runtime and every registered extension called next, and a next for no events is never
 *   answered. This is what aws-lambda-rust-runtime's `spawn_graceful_shutdown_handler` does
 *   (docs.rs lambda_runtime: "registers and drives a no-op internal extension that subscribes to
 *   no events ... necessary in order to receive graceful shutdown signals").
 * - Registration must be complete before the runtime's first Next, which ends Init: "Once the
 *   main runtime calls Next, it's too late to register any additional extensions. The Lambda
 *   Runtime API returns an error" (aws-lambda-rust-runtime issue 743, PR 744; its helper is
 *   awaited before `run` since PR 992). So it cannot be left to race the runtime: `onShutdown`
 *   starts it at module load and the module awaits it (top-level await: Lambda's Node.js runtime
 *   awaits an ES module handler's evaluation before its first Next). That is one round trip to
 *   the local runtime API during INIT; the first request waits for nothing.
 *
 * Where AWS_LAMBDA_RUNTIME_API is absent (the source runtime, the tests, scripts) nothing is
 * registered and no SIGTERM handler is installed: those processes keep their own.
 *
 * On SIGTERM every hook runs at once and the process exits when they settle; Lambda's SIGKILL
 * at 500 ms bounds them (a hook still in flight then is lost, as it would be without SIGTERM).
 */
export const EXTENSION_NAME = 'secrets-api-graceful-shutdown';
/** What Lambda gives the runtime process between SIGTERM and SIGKILL when it has an internal extension. */
export const SHUTDOWN_BUDGET_MS = 500;

type Hook = () => Promise<unknown>;
const hooks: { readonly name: string; readonly run: Hook }[] = [];
let registration: Promise<boolean> | undefined;

interface RuntimeApiResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}
/**
 * One HTTP request to the runtime API (a parameter for the unit tests); `body` undefined: a GET
 * that must not hold the process open (the next, never answered).
 */
export type RuntimeApiSend = (method: string, url: string, headers: Record<string, string>, body?: string) => Promise<RuntimeApiResponse>;

/**
 * node:http, not fetch: the extension's next is never answered, and fetch (undici) gives up on
 * a response's headers after 300 s. No timeout. The register's socket holds the process open
 * (a top-level await with nothing else pending would end it: exit code 13); the next's does not.
 */
const httpSend: RuntimeApiSend = (method, url, headers, body) =>
  new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    if (body === undefined) req.on('socket', (socket) => socket.unref());
    req.on('error', reject);
    req.end(body);
  });

/**
 * Registers the no-event internal extension with the runtime API at `api` (host:port) and sends
 * its first next (not awaited: it is never answered). Resolves with the extension's identifier;
 * rejects when the runtime API refuses the registration.
 */
export async function registerExtension(api: string, send: RuntimeApiSend = httpSend): Promise<string> {
  const base = `http://${api}/2020-01-01/extension`;
  const res = await send(
    'POST',
    `${base}/register`,
    { 'Lambda-Extension-Name': EXTENSION_NAME, 'Content-Type': 'application/json' },
    JSON.stringify({ events: [] }),
  );
  const id = res.headers['lambda-extension-identifier'];
  if (res.status !== 200 || typeof id !== 'string' || !id)
    throw new Error(`extension registration refused: HTTP ${res.status} ${res.body.slice(0, 200)}`);
  send('GET', `${base}/event/next`, { 'Lambda-Extension-Identifier': id }).then(
    (r) => logger.warn('graceful shutdown: the extension event/next was answered', { status: r.status }),
    (error: unknown) => logger.warn('graceful shutdown: the extension event/next failed', { error: error as Error }),
  );
  return id;
}

/** Runs every hook at once; resolves when all settled (a failed hook is logged). */
export async function runShutdownHooks(): Promise<void> {
  const results = await Promise.allSettled(hooks.map((h) => h.run()));
  results.forEach((r, i) => {
    if (r.status === 'rejected') logger.warn('shutdown hook failed', { hook: hooks[i]!.name, error: r.reason as Error });
  });
}

async function enable(env: NodeJS.ProcessEnv): Promise<boolean> {
  const api = env.AWS_LAMBDA_RUNTIME_API;
  if (!api) return false;
  process.once('SIGTERM', () => {
    void runShutdownHooks().finally(() => process.exit(0));
  });
  try {
    await registerExtension(api);
    return true;
  } catch (error) {
    // no SIGTERM will come: what the hooks would write waits for the process's next write, or is lost with it
    logger.warn('graceful shutdown unavailable: the extension was not registered', { error: error as Error });
    return false;
  }
}

/**
 * Runs `hook` when Lambda ends the container (SIGTERM). The first call registers the extension
 * (once per process); the promise resolves when it is registered (true) or cannot be (false),
 * never rejects: a module awaits it at its top level so that registration ends before Init does.
 */
export function onShutdown(name: string, hook: Hook, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  hooks.push({ name, run: hook });
  registration ??= enable(env);
  return registration;
}
