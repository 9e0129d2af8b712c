/**
 * The Lambda Node.js runtime's part, in a fresh process (the artifact runtime's host spawns
 * one per execution environment, under Node 22): resolves `_HANDLER` inside
 * `LAMBDA_TASK_ROOT` as Lambda does (`<module>.<export>`, .mjs then .js then .cjs), imports
 * the built bundle once (the init phase), then runs the invocations the host sends over IPC,
 * one at a time, with a Lambda context object.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const describe = (error) => ({
  errorType: error?.name ?? 'Error',
  errorMessage: error?.message ?? String(error),
  stack: typeof error?.stack === 'string' ? error.stack.split('\n').slice(0, 12) : [],
});

const send = (message) => new Promise((resolve) => process.send(message, resolve));

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
  try {
    const result = await fn(event, context);
    await send({ type: 'result', id, result: result === undefined ? null : result });
  } catch (error) {
    await send({ type: 'error', id, error: describe(error) });
  }
});
process.on('disconnect', () => process.exit(0));
