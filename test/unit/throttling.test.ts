import { App } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { describe, expect, it } from 'vitest';
import { readSettings } from '../../infra/settings.js';
import { ACCOUNT_QUOTA, DEFAULT_THROTTLING, encodeResourcePath, methodSettings, routeGroup, routeLimits } from '../../infra/throttling.js';
import { ROUTES, type Route } from '../../lib/routes.js';
import { fileDirectory } from '../helpers/scratch.js';

/**
 * infra/throttling.ts: route groups from the route table, their defaults and overrides, and
 * the stage MethodSettings they become (CloudFormation's `~1` path encoding).
 */
const route = (key: string): Route => {
  const r = ROUTES.find((x) => x.key === key);
  if (!r) throw new Error(`no route ${key}`);
  return r;
};
const common = { loggingLevel: apigw.MethodLoggingLevel.ERROR, metricsEnabled: false, dataTraceEnabled: false };
// an App without an outdir makes a cdk.out* directory of its own in the system's temporary
// directory, and this file makes 14: `npm run test:unit` left them behind
const outdir = fileDirectory('throttling-cdk-');
const settingsOf = (context: Record<string, unknown>) => readSettings(new App({ context, outdir }).node);
const decode = (resourcePath: string) => (resourcePath === '/' ? '/' : resourcePath.slice(1).replaceAll('~1', '/'));

describe('route groups', () => {
  it('groups routes by what the route table says about them', () => {
    expect(routeGroup(route('GET /health'))).toBe('public');
    expect(routeGroup(route('POST /webhooks/{payment_provider}'))).toBe('public'); // endpoint: no credential
    expect(routeGroup(route('GET /api/v1/t/{token}'))).toBe('public'); // temp-token
    expect(routeGroup(route('POST /api/v1/crypto/sign'))).toBe('signing');
    expect(routeGroup(route('POST /api/v1/code-signing-keys'))).toBe('signing'); // may generate in the HSM
    expect(routeGroup(route('GET /api/v1/secrets'))).toBe('default');
    expect(routeGroup(route('GET /api/v1/crypto/backends'))).toBe('default'); // only describes (hsm:describe)
    expect(routeGroup({ auth: 'bearer', grants: ['kms:sign'] } as unknown as Route)).toBe('signing');
    const device = ROUTES.filter((r) => r.auth === 'device');
    expect(device.length).toBeGreaterThan(0);
    for (const r of device) expect(routeGroup(r), r.key).toBe('default');
  });

  it('defaults: one route may use the account quota; unauthenticated and signing routes 1,000/500', () => {
    expect(ACCOUNT_QUOTA).toEqual({ rate: 10_000, burst: 5_000 });
    expect(DEFAULT_THROTTLING.groups).toEqual({ default: { rate: 10_000, burst: 5_000 }, public: { rate: 1_000, burst: 500 }, signing: { rate: 1_000, burst: 500 } });
    const limits = routeLimits(ROUTES, DEFAULT_THROTTLING);
    expect(limits.size).toBe(ROUTES.length);
    for (const r of ROUTES) {
      const l = limits.get(r.key)!;
      const expected = r.grants.includes('hsm') || ['public', 'endpoint', 'temp-token'].includes(r.auth) ? { rate: 1_000, burst: 500 } : ACCOUNT_QUOTA;
      expect({ rate: l.rate, burst: l.burst }, r.key).toEqual(expected);
    }
  });
});

