/**
 * The Lambda Node.js runtime's part, in a fresh process (the artifact runtime's host spawns
 * one per execution environment, under Node 22): resolves `_HANDLER` inside
 * `LAMBDA_TASK_ROOT` as Lambda does (`<module>.<export>`, .mjs then .js then .cjs), imports
 * the built bundle once (the init phase), then runs the invocations the host sends over IPC,
 * one at a time, with a Lambda context object.
 *
 * Of Lambda's runtime API it serves the Extensions API's part an internal extension uses (the
 * invocations themselves come over IPC): see `runtimeApi` below.
 */
import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Lambda's Extensions API as an internal extension reaches it (lib/core/shutdown.ts): the code
 * reads AWS_LAMBDA_RUNTIME_API and calls
 * - `POST /2020-01-01/extension/register` (header `Lambda-Extension-Name`, body `{"events":[...]}`):
 *   answered with a `Lambda-Extension-Identifier`, during Init only (after the runtime's first
 *   Next Lambda refuses it: aws-lambda-rust-runtime issue 743); events (INVOKE, SHUTDOWN) are
 *   not emulated here: a registration for any is refused, so a function that needs them fails
 *   here rather than silently getting none;
 * - `GET /2020-01-01/extension/event/next` (header `Lambda-Extension-Identifier`): held open and
 *   never answered (no events). Init ends once every registered extension called it.
 * Each registration is told to the host (`extension` message): Lambda sends SIGTERM at shutdown
 * only to a runtime with a registered extension (host.ts `retire`).
 * The server listens on 127.0.0.1 in this process, before the bundle is imported: the variable
 * is in the environment when the function's code first reads it, as in Lambda.
 */
const extensions = new Map(); // identifier -> { name, next: Promise resolved at its first next }
let initDone = false;
const refuse = (res, status, errorType, errorMessage) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ errorType, errorMessage }));
};
const runtimeApi = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/2020-01-01/extension/register') {
      const name = req.headers['lambda-extension-name'];
      let events;
      try {
        events = JSON.parse(Buffer.concat(chunks).toString('utf8')).events;
      } catch {
        events = undefined;
      }
      if (initDone) return refuse(res, 403, 'Extension.RegistrationError', 'extensions register during Init only');
      if (typeof name !== 'string' || !name) return refuse(res, 400, 'Extension.InvalidExtensionName', 'Lambda-Extension-Name is required');
      if ([...extensions.values()].some((e) => e.name === name)) return refuse(res, 409, 'Extension.AlreadyRegistered', `${name} is registered`);
      if (!Array.isArray(events)) return refuse(res, 400, 'InvalidRequest', 'the body must be {"events": [...]}');
      if (events.length > 0) return refuse(res, 400, 'Extension.NotEmulated', 'extension events are not emulated by the artifact runtime');
      const id = randomUUID();
      let seen;
      extensions.set(id, { name, next: new Promise((r) => (seen = r)), seen });
      process.send?.({ type: 'extension', name });
      res.writeHead(200, { 'content-type': 'application/json', 'lambda-extension-identifier': id });
      res.end(
        JSON.stringify({
          functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
          functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
          handler: process.env._HANDLER,
        }),
      );
      return;
    }
    if (req.method === 'GET' && req.url === '/2020-01-01/extension/event/next') {
      const extension = extensions.get(req.headers['lambda-extension-identifier']);
      if (!extension) return refuse(res, 403, 'Extension.UnknownExtensionIdentifier', 'unknown Lambda-Extension-Identifier');
      extension.seen();
      return; // no events: never answered
    }
    refuse(res, 404, 'NotFound', `${req.method} ${req.url} is not emulated`);
  });
});
await new Promise((resolve) => runtimeApi.listen(0, '127.0.0.1', resolve));
runtimeApi.unref();
process.env.AWS_LAMBDA_RUNTIME_API = `127.0.0.1:${runtimeApi.address().port}`;
/** Init's end (the runtime's first Next): every registered extension has called next, within Lambda's 10 s Init limit. */
async function extensionsReady(deadline) {
  const pending = Promise.all([...extensions.values()].map((e) => e.next));
  const late = new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - performance.now()), 'late').unref());
  if ((await Promise.race([pending, late])) === 'late')
    throw Object.assign(new Error('a registered extension did not call event/next during Init'), { name: 'Extension.InitError' });
  initDone = true;
}

// The host learns that the process is exiting (its exit handlers ran: what follows is Node's own
// exit, with the coverage it writes) through fd 4, a pipe the host opened (host.ts `retire`)
process.on('exit', () => {
  try {
    writeSync(4, 'exit\n');
  } catch {
    // not spawned by the host
  }
});

