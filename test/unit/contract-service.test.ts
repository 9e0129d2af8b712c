import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../scripts/openapi.js';
import { contractClient, contractInterceptor, startContractService } from '../helpers/contract-service.js';
import { noCounts } from '../setup/contract.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * The contract service (test/setup/contract.ts hosts it for a runtime project; each HTTP test
 * file's test/setup/responses.ts sends it every exchange): a response or a request that does
 * not match the document still fails the test that met it, through the service, and a service
 * that does not answer fails it too, naming the service.
 */
const dir = mkdtempSync(join(tmpdir(), 'contract-service-test-'));
const docFile = join(dir, 'openapi.json');
let service: Awaited<ReturnType<typeof startContractService>>;
let runtime: Server;
let baseUrl: string;
/** What the stand-in runtime answers next: status, content type, body. */
let answer: [number, string, string] = [200, 'application/json', '{}'];

beforeAll(async () => {
  // started before the document exists, as in a run: the service waits for it on the first exchange
  service = await startContractService(docFile);
  runtime = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer[0], { 'content-type': answer[1] });
      res.end(answer[2]);
    });
  });
  await new Promise<void>((r) => runtime.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(runtime.address() as AddressInfo).port}`;
  writeFileSync(`${docFile}.part`, JSON.stringify(await buildOpenApi()));
  renameSync(`${docFile}.part`, docFile);
}, scaled(120_000));

afterAll(async () => {
  await service.close();
  await new Promise((r) => runtime.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const intercept = (url = service.url) => {
  const counts = noCounts();
  return { counts, ...contractInterceptor({ baseUrl, original: globalThis.fetch, check: contractClient(url), counts }) };
};
const error = (code: string) => JSON.stringify({ success: false, error: 'x', code, request_id: 'r' });

describe('contract service', () => {
  it('passes an exchange that matches the document and counts it', async () => {
    const c = intercept();
    answer = [401, 'application/json; charset=utf-8', error('unauthorized')];
    const res = await c.fetch(`${baseUrl}/api/v1/secrets`);
    expect(res.status).toBe(401);
    await c.flush();
    expect(c.counts).toMatchObject({ requests: 1, responses: 1, requestMismatches: 0, responseMismatches: 0 });
  });

  it('fails the test on a response the document does not declare (status, body), naming route and status', async () => {
    const c = intercept();
    answer = [418, 'application/json', error('unauthorized')];
    await c.fetch(`${baseUrl}/api/v1/secrets`);
    answer = [401, 'application/json', error('not_found')];
    await c.fetch(`${baseUrl}/api/v1/secrets`);
    const thrown = await c.flush().then(
      () => null,
      (e: Error) => e.message,
    );
    expect(thrown).toMatch(/do not match the OpenAPI document/);
    expect(thrown).toMatch(/GET \/api\/v1\/secrets -> 418: status 418 is not declared/);
    expect(thrown).toMatch(/GET \/api\/v1\/secrets -> 401: the body does not match the document: .*\/code enum/);
    expect(c.counts).toMatchObject({ responses: 2, responseMismatches: 2 });
    // flushed: the next test starts clean
    await c.flush();
  });

  it('fails the test on a request the server took that the document refuses', async () => {
    const c = intercept();
    answer = [201, 'application/json', '{}'];
    await c.fetch(`${baseUrl}/api/v1/secrets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"not-a-field":1}' });
    const thrown = await c.flush().then(
      () => null,
      (e: Error) => e.message,
    );
    expect(thrown).toMatch(/POST \/api\/v1\/secrets -> 201: the server accepted a request the document calls invalid/);
    expect(c.counts.requestMismatches).toBe(1);
    expect(c.counts.requestMismatchList).toHaveLength(1);
  });

  it('fails the test, naming the service, when the service does not answer', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const c = intercept(url);
    answer = [401, 'application/json', error('unauthorized')];
    await c.fetch(`${baseUrl}/api/v1/secrets`);
    await expect(c.flush()).rejects.toThrow(
      /the OpenAPI contract service \(test\/setup\/contract\.ts\) at http:\/\/127\.0\.0\.1:\d+ did not check an exchange \(GET \/api\/v1\/secrets\)/,
    );
    // a temporary-access token in the path (or anything in a query) never reaches the message
    const token = 'tmp_CANARY0123456789abcdef';
    await c.fetch(`${baseUrl}/api/v1/t/${token}?secret=${token}`);
    const thrown = await c.flush().then(
      () => '',
      (e: Error) => e.message,
    );
    expect(thrown).toContain('did not check an exchange (GET /api/v1/t/{})');
    expect(thrown).not.toContain(token);
  });
});