describe('stage MethodSettings', () => {
  it('encodes resource paths as CloudFormation wants them', () => {
    expect(encodeResourcePath('/')).toBe('/');
    expect(encodeResourcePath('/health')).toBe('/~1health');
    expect(encodeResourcePath('/api/v1/secrets/{name}')).toBe('/~1api~1v1~1secrets~1{name}');
    expect(() => encodeResourcePath('api/v1')).toThrow(/not a resource path/);
  });

  it('one stage-wide entry with the default group, one per route that differs, each repeating logging settings', () => {
    const entries = methodSettings(ROUTES, DEFAULT_THROTTLING, common);
    expect(entries[0]).toEqual({ resourcePath: '/*', httpMethod: '*', ...common, throttlingRateLimit: 10_000, throttlingBurstLimit: 5_000 });
    const differing = ROUTES.filter((r) => routeGroup(r) !== 'default');
    expect(entries).toHaveLength(1 + differing.length);
    const keys = entries.slice(1).map((e) => `${e.httpMethod} ${decode(e.resourcePath as string)}`);
    expect(keys.sort()).toEqual(differing.map((r) => r.key).sort());
    for (const e of entries) {
      expect(e).toMatchObject(common);
      if (e.resourcePath !== '/*') expect({ rate: e.throttlingRateLimit, burst: e.throttlingBurstLimit }).toEqual({ rate: 1_000, burst: 500 });
    }
    expect(entries.find((e) => e.httpMethod === 'GET' && e.resourcePath === '/')).toBeDefined(); // GET / is public
  });

  it('context overrides groups and single routes; a route back at the default needs no entry', () => {
    const s = settingsOf({
      throttleRate: '5000',
      throttleBurst: '2500',
      throttlePublicRate: '50',
      throttleSigningBurst: '20',
      throttleRoutes: JSON.stringify({ 'POST /api/v1/crypto/sign': { rate: 200, burst: 100 }, 'GET /health': { rate: 5000, burst: 2500 }, 'GET /api/v1/secrets': { rate: 7, burst: 3 } }),
    });
    expect(s.throttling.groups).toEqual({ default: { rate: 5000, burst: 2500 }, public: { rate: 50, burst: 500 }, signing: { rate: 1000, burst: 20 } });
    const entries = methodSettings(ROUTES, s.throttling, common);
    const at = (method: string, path: string) => entries.find((e) => e.httpMethod === method && e.resourcePath === encodeResourcePath(path));
    expect(entries[0]).toMatchObject({ throttlingRateLimit: 5000, throttlingBurstLimit: 2500 });
    expect(at('POST', '/api/v1/crypto/sign')).toMatchObject({ throttlingRateLimit: 200, throttlingBurstLimit: 100 });
    expect(at('POST', '/api/v1/code-signing-keys')).toMatchObject({ throttlingRateLimit: 1000, throttlingBurstLimit: 20 });
    expect(at('GET', '/healthz')).toMatchObject({ throttlingRateLimit: 50, throttlingBurstLimit: 500 });
    expect(at('GET', '/health')).toBeUndefined();
    expect(at('GET', '/api/v1/secrets')).toMatchObject({ throttlingRateLimit: 7, throttlingBurstLimit: 3 });
    // an object in cdk.json works as well as JSON text on the command line
    expect(settingsOf({ throttleRoutes: { 'GET /health': { rate: 1, burst: 0 } } }).throttling.routes).toEqual({ 'GET /health': { rate: 1, burst: 0 } });
  });

  it('refuses malformed overrides and routes the table does not have', () => {
    expect(() => settingsOf({ throttleRoutes: '{not json' })).toThrow(/throttleRoutes" must be JSON/);
    expect(() => settingsOf({ throttleRoutes: '[1]' })).toThrow(/must be an object/);
    expect(() => settingsOf({ throttleRoutes: { 'GET /health': { rate: 0, burst: 1 } } })).toThrow(/"GET \/health" needs integer rate/);
    expect(() => settingsOf({ throttleRoutes: { 'GET /health': { rate: 1.5, burst: 1 } } })).toThrow(/needs integer rate/);
    expect(() => settingsOf({ throttlePublicRate: '0' })).toThrow(/throttlePublicRate/);
    const s = settingsOf({ throttleRoutes: { 'GET /nowhere': { rate: 1, burst: 1 } } });
    expect(() => methodSettings(ROUTES, s.throttling, common)).toThrow('context "throttleRoutes" names routes that do not exist: GET /nowhere');
  });
});

describe('the X-Ray sampling settings (the stage rule of infra/api-stack.ts)', () => {
  it('default to one request a second, then 1 %, and take a context override', () => {
    expect(settingsOf({})).toMatchObject({ xraySampleRate: 0.01, xrayReservoir: 1 });
    expect(settingsOf({ xraySampleRate: '0.05', xrayReservoir: 0 })).toMatchObject({ xraySampleRate: 0.05, xrayReservoir: 0 });
    expect(settingsOf({ xraySampleRate: 1 })).toMatchObject({ xraySampleRate: 1 });
  });

  it('refuse a rate outside 0..1 (a percentage given as a number) and a reservoir that is not a count', () => {
    expect(() => settingsOf({ xraySampleRate: 5 })).toThrow(/"xraySampleRate" must be a number in 0..1 \(0.01 is 1 %\)/);
    expect(() => settingsOf({ xraySampleRate: 'often' })).toThrow(/"xraySampleRate" must be a number in 0..1/);
    expect(() => settingsOf({ xrayReservoir: -1 })).toThrow(/"xrayReservoir" must be an integer/);
  });
});
