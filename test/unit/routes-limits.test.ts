import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EVENT_OVERHEAD_BYTES, LAMBDA_REQUEST_BYTES, MAX_SAFE_BODY_BYTES, ROUTES, routeByKey, worstCaseEventBytes } from '../../lib/routes.js';
import { buildEvent } from '../../scripts/local/gateway.js';

/**
 * Body limits that AWS can carry (lib/routes.ts): no route accepts a body whose Lambda event
 * could exceed a synchronous invocation's 6 MB, and the allowance for the rest of the event
 * holds for the largest request API Gateway lets through.
 */
describe('route body limits against the 6 MB synchronous invocation', () => {
  it('every route\'s worst-case event fits', () => {
    expect(LAMBDA_REQUEST_BYTES).toBe(6_291_456);
    expect(ROUTES.length).toBeGreaterThanOrEqual(322);
    const over = ROUTES.filter((r) => worstCaseEventBytes(r.maxBodyBytes) > LAMBDA_REQUEST_BYTES).map((r) => `${r.key}: ${r.maxBodyBytes}`);
    expect(over).toEqual([]);
  });

  it('documents get the largest safe body, and not a byte more fits', () => {
    const documents = routeByKey('POST', '/api/v1/documents')!;
    expect(documents.maxBodyBytes).toBe(MAX_SAFE_BODY_BYTES);
    expect(MAX_SAFE_BODY_BYTES).toBe(3_080_192);
    expect(worstCaseEventBytes(MAX_SAFE_BODY_BYTES)).toBeLessThanOrEqual(LAMBDA_REQUEST_BYTES);
    expect(worstCaseEventBytes(MAX_SAFE_BODY_BYTES + 1)).toBeGreaterThan(LAMBDA_REQUEST_BYTES);
    expect(documents.bodyLimitNote).toMatch(/S3/);
    // the signing route keeps room for a 1 MiB message in base64 plus its fields
    expect(routeByKey('POST', '/api/v1/crypto/sign')!.maxBodyBytes).toBe(2 * 1024 * 1024);
  });

  it('worst case: JSON text escaped (x2) beats binary base64 (x4/3) at every size', () => {
    expect(worstCaseEventBytes(0)).toBe(EVENT_OVERHEAD_BYTES);
    expect(worstCaseEventBytes(1)).toBe(EVENT_OVERHEAD_BYTES + 4); // base64 pads one byte to 4
    expect(worstCaseEventBytes(3)).toBe(EVENT_OVERHEAD_BYTES + 6);
    expect(worstCaseEventBytes(1_000_000)).toBe(EVENT_OVERHEAD_BYTES + 2_000_000);
  });

  it('the allowance holds for the largest request: 10,240 bytes of query string and headers, a body that is all escapes', () => {
    const route = routeByKey('POST', '/api/v1/documents')!;
    // a valid JSON text in which every character needs escaping in the event: "\"\"…"
    const inner = '\\"'.repeat((route.maxBodyBytes - 2) / 2);
    const body = Buffer.from(`"${inner}"`);
    expect(body.length).toBe(route.maxBodyBytes);
    expect(() => JSON.parse(body.toString())).not.toThrow();
    // the request line and headers at API Gateway's 10,240-byte cap, shaped for the worst
    // amplification: distinct one- and two-letter query parameters, short headers
    const query = Array.from({ length: 1_400 }, (_, i) => i.toString(36)).join('&');
    const headers = [...Array.from({ length: 740 }, (_, i) => [`h${i.toString(36)}`, '"'] as const), ['Content-Type', 'application/json'] as const];
    const rawHeaders = headers.flat();
    const requestBytes = `POST /api/v1/documents?${query} HTTP/1.1\r\n`.length + headers.reduce((n, [k, v]) => n + `${k}: ${v}\r\n`.length, 0);
    expect(requestBytes).toBeLessThanOrEqual(10_240);
    const req = {
      rawHeaders,
      headers: { 'content-type': 'application/json', 'user-agent': '"'.repeat(200) },
      httpVersion: '1.1',
      socket: { remoteAddress: '::ffff:203.0.113.250' },
    } as unknown as IncomingMessage;
    const url = new URL(`http://local/api/v1/documents?${query}`);
    const event = buildEvent(req, url, route, {}, body, 'c0ffee00-0000-4000-8000-000000000000');
    const size = Buffer.byteLength(JSON.stringify(event));
    expect(size).toBeGreaterThan(2 * route.maxBodyBytes);
    expect(size).toBeLessThanOrEqual(worstCaseEventBytes(route.maxBodyBytes));
    expect(size).toBeLessThanOrEqual(LAMBDA_REQUEST_BYTES);
  });

  it('a body over the limit answers 413, saying how large a document may be', async () => {
    process.env.KEY_PROVIDER ??= 'kms';
    process.env.KMS_KEY_ID ??= 'arn:aws:kms:eu-west-1:111122223333:key/00000000-0000-0000-0000-000000000000';
    const { handler } = await import('../../functions/not-implemented.js');
    const res = await handler(
      {
        httpMethod: 'POST',
        resource: '/api/v1/documents',
        path: '/api/v1/documents',
        headers: { 'Content-Type': 'application/json' },
        body: `"${'x'.repeat(MAX_SAFE_BODY_BYTES - 1)}"`,
        isBase64Encoded: false,
        requestContext: { requestId: 'limits-413', identity: { sourceIp: '192.0.2.9' } },
      } as never,
      { awsRequestId: 'limits-413', getRemainingTimeInMillis: () => 10_000 } as never,
    );
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({
      code: 'payload_too_large',
      error: `request body exceeds the ${MAX_SAFE_BODY_BYTES} byte limit of this route; a document is at most 2 MiB (2,097,152 bytes) before base64; larger PDFs are not accepted (no presigned S3 upload is offered)`,
    });
  });
});
