/**
 * The Lambda Node.js runtime's part, in a fresh process (the artifact runtime's host spawns
 * one per execution environment, under Node 22): resolves `_HANDLER` inside
 * `LAMBDA_TASK_ROOT` as Lambda does (`<module>.<export>`, .mjs then .js then .cjs), imports
 * the built bundle once (the init phase), then runs the invocations the host sends over IPC,
 * one at a time, with a Lambda context object.
 */
import { subscribe } from 'node:diagnostics_channel';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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
