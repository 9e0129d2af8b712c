import { createHash, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { generateDeviceKey, signRequest, type DeviceKey } from '../../scripts/agent-client.js';
import * as ds from '../../lib/agents/device-signature.js';
import { HttpError } from '../../lib/core/errors.js';
import { table } from './table.js';

/**
 * lib/agents/device-signature.ts: every refusal of the RFC 9421 / RFC 9530 checks with its
 * sentence, the window and nonce bounds exactly, what a request's signed form is taken from,
 * and the whole authentication against the suite's table (device key, nonce claim,
 * account and profile).
 */
const sha = (s: string | Buffer, alg = 'sha256') => createHash(alg).update(s).digest('base64');
function req(headers: Record<string, string | string[]>, fields: Partial<ds.SignedRequest> = {}): ds.SignedRequest {
  return {
    method: 'POST',
    paths: ['/api/v1/agent/access/db'],
    queries: ['?'],
    headers: new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v : [v]])),
    body: Buffer.from('{}'),
    ...fields,
  };
}
function refusal(f: () => unknown): { status: number; code: string; message: string } | 'passed' {
  try {
    f();
    return 'passed';
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}
const invalid = (message: string) => ({ status: 401, code: 'invalid_signature', message });
const digest = `sha-256=:${sha('{}')}:`;
const FULL = '("@method" "@path" "@query" "content-digest")';

describe('parseSignature', () => {
  const parse = (input: string, sig = 'sig1=:AAAA:') => refusal(() => ds.parseSignature(req({ 'signature-input': input, signature: sig })));

  it('both headers are needed', () => {
    expect(refusal(() => ds.parseSignature(req({ signature: 'sig1=:AA==:' })))).toEqual({ status: 401, code: 'unauthorized', message: 'missing request signature: send Signature-Input and Signature (RFC 9421)' });
    expect(refusal(() => ds.parseSignature(req({ 'signature-input': 'sig1=()' })))).toMatchObject({ code: 'unauthorized' });
  });

  it('each malformed form with its sentence', () => {
    expect(parse('garbage((')).toEqual(invalid('Signature-Input or Signature is not a valid structured field dictionary'));
    expect(parse('sig1=();created=1', 'not a dict((')).toEqual(invalid('Signature-Input or Signature is not a valid structured field dictionary'));
    expect(parse('sig1=:AAAA:')).toEqual(invalid('the Signature-Input member must be an inner list of components'));
    expect(parse('sig1=();created=1', 'sig2=:AAAA:')).toEqual(invalid('Signature has no byte sequence labelled "sig1"'));
    expect(parse('sig1=();created=1', 'sig1=("x")')).toEqual(invalid('Signature has no byte sequence labelled "sig1"'));
    expect(parse('sig1=();created=1', 'sig1="text"')).toEqual(invalid('Signature has no byte sequence labelled "sig1"'));
    expect(parse('sig1=(1);created=1')).toEqual(invalid('component identifiers must be strings'));
    expect(parse('sig1=("@method";req);created=1')).toEqual(invalid('component parameters are not supported ("@method")'));
    expect(parse('sig1=("Content-Digest");created=1')).toEqual(invalid('component names must be lower case ("Content-Digest")'));
    expect(parse('sig1=("@path" "@path");created=1')).toEqual(invalid('component "@path" is listed twice'));
    expect(parse('sig1=("@target-uri");created=1')).toEqual(invalid('derived component "@target-uri" is not supported'));
    expect(parse('sig1=("@method")')).toEqual(invalid('signature parameter "created" is required'));
    expect(parse('sig1=("@method");created=1.5')).toEqual(invalid('signature parameter "created" must be an integer'));
    expect(parse('sig1=("@method");created="1"')).toEqual(invalid('signature parameter "created" must be an integer'));
    expect(parse('sig1=("@method");created=1;expires=?1')).toEqual(invalid('signature parameter "expires" must be an integer'));
    expect(parse('sig1=("@method");created=1;nonce=5')).toEqual(invalid('signature parameter "nonce" must be a string'));
    expect(parse('sig1=("@method");created=1;keyid=:AA==:')).toEqual(invalid('signature parameter "keyid" must be a string'));
    expect(parse('sig1=("@method");created=1;alg=ed25519')).toEqual(invalid('signature parameter "alg" must be a string'));
  });

  it('the first member is the one verified; every derived component allowed, and plain fields', () => {
    const parsed = ds.parseSignature(
      req({
        'signature-input': 'first=("@method" "@path" "@query" "@authority" "content-digest" "x-extra");created=10;expires=20;nonce="n";keyid="k";alg="ed25519", second=("@method");created=1',
        signature: 'second=:AAAA:, first=:AQID:',
      }),
    );
    expect(parsed).toEqual({
      label: 'first',
      components: ['@method', '@path', '@query', '@authority', 'content-digest', 'x-extra'],
      created: 10,
      expires: 20,
      nonce: 'n',
      keyid: 'k',
      alg: 'ed25519',
      signature: Buffer.from([1, 2, 3]),
      paramsValue: '("@method" "@path" "@query" "@authority" "content-digest" "x-extra");created=10;expires=20;nonce="n";keyid="k";alg="ed25519"',
    });
    const bare = ds.parseSignature(req({ 'signature-input': 'a=();created=1', signature: 'a=::' }));
    expect(bare).toMatchObject({ components: [], expires: undefined, nonce: undefined, keyid: undefined, alg: undefined });
    // several header lines of one field are one list
    const split = ds.parseSignature(req({ 'signature-input': ['a=("@method");created=3', 'b=()'], signature: ['b=:AA==:', ' a=:AQ==: '] }));
    expect(split).toMatchObject({ label: 'a', created: 3, signature: Buffer.from([1]) });
  });

  it('an empty dictionary has no signature', () => {
    expect(refusal(() => ds.parseSignature(req({ 'signature-input': ' ', signature: 'a=:AA==:' })))).toEqual({ status: 401, code: 'unauthorized', message: 'missing request signature: send Signature-Input and Signature (RFC 9421)' });
  });
});

describe('signatureBase', () => {
  const parsed = (components: string[]) => ({ ...ds.parseSignature(req({ 'signature-input': `s=(${components.map((c) => `"${c}"`).join(' ')});created=1`, signature: 's=:AA==:' })) });
  it('each component value: method upper-cased, the candidate path, the canonical query, the host lower-cased, fields trimmed and joined', () => {
    const r = req({ host: 'API.Example.COM', 'x-multi': ['  a ', 'b  '], 'content-digest': digest }, { method: 'post', queries: ['?a=1'] });
    expect(ds.signatureBase(r, parsed(['@method', '@path', '@query', '@authority', 'x-multi', 'content-digest']), '/p')).toBe(
      ['"@method": POST', '"@path": /p', '"@query": ?a=1', '"@authority": api.example.com', '"x-multi": a, b', `"content-digest": ${digest}`, '"@signature-params": ("@method" "@path" "@query" "@authority" "x-multi" "content-digest");created=1'].join('\n'),
    );
  });
  it('a covered component missing from the request, or with a line break, is refused', () => {
    expect(refusal(() => ds.signatureBase(req({}), parsed(['x-absent']), '/p'))).toEqual(invalid('covered component "x-absent" is not in the request'));
    expect(refusal(() => ds.signatureBase(req({}), parsed(['@authority']), '/p'))).toEqual(invalid('covered component "@authority" is not in the request'));
    expect(refusal(() => ds.signatureBase(req({ 'x-empty': [] }), parsed(['x-empty']), '/p'))).toEqual(invalid('covered component "x-empty" is not in the request'));
    expect(refusal(() => ds.signatureBase(req({ 'x-a': 'one\ntwo' }), parsed(['x-a']), '/p'))).toEqual(invalid('covered component "x-a" contains a line break'));
    expect(refusal(() => ds.signatureBase(req({ 'x-a': 'one\rtwo' }), parsed(['x-a']), '/p'))).toEqual(invalid('covered component "x-a" contains a line break'));
  });
});

describe('checkContentDigest', () => {
  const check = (value: string | undefined, body = '{}') => refusal(() => ds.checkContentDigest(req(value === undefined ? {} : { 'content-digest': value }, { body: Buffer.from(body) })));
  it('sha-256 or sha-512 of the body; every known algorithm listed must match; unknown ones are skipped', () => {
    expect(check(digest)).toBe('passed');
    expect(check(`sha-512=:${sha('{}', 'sha512')}:`)).toBe('passed');
    expect(check(`md5=:AAAA:, ${digest}`)).toBe('passed');
    expect(check(`${digest}, sha-512=:${sha('{}', 'sha512')}:`)).toBe('passed');
    expect(check(`sha-256=:${sha('')}:`, '')).toBe('passed');
    expect(check(`${digest}, sha-512=:${sha('other', 'sha512')}:`)).toEqual(invalid('Content-Digest does not match the request body'));
    expect(check(`sha-256=:${sha('{}!')}:`)).toEqual(invalid('Content-Digest does not match the request body'));
    expect(check(`sha-256=:${Buffer.from(createHash('sha256').update('{}').digest().subarray(0, 31)).toString('base64')}:`)).toEqual(invalid('Content-Digest does not match the request body'));
  });
  it('missing, malformed, not a byte sequence, or no known algorithm', () => {
    expect(check(undefined)).toEqual(invalid('missing Content-Digest header (RFC 9530, sha-256 of the body)'));
    expect(check('((')).toEqual(invalid('Content-Digest is not a valid structured field dictionary'));
    expect(check('sha-256="abc"')).toEqual(invalid('Content-Digest sha-256 must be a byte sequence'));
    expect(check('sha-512=(:AA==:)')).toEqual(invalid('Content-Digest sha-512 must be a byte sequence'));
    expect(check('md5=:AAAA:')).toEqual(invalid('Content-Digest must carry sha-256 (or sha-512)'));
  });
});

describe('checkSignatureShape', () => {
  const NOW = 1_700_000_000;
  const shape = (params: string, components = FULL, now = NOW, headers: Record<string, string> = { 'content-digest': digest }) => {
    const r = req({ ...headers, 'signature-input': `s=${components}${params}`, signature: 's=:AA==:' });
    return refusal(() => ds.checkSignatureShape(r, ds.parseSignature(r), now));
  };
  const ok = `;created=${NOW};nonce="${'n'.repeat(16)}";keyid="k"`;
  it('the four components, keyid and nonce are required', () => {
    expect(shape(ok)).toBe('passed');
    expect(shape(ok, '("@method" "@path")')).toEqual(invalid('the signature must cover "@query", "content-digest"'));
    expect(shape(ok, '("content-digest" "@query" "@path")')).toEqual(invalid('the signature must cover "@method"'));
    expect(shape(`;created=${NOW};nonce="${'n'.repeat(16)}"`)).toEqual(invalid('signature parameter "keyid" (the device id) is required'));
    expect(shape(`;created=${NOW};keyid="k"`)).toEqual(invalid('signature parameter "nonce" is required'));
  });
  it('created: up to 60 s old and 10 s ahead, both bounds included', () => {
    const at = (created: number) => shape(`;created=${created};nonce="${'n'.repeat(16)}";keyid="k"`);
    expect(at(NOW - 60)).toBe('passed');
    expect(at(NOW - 61)).toEqual(invalid('signature is older than 60 s: sign each request when sending it'));
    expect(at(NOW + 10)).toBe('passed');
    expect(at(NOW + 11)).toEqual(invalid('signature "created" is in the future: check the device clock'));
    expect(ds.SIGNATURE_MAX_AGE_SECONDS).toBe(60);
    expect(ds.SIGNATURE_CLOCK_SKEW_SECONDS).toBe(10);
  });
  it('expires, when present, must be in the future', () => {
    expect(shape(`${ok};expires=${NOW + 1}`)).toBe('passed');
    expect(shape(`${ok};expires=${NOW}`)).toEqual(invalid('signature has expired'));
  });
  it('nonce: 16 to 128 characters of A-Z a-z 0-9 _ -', () => {
    const nonce = (n: string) => shape(`;created=${NOW};nonce="${n}";keyid="k"`);
    const message = invalid('signature "nonce" must be 16-128 characters of A-Z a-z 0-9 _ -');
    expect(nonce('aZ09_-'.repeat(3).slice(0, 16))).toBe('passed');
    expect(nonce('n'.repeat(128))).toBe('passed');
    expect(nonce('n'.repeat(15))).toEqual(message);
    expect(nonce('n'.repeat(129))).toEqual(message);
    expect(nonce(`${'n'.repeat(16)}.`)).toEqual(message);
    expect(nonce(`.${'n'.repeat(16)}`)).toEqual(message);
  });
  it('and the Content-Digest', () => {
    expect(shape(ok, FULL, NOW, {})).toEqual(invalid('missing Content-Digest header (RFC 9530, sha-256 of the body)'));
  });
});

describe('verification with a key', () => {
  it('a signature verifies for its algorithm only, over one of the candidate paths; 64-byte signatures only', async () => {
    for (const algorithm of ['ed25519', 'ecdsa-p256-sha256'] as const) {
      const key = generateDeviceKey(algorithm);
      const { headers } = signRequest({ method: 'POST', url: 'http://h/prod/api/v1/x', body: '{}', keyId: 'k', key, created: 1, nonce: 'n'.repeat(16) });
      const r = req(headers, { paths: ['/api/v1/x', '/prod/api/v1/x'] });
      const parsed = ds.parseSignature(r);
      const jwk = key.publicJwk as never;
      expect(ds.signatureVerifies(r, parsed, jwk, algorithm)).toBe(true);
      expect(ds.signatureVerifies({ ...r, paths: ['/api/v1/x'] }, parsed, jwk, algorithm)).toBe(false);
      const other = algorithm === 'ed25519' ? 'ecdsa-p256-sha256' : 'ed25519';
      expect(ds.signatureVerifies(r, parsed, jwk, other)).toBe(false);
      expect(ds.signatureVerifies(r, { ...parsed, alg: undefined }, jwk, algorithm)).toBe(true);
      const base = ds.signatureBase(r, parsed, '/prod/api/v1/x');
      expect(ds.verifyBytes(jwk, algorithm, base, parsed.signature)).toBe(true);
      expect(ds.verifyBytes(jwk, algorithm, base, Buffer.concat([parsed.signature, Buffer.alloc(1)]))).toBe(false);
      expect(ds.verifyBytes(jwk, algorithm, base, parsed.signature.subarray(0, 63))).toBe(false);
      expect(ds.verifyBytes(jwk, algorithm, `${base} `, parsed.signature)).toBe(false);
    }
  });
});

describe('the signed form of a proxy event', () => {
  const ev = (fields: Partial<APIGatewayProxyEvent>) => ({ httpMethod: 'POST', path: '/a', headers: {}, body: null, isBase64Encoded: false, ...fields }) as APIGatewayProxyEvent;
  it('headers: multi-value when present (names case-insensitive, merged), else single', () => {
    const multi = ds.signedRequestOf(ev({ multiValueHeaders: { 'X-A': ['1', '2'], 'x-a': ['3'], Empty: undefined as never }, headers: { ignored: 'x' } }));
    expect([...multi.headers]).toEqual([
      ['x-a', ['1', '2', '3']],
      ['empty', []],
    ]);
    const single = ds.signedRequestOf(ev({ multiValueHeaders: {}, headers: { 'Content-Digest': 'd', Gone: undefined } }));
    expect([...single.headers]).toEqual([
      ['content-digest', ['d']],
      ['gone', []],
    ]);
  });
  it('query: multi-value or single parameters, as received first; paths without and with the stage; the body as bytes', () => {
    const r = ds.signedRequestOf(
      ev({ multiValueQueryStringParameters: { b: ['2', '1'], a: ['x y'] }, queryStringParameters: { ignored: '1' }, path: '/api/v1/x', requestContext: { path: '/prod/api/v1/x' } as never, body: 'AAEC', isBase64Encoded: true }),
    );
    expect(r).toMatchObject({ method: 'POST', paths: ['/api/v1/x', '/prod/api/v1/x'], body: Buffer.from([0, 1, 2]) });
    expect(r.queries).toEqual(['?b=2&b=1&a=x%20y', '?b=2&b=1&a=x+y', '?a=x%20y&b=2&b=1', '?a=x+y&b=2&b=1']);
    const s = ds.signedRequestOf(ev({ queryStringParameters: { q: "it's", none: undefined }, path: '/same', requestContext: { path: '/same' } as never, body: 'é' }));
    expect(s).toMatchObject({ paths: ['/same'], body: Buffer.from('é', 'utf8') });
    expect(s.queries).toEqual(['?q=it%27s', "?q=it's"]);
    expect(ds.signedRequestOf(ev({ path: '', requestContext: undefined as never })).paths).toEqual([]);
    expect(ds.signedRequestOf(ev({})).body.length).toBe(0);
    expect(ds.signedRequestOf(ev({})).queries).toEqual(['?']);
  });
  it('query candidates: the client order and encodings of common clients, sorted too, empty values with and without "="', () => {
    expect(ds.queryCandidates(null)).toEqual(['?']);
    expect(ds.queryCandidates({ z: ['a/b c', "it's"], a: ['~!*'] })).toEqual([
      // as received: RFC 3986, encodeURIComponent, WHATWG URL, form
      '?z=a%2Fb%20c&z=it%27s&a=~%21%2A',
      "?z=a%2Fb%20c&z=it's&a=~!*",
      '?z=a/b%20c&z=it%27s&a=~!*',
      '?z=a%2Fb+c&z=it%27s&a=%7E%21*',
      // sorted by name
      '?a=~%21%2A&z=a%2Fb%20c&z=it%27s',
      "?a=~!*&z=a%2Fb%20c&z=it's",
      '?a=~!*&z=a/b%20c&z=it%27s',
      '?a=%7E%21*&z=a%2Fb+c&z=it%27s',
    ]);
    expect(ds.queryCandidates({ flag: [''], b: ['1'] })).toEqual(expect.arrayContaining(['?flag=&b=1', '?flag&b=1', '?b=1&flag', '?b=1&flag=']));
    // "&", "=", "#" and "%" stay encoded in every form, so no candidate changes the parameters
    for (const q of ds.queryCandidates({ 'a&b': ['c=d#e%f'] })) expect(new URLSearchParams(q.slice(1)).get('a&b')).toBe('c=d#e%f');
  });
  it('RFC 3986 encoding of the characters encodeURIComponent leaves', () => {
    expect(ds.encodeQueryPart("!'()*~-._a1 ")).toBe('%21%27%28%29%2A~-._a1%20');
    expect(ds.canonicalQuery({ z: [], a: ['1', '0'] })).toBe('?a=1&a=0');
    expect(ds.canonicalQuery(undefined)).toBe('?');
  });
  it('a signature 401 tells the client what to sign', () => {
    const e = ds.signatureError('m');
    expect(e).toMatchObject({ status: 401, code: 'invalid_signature', message: 'm' });
    expect(e.options.headers).toEqual({ 'Accept-Signature': 'sig1=("@method" "@path" "@query" "content-digest");created;nonce;keyid' });
    expect(ds.REQUIRED_COMPONENTS).toEqual(['@method', '@path', '@query', 'content-digest']);
  });
});

describe('authenticateSignedRequest (the table)', () => {
  let t: Awaited<ReturnType<typeof table>>;
  beforeAll(async () => {
    t = await table();
  });

  async function device(fields: { status?: 'active' | 'suspended'; enabled?: boolean | null; algorithm?: DeviceKey['algorithm'] } = {}) {
    const tenantId = await t.account({ status: fields.status ?? 'active' });
    const key = generateDeviceKey(fields.algorithm ?? 'ed25519');
    const deviceId = randomUUID();
    const profileId = randomUUID();
    await t.put({ pk: `DEVICE#${deviceId}`, sk: 'DEVICE', device_id: deviceId, tenant_id: tenantId, name: 'd', profile_id: profileId, algorithm: key.algorithm, public_key: key.publicJwk });
    if (fields.enabled !== null) await t.put({ pk: `T#${tenantId}`, sk: `AGENTPROFILE#${profileId}`, id: profileId, name: 'p', enabled: fields.enabled ?? true, grants: [], version: 1 });
    return { tenantId, deviceId, profileId, key };
  }
  function signed(d: { deviceId: string; key: DeviceKey }, opts: { created?: number; nonce?: string; body?: string } = {}): APIGatewayProxyEvent {
    const body = opts.body ?? '{"a":1}';
    const { headers } = signRequest({ method: 'POST', url: 'http://h/api/v1/agent/access/db?x=1', body, keyId: d.deviceId, key: d.key, created: opts.created, nonce: opts.nonce });
    return { httpMethod: 'POST', path: '/api/v1/agent/access/db', headers, queryStringParameters: { x: '1' }, body, isBase64Encoded: false, requestContext: {} } as never;
  }
  async function failure(p: Promise<unknown>) {
    try {
      await p;
      return 'resolved';
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      return { status: error.status, code: error.code, message: error.message };
    }
  }

  it('a verified request: the device principal, its session, onIdentified, and the nonce kept for the window', async () => {
    for (const algorithm of ['ed25519', 'ecdsa-p256-sha256'] as const) {
      const d = await device({ algorithm });
      const seen = vi.fn();
      const now = Date.now();
      const nonce = `nonce-${randomUUID()}`;
      const principal = await ds.authenticateSignedRequest(signed(d, { nonce, created: Math.floor(now / 1000) - 5 }), now, seen);
      expect(principal).toEqual({ kind: 'device', tenantId: d.tenantId, tenant: expect.objectContaining({ id: d.tenantId }), id: d.deviceId, user: null, scopes: [], operator: false });
      expect(ds.deviceSession(principal)).toMatchObject({ device: { device_id: d.deviceId, profile_id: d.profileId, algorithm }, profile: { id: d.profileId, enabled: true } });
      expect(seen.mock.calls[0]!.slice(0, 2)).toEqual([d.tenantId, d.deviceId]);
      expect(await seen.mock.calls[0]![2]).toMatchObject({ id: d.tenantId });
      const claim = await t.get({ pk: `NONCE#${d.deviceId}#${nonce}`, sk: 'NONCE' });
      expect(claim).toMatchObject({ ttl: Math.floor(now / 1000) + 70 });
    }
  });

  it('a nonce is good once; a created in the near future keeps it longer', async () => {
    const d = await device();
    const now = Date.now();
    const nonce = `n-${randomUUID()}`;
    const ahead = Math.floor(now / 1000) + 8;
    await ds.authenticateSignedRequest(signed(d, { nonce, created: ahead }), now);
    expect(await t.get({ pk: `NONCE#${d.deviceId}#${nonce}`, sk: 'NONCE' })).toMatchObject({ ttl: ahead + 70 });
    expect(await failure(ds.authenticateSignedRequest(signed(d, { nonce, created: ahead }), now))).toEqual(invalid('nonce already used: every request needs a fresh nonce'));
  });

  it('unknown, non-UUID or revoked device ids and bad signatures are 401; a signature failure claims no nonce', async () => {
    const d = await device();
    const unknown = { status: 401, code: 'unauthorized', message: 'unknown or revoked device key' };
    expect(await failure(ds.authenticateSignedRequest(signed({ ...d, deviceId: randomUUID() })))).toEqual(unknown);
    expect(await failure(ds.authenticateSignedRequest(signed({ ...d, deviceId: 'not-a-uuid' })))).toEqual(unknown);
    const other = generateDeviceKey('ed25519');
    const nonce = `n-${randomUUID()}`;
    expect(await failure(ds.authenticateSignedRequest(signed({ ...d, key: other }, { nonce })))).toEqual(invalid('signature does not verify'));
    expect(await t.get({ pk: `NONCE#${d.deviceId}#${nonce}`, sk: 'NONCE' })).toBeUndefined();
    // shape checks come before any read
    const stale = signed(d, { created: Math.floor(Date.now() / 1000) - 3600 });
    expect(await failure(ds.authenticateSignedRequest(stale))).toMatchObject({ code: 'invalid_signature', message: expect.stringMatching(/older than 60 s/) });
  });

  it('the account must exist and be active, the profile exist and be enabled', async () => {
    const suspended = await device({ status: 'suspended' });
    expect(await failure(ds.authenticateSignedRequest(signed(suspended)))).toEqual({ status: 403, code: 'tenant_suspended', message: 'account is suspended' });
    const disabled = await device({ enabled: false });
    const profileDisabled = { status: 403, code: 'profile_disabled', message: "the device's agent profile is disabled" };
    expect(await failure(ds.authenticateSignedRequest(signed(disabled)))).toEqual(profileDisabled);
    const noProfile = await device({ enabled: null });
    expect(await failure(ds.authenticateSignedRequest(signed(noProfile)))).toEqual(profileDisabled);
    const orphan = await device();
    await t.remove({ pk: `T#${orphan.tenantId}`, sk: 'TENANT' });
    expect(await failure(ds.authenticateSignedRequest(signed(orphan)))).toEqual({ status: 401, code: 'unauthorized', message: 'unknown or revoked device key' });
  });

  it('deviceSession of a principal that no device authentication made', () => {
    expect(() => ds.deviceSession({ kind: 'api_key' } as never)).toThrow('not a device principal');
  });
});
