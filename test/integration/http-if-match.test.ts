import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { table } from './table.js';
import * as http from '../../lib/http/index.js';
import * as apiKeys from '../../lib/auth/api-keys.js';

/**
 * defineHandler's `ifMatch: 'required'` (RFC 6585 §3): an update without If-Match is refused
 * with 428 `precondition_required` before the handler runs, after authentication and body
 * validation; with any If-Match the handler runs (the service then compares the tag).
 */
let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});

async function credential() {
  const tenantId = await t.account();
  const { key } = apiKeys.generateApiKey();
  await t.put({ pk: `KEY#${apiKeys.hashApiKey(key)}`, sk: 'KEY', tenant_id: tenantId, key_id: randomUUID(), scopes: ['admin:*'], created_by: null, expires_at: null });
  return key;
}

const event = (key: string, headers: Record<string, string>, body = '{"description":"d"}'): APIGatewayProxyEvent => ({
  httpMethod: 'PUT',
  resource: '/api/v1/secrets/{name}',
  path: '/api/v1/secrets/db',
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
  multiValueHeaders: {},
  pathParameters: { name: 'db' },
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  stageVariables: null,
  body,
  isBase64Encoded: false,
  requestContext: { requestId: randomUUID(), identity: { sourceIp: '192.0.2.1' } } as never,
});
const ctx = { awsRequestId: 'x' } as never;

describe("ifMatch: 'required'", () => {
  it('428 without If-Match (the handler does not run); a body error is still a 400 first; any If-Match reaches the handler', async () => {
    const key = await credential();
    let runs = 0;
    const h = http.defineHandler({
      ifMatch: 'required',
      params: z.strictObject({ name: z.string() }),
      body: z.strictObject({ description: z.string() }),
      handler: async ({ headers }) => {
        runs++;
        return http.ok({ seen: headers['if-match'] });
      },
    });
    const blind = await h(event(key, {}), ctx);
    expect(blind.statusCode).toBe(428);
    const err = JSON.parse(blind.body);
    expect(err.code).toBe('precondition_required');
    expect(err.error).toMatch(/If-Match.*ETag.*GET/);
    expect(runs).toBe(0);
    expect((await h(event(key, {}, '{"colour":"red"}'), ctx)).statusCode).toBe(400);
    // header names are case-insensitive
    const given = await h(event(key, { 'IF-MATCH': '"x.1"' }), ctx);
    expect(given.statusCode).toBe(200);
    expect(JSON.parse(given.body).data.seen).toBe('"x.1"');
    expect(runs).toBe(1);
    // a handler that does not require it runs without
    const free = http.defineHandler({ handler: async () => http.ok({}) });
    expect((await free(event(key, {}), ctx)).statusCode).toBe(200);
  });
});
