import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../scripts/openapi.js';
import { responseValidator } from '../helpers/response-validator.js';
import { scaled } from '../helpers/timeouts.js';

/** The harness that holds every API test response to the document (test/setup/responses.ts) catches what it must. */
let check: ReturnType<typeof responseValidator>;
beforeAll(async () => {
  check = responseValidator((await buildOpenApi()) as never);
}, scaled(120_000));

const json = (status: number, body: unknown, method = 'GET', path = '/api/v1/secrets') => ({
  method,
  path,
  status,
  contentType: 'application/json; charset=utf-8',
  body: JSON.stringify(body),
});
const error = (code: string) => ({ success: false, error: 'x', code, request_id: 'r' });

describe('response validator', () => {
  it('accepts a declared status whose body matches, on the route the gateway would pick', () => {
    expect(check(json(401, error('unauthorized')))).toBeNull();
    expect(check(json(404, error('not_found'), 'GET', '/api/v1/secrets/db-password?x=1'))).toBeNull();
  });

  it('refuses a status the route does not declare, naming route and status', () => {
    expect(check(json(418, error('unauthorized')))).toMatch(/^GET \/api\/v1\/secrets -> 418: status 418 is not declared/);
    // a list has no path parameter: no 404
    expect(check(json(404, error('not_found')))).toMatch(/404 is not declared/);
  });

  it('refuses a body that does not match: an error code the status does not list, a missing field', () => {
    expect(check(json(401, error('not_found')))).toMatch(/\/code enum/);
    expect(check(json(401, { success: false, error: 'x', code: 'unauthorized' }))).toMatch(/required .*request_id/);
    expect(check({ ...json(401, {}), body: 'not json' })).toMatch(/not JSON/);
  });

  it('never repeats the body values in its message (a body may carry secrets)', () => {
    const secret = 'CANARY-validator-s3cr3t';
    const problem = check(json(401, { success: false, error: secret, code: secret, request_id: 'r' }));
    expect(problem).toMatch(/enum/);
    expect(problem).not.toContain(secret);
  });

  it('leaves what no route answers to the gateway (unknown paths, other methods)', () => {
    expect(check(json(404, error('route_not_found'), 'GET', '/api/v1/no-such-thing'))).toBeNull();
    expect(check(json(405, error('method_not_allowed'), 'PATCH', '/api/v1/secrets'))).toBeNull();
  });
});