const describe = (error) => ({
  errorType: error?.name ?? 'Error',
  errorMessage: error?.message ?? String(error),
  stack: typeof error?.stack === 'string' ? error.stack.split('\n').slice(0, 12) : [],
});

const send = (message) => new Promise((resolve) => process.send(message, resolve));

/**
 * Every AWS call the function makes (scripts/local/artifact/iam.ts evaluates them): each
 * SigV4-signed HTTP request, as it leaves the process, with the headers and body AWS would
 * authorize it from. S3 object bodies are not sent (only their length): the request line and
 * headers name the object.
 */
let invocation;
subscribe('http.client.request.created', ({ request }) => {
  const authorization = String(request.getHeader('authorization') ?? '');
  if (!authorization.startsWith('AWS4-HMAC-SHA256')) return;
  const chunks = [];
  const keep = (chunk, encoding) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk));
  };
  const write = request.write;
  const end = request.end;
  request.write = function (chunk, encoding, ...rest) {
    keep(chunk, encoding);
    return write.call(this, chunk, encoding, ...rest);
  };
  request.end = function (chunk, encoding, ...rest) {
    keep(chunk, encoding);
    const headers = {};
    for (const name of ['authorization', 'host', 'content-type', 'x-amz-target', 'x-amz-security-token']) {
      const value = request.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const body = Buffer.concat(chunks);
    const s3 = / Credential=[^/]+\/[^/]+\/[^/]+\/s3\//.test(authorization);
    process.send?.({
      type: 'aws-request',
      invocation,
      request: {
        method: request.method,
        host: headers.host ?? request.host,
        path: request.path,
        headers,
        body: s3 ? '' : body.toString('utf8'),
        bytes: body.length,
      },
    });
    return end.call(this, chunk, encoding, ...rest);
  };
});

async function init() {
  const handler = process.env._HANDLER ?? '';
  const dot = handler.lastIndexOf('.');
  if (dot <= 0) throw Object.assign(new Error(`Bad handler ${handler}: expected <module>.<export>`), { name: 'Runtime.MalformedHandlerName' });
  const [module, exportName] = [handler.slice(0, dot), handler.slice(dot + 1)];
  const base = join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), module);
  const file = ['.mjs', '.js', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));
  if (!file) throw Object.assign(new Error(`Cannot find module '${module}'`), { name: 'Runtime.ImportModuleError' });
  let loaded;
  try {
    loaded = await import(pathToFileURL(file).href);
  } catch (error) {
    throw Object.assign(new Error(`${module}: ${error?.message ?? error}`, { cause: error }), {
      name: 'Runtime.ImportModuleError',
      stack: error?.stack,
    });
  }
  const fn = loaded[exportName];
  if (typeof fn !== 'function')
    throw Object.assign(new Error(`${module}.${exportName} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  return fn;
}

const started = performance.now();
let fn;
try {
  fn = await init();
  await extensionsReady(started + 10_000);
  await send({ type: 'ready', initMs: performance.now() - started });
} catch (error) {
  await send({ type: 'init_error', error: describe(error) });
  process.exit(1);
}

// the local keyring's stand-in KMS requests (lib/crypto/envelope.ts): KeyId is the template's KMS_KEY_ID, filled in by the runtime
subscribe('secrets-api:local-kms', ({ operation, context, tenantId }) => {
  process.send?.({
    type: 'aws-request',
    invocation,
    request: {
      method: 'POST',
      host: 'kms.local',
      path: '/',
      headers: {
        authorization: `AWS4-HMAC-SHA256 Credential=local/00000000/${process.env.AWS_REGION}/kms/aws4_request, SignedHeaders=host, Signature=local-keyring`,
        'x-amz-target': `TrentService.${operation}`,
        ...(tenantId !== undefined ? { 'x-amz-security-token': `local-session-${tenantId}` } : {}),
      },
      body: JSON.stringify({ KeyId: '', EncryptionContext: context }),
    },
  });
});

process.on('message', async (message) => {
  if (message?.type !== 'invoke') return;
  const { id, event, context: c } = message;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    invokedFunctionArn: c.invokedFunctionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: c.awsRequestId,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'artifact',
    getRemainingTimeInMillis: () => Math.max(0, c.deadlineMs - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  invocation = id;
  try {
    const result = await fn(event, context);
    await send({ type: 'result', id, result: result === undefined ? null : result });
  } catch (error) {
    await send({ type: 'error', id, error: describe(error) });
  }
});
process.on('disconnect', () => process.exit(0));
