import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FunctionSpec } from '../../scripts/local/artifact/deployment.js';
import { availableMemory, environmentCeiling, FunctionHost, SHUTDOWN_BUDGET_MS, underPressure } from '../../scripts/local/artifact/host.js';
import type { RawAwsRequest } from '../../scripts/local/artifact/aws-calls.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The artifact runtime's Lambda host (scripts/local/artifact/host.ts) on hand-written code
 * assets: how it reports a module that throws at import (what makes `npm test` name a broken
 * handler module), and Lambda's other failure modes. The whole runtime over the real
 * bundles is the `artifact` project of vitest.config.ts.
 */

const root = mkdtempSync(join(tmpdir(), 'artifact-host-'));

function asset(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [file, source] of Object.entries(files)) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), source);
  }
  return dir;
}

const spec = (key: string, codeDir: string, handler: string, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({
  key,
  functionName: `fn-${key}`,
  handler,
  runtime: 'nodejs22.x',
  timeoutSeconds: 5,
  memoryMb: 256,
  codeDir,
  layerDirs: [],
  environment: { FROM_TEMPLATE: 'template-value' },
  roleArn: 'arn:aws:iam::000000000000:role/test',
  inVpc: false,
  ...extra,
});

const host = new FunctionHost({ overlay: () => ({ FROM_OVERLAY: 'overlay-value', FROM_TEMPLATE: undefined }), perFunction: 2, maxEnvironments: 4 });
afterAll(async () => {
  await host.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the artifact host', () => {
  it('names the module and its error when a bundle throws at import, and every invocation of it fails in init', async () => {
    const dir = asset('throws', {
      'secrets/broken.mjs': "throw new Error('planted import-time failure');\nexport const list = () => ({ statusCode: 200 });\n",
    });
    const fn = spec('throws', dir, 'secrets/broken.list');
    const error = await host.prewarm(fn);
    expect(error?.errorType).toBe('Runtime.ImportModuleError');
    expect(error?.errorMessage).toBe('secrets/broken: planted import-time failure');
    const outcome = await host.invoke(fn, {});
    expect(outcome).toMatchObject({ ok: false, phase: 'init', error: { errorType: 'Runtime.ImportModuleError' } });
    expect(host.initFailures.map((f) => f.handler)).toContain('secrets/broken.list');
  });

  it('refuses a handler string whose export is missing, as Lambda does', async () => {
    const dir = asset('noexport', { 'a/b.mjs': 'export const other = () => 1;\n' });
    expect((await host.prewarm(spec('noexport', dir, 'a/b.list')))?.errorType).toBe('Runtime.HandlerNotFound');
  });

  it('keeps environments while memory allows, up to 400 or ARTIFACT_MAX_ENVIRONMENTS; short of a fifth of the memory (at least 2 GiB) it makes room', () => {
    const gib = 1024 ** 3;
    expect(environmentCeiling({})).toBe(400);
    expect(environmentCeiling({ ARTIFACT_MAX_ENVIRONMENTS: '12' })).toBe(12);
    expect(environmentCeiling({ ARTIFACT_MAX_ENVIRONMENTS: 'many' })).toBe(400);
    expect(underPressure(5 * gib, 24 * gib)).toBe(false);
    expect(underPressure(4.7 * gib, 24 * gib)).toBe(true);
    expect(underPressure(2.1 * gib, 8 * gib)).toBe(false);
    expect(underPressure(1.9 * gib, 8 * gib)).toBe(true);
    expect(availableMemory(() => 'MemTotal:       24684096 kB\nMemFree:         6444244 kB\nMemAvailable:    8884636 kB\n')).toBe(8884636 * 1024);
    expect(availableMemory(() => 'no such line')).toBeGreaterThan(0);
  });

  it('retires the least recently used idle environments only when memory runs short, never below 16', async () => {
    let available = 64 * 1024 ** 3;
    const roomy = new FunctionHost({ overlay: () => ({}), maxEnvironments: 400, availableMemory: () => available });
    try {
      const dir = asset('many', { 'm/fn.mjs': 'export const handler = async () => ({ statusCode: 200 });\n' });
      const fns = Array.from({ length: 20 }, (_, i) => spec(`many${i}`, dir, 'm/fn.handler'));
      for (const fn of fns.slice(0, 18)) expect(await roomy.invoke(fn, {})).toMatchObject({ ok: true });
      expect(roomy.evictions).toBe(0);
      available = 1024 ** 3; // memory runs short: each start retires the two least recently used
      expect(await roomy.invoke(fns[18]!, {})).toMatchObject({ ok: true });
      expect(roomy.evictions).toBe(2);
      // the first function's environment was the least recently used: it starts cold again
      const before = roomy.coldStarts;
      expect(await roomy.invoke(fns[0]!, {})).toMatchObject({ ok: true });
      expect(roomy.coldStarts).toBe(before + 1);
      // a recently used one is still warm
      expect(await roomy.invoke(fns[17]!, {})).toMatchObject({ ok: true });
      expect(roomy.coldStarts).toBe(before + 1);
      expect(roomy.peakEnvironments).toBeGreaterThanOrEqual(18);
    } finally {
      await roomy.close();
    }
  });

  it('keeps a prewarmed environment that imports, and it serves the first invocation: no second cold start', async () => {
    const dir = asset('warm', {
      'w/warm.mjs': 'const loaded = Date.now();\nexport const handler = async () => ({ statusCode: 200, body: String(loaded) });\n',
    });
    const fn = spec('warm', dir, 'w/warm.handler');
    const before = host.coldStarts;
    expect(await host.prewarm(fn)).toBeUndefined();
    const first = await host.invoke(fn, {});
    const second = await host.invoke(fn, {});
    expect(host.coldStarts - before).toBe(1);
    expect(first).toMatchObject({ ok: true });
    // one process served both: its module was loaded once
    expect((second as { result: { body: string } }).result.body).toBe((first as { result: { body: string } }).result.body);
  });

  it('runs the export with the event and a Lambda context, in a process that sees only the function environment', async () => {
    const dir = asset('probe', {
      'x/probe.mjs': `export const handler = async (event, context) => ({
        statusCode: 200,
        body: JSON.stringify({
          event, node: process.versions.node, fn: context.functionName, remaining: context.getRemainingTimeInMillis(),
          overlay: process.env.FROM_OVERLAY, template: process.env.FROM_TEMPLATE ?? null, root: process.env.LAMBDA_TASK_ROOT,
          leaked: Object.keys(process.env).filter((k) => k.startsWith('VITEST')),
        }),
      });\n`,
    });
    const outcome = await host.invoke(spec('probe', dir, 'x/probe.handler'), { hello: 'world' });
    expect(outcome.ok).toBe(true);
    const body = JSON.parse((outcome as { result: { body: string } }).result.body);
    expect(body.event).toEqual({ hello: 'world' });
    expect(body.node.split('.')[0]).toBe('22');
    expect(body.fn).toBe('fn-probe');
    expect(body.remaining).toBeGreaterThan(0);
    expect(body.remaining).toBeLessThanOrEqual(5000);
    expect(body.overlay).toBe('overlay-value');
    expect(body.template).toBeNull(); // the overlay removed it
    expect(body.root).toBe(dir);
    expect(body.leaked).toEqual([]); // the test runner's environment does not reach the function
  });

  it('turns a thrown error into an invoke failure and keeps the environment; a crash or a timeout discards it', async () => {
    const dir = asset('modes', {
      'm/modes.mjs': `let calls = 0;
        export const fail = async () => { calls++; throw new TypeError('bad ' + calls); };
        export const crash = async () => { process.exit(3); };
        export const slow = async () => new Promise(() => {});\n`,
    });
    const fail = spec('fail', dir, 'm/modes.fail');
    expect(await host.invoke(fail, {})).toMatchObject({ ok: false, phase: 'invoke', error: { errorType: 'TypeError', errorMessage: 'bad 1' } });
    // the same (warm) environment served the second call
    expect(await host.invoke(fail, {})).toMatchObject({ ok: false, error: { errorMessage: 'bad 2' } });
    expect(await host.invoke(spec('crash', dir, 'm/modes.crash'), {})).toMatchObject({ ok: false, error: { errorType: 'Runtime.ExitError' } });
    const slow = await host.invoke(spec('slow', dir, 'm/modes.slow', { timeoutSeconds: 1 }), {});
    expect(slow).toMatchObject({ ok: false, error: { errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 1.00 seconds' } });
  });
  it('records every SigV4-signed request a function sends, with its body, for the IAM evaluation tier, and nothing unsigned', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as AddressInfo).port;
    const recorded: { fn: string; request: RawAwsRequest; invocation: string | undefined }[] = [];
    const recording = new FunctionHost({
      overlay: () => ({ TARGET_PORT: String(port) }),
      onAwsRequest: (fn, request, invocation) => recorded.push({ fn: fn.key, request, invocation }),
    });
    try {
      const dir = asset('signed', {
        'x/signed.mjs': `import { request } from 'node:http';
          const send = (headers, body) => new Promise((ok) => {
            const r = request({ host: '127.0.0.1', port: Number(process.env.TARGET_PORT), method: 'POST', path: '/', headers }, (res) => { res.resume(); res.on('end', ok); });
            r.write(body.slice(0, 5));
            r.end(body.slice(5));
          });
          export const handler = async () => {
            await send({ authorization: 'AWS4-HMAC-SHA256 Credential=local/20261127/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0', 'x-amz-target': 'DynamoDB_20120810.GetItem', 'x-amz-security-token': 'local-session-tnt_a' }, '{"TableName":"t","Key":{"pk":{"S":"T#tnt_a"}}}');
            await send({ 'content-type': 'application/json' }, '{"unsigned":"webhook"}');
            return { statusCode: 200 };
          };\n`,
      });
      const outcome = await recording.invoke(spec('signed', dir, 'x/signed.handler'), {}, 'req-1');
      expect(outcome.ok).toBe(true);
      // the request's IPC message precedes the result's: recorded by the time the invocation returns
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({
        fn: 'signed',
        invocation: 'req-1',
        request: {
          method: 'POST',
          path: '/',
          headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem', 'x-amz-security-token': 'local-session-tnt_a' },
        },
      });
      expect(JSON.parse(recorded[0]!.request.body)).toEqual({ TableName: 't', Key: { pk: { S: 'T#tnt_a' } } });
    } finally {
      await recording.close();
      server.close();
    }
  });
  describe("an environment's end, as Lambda's shutdown (SIGTERM only with an extension registered, then 500 ms)", () => {
    /**
     * A bundle that, when REGISTER is set, registers a no-event internal extension at init as
     * lib/core/shutdown.ts does (top-level await, then the first next), and whose SIGTERM
     * handler writes MARK after WORK_MS; `late` tries to register during an invocation.
     */
    const source = `import { request } from 'node:http';
      import { writeFileSync } from 'node:fs';
      const call = (method, path, headers, body) => new Promise((ok, ko) => {
        const r = request('http://' + process.env.AWS_LAMBDA_RUNTIME_API + path, { method, headers, agent: false }, (res) => {
          let text = ''; res.on('data', (c) => (text += c)); res.on('end', () => ok({ status: res.statusCode, id: res.headers['lambda-extension-identifier'], text }));
        });
        if (body === undefined) r.on('socket', (s) => s.unref());
        r.on('error', ko); r.end(body);
      });
      const register = (name) => call('POST', '/2020-01-01/extension/register', { 'Lambda-Extension-Name': name }, JSON.stringify({ events: [] }));
      process.on('SIGTERM', () => setTimeout(() => { writeFileSync(process.env.MARK, 'flushed'); process.exit(0); }, Number(process.env.WORK_MS)));
      if (process.env.REGISTER) {
        const { id } = await register('test-extension');
        void call('GET', '/2020-01-01/extension/event/next', { 'Lambda-Extension-Identifier': id });
      }
      export const handler = async () => ({ statusCode: 200, body: process.env.AWS_LAMBDA_RUNTIME_API });
      export const late = async () => ({ statusCode: 200, body: JSON.stringify(await register('late-extension')) });\n`;
    const dir = asset('shutdown', { 's/end.mjs': source });
    const marks = join(root, 'marks');
    mkdirSync(marks);
    const withEnv = (key: string, env: Record<string, string>) =>
      spec(key, dir, 's/end.handler', { environment: { MARK: join(marks, key), WORK_MS: '20', ...env } });

    it('a runtime that registered an extension gets SIGTERM when its environment is retired, and its handler runs to the end', async () => {
      const fn = withEnv('registered', { REGISTER: '1' });
      const outcome = await host.invoke(fn, {});
      expect((outcome as { result: { body: string } }).result.body).toMatch(/^127\.0\.0\.1:\d+$/);
      const before = host.shutdowns.terminated;
      expect(await host.retireIdle(fn.key)).toEqual({ retired: 1, terminated: 1 });
      expect(readFileSync(join(marks, 'registered'), 'utf8')).toBe('flushed');
      expect(host.shutdowns.terminated).toBe(before + 1);
    });

    it('one without an extension gets no SIGTERM (as in Lambda): its handler never runs', async () => {
      const fn = withEnv('unregistered', {});
      expect(await host.invoke(fn, {})).toMatchObject({ ok: true });
      expect(await host.retireIdle(fn.key)).toEqual({ retired: 1, terminated: 0 });
      expect(existsSync(join(marks, 'unregistered'))).toBe(false);
    });

    it(`a handler still working ${SHUTDOWN_BUDGET_MS} ms after SIGTERM is ended: what it would have written is lost`, async () => {
      const fn = withEnv('slow-end', { REGISTER: '1', WORK_MS: String(SHUTDOWN_BUDGET_MS * 4) });
      expect(await host.invoke(fn, {})).toMatchObject({ ok: true });
      const before = host.shutdowns.overBudget;
      const started = Date.now();
      expect(await host.retireIdle(fn.key)).toEqual({ retired: 1, terminated: 1 });
      expect(Date.now() - started).toBeLessThan(SHUTDOWN_BUDGET_MS * 4);
      expect(existsSync(join(marks, 'slow-end'))).toBe(false);
      expect(host.shutdowns.overBudget).toBe(before + 1);
    });

    it("refuses a registration once Init is over (Lambda: after the runtime's first Next)", async () => {
      const outcome = await host.invoke({ ...withEnv('late', {}), handler: 's/end.late' }, {});
      const answer = JSON.parse((outcome as { result: { body: string } }).result.body) as { status: number; text: string };
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.text).errorType).toBe('Extension.RegistrationError');
    });
  });
});
