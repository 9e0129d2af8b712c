import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { table } from './table.js';
import * as auth from '../../lib/authn/authenticate.js';
import * as apiKeys from '../../lib/auth/api-keys.js';
import * as apiTokens from '../../lib/auth/api-tokens.js';
import * as jwt from '../../lib/auth/jwt.js';
import * as errors from '../../lib/core/errors.js';

/**
 * lib/authn/authenticate.ts against the suite's table: every malformed Authorization form,
 * each credential kind (API key, JWT, personal API token), expiry at its exact boundary,
 * suspension, the operator flag, and the route auth kinds.
 */

let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});

/** An API key's auth item, as account creation writes it. */
async function apiKey(tenantId: string, fields: { scopes?: string[]; expires_at?: string | null; created_by?: string | null } = {}) {
  const { key } = apiKeys.generateApiKey();
  const keyId = randomUUID();
  await t.put({
    pk: `KEY#${apiKeys.hashApiKey(key)}`,
    sk: 'KEY',
    tenant_id: tenantId,
    key_id: keyId,
    scopes: fields.scopes ?? ['secrets:read'],
    created_by: fields.created_by === undefined ? 'alice@unit.example' : fields.created_by,
    expires_at: fields.expires_at ?? null,
  });
  return { key, keyId };
}

/** The rejection as {status, code, message}, or 'resolved'. */
async function failure(p: Promise<unknown>) {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    if (!(error instanceof errors.HttpError)) throw error;
    return { status: error.status, code: error.code, message: error.message };
  }
}

const MALFORMED = { status: 401, code: 'unauthorized', message: 'malformed Authorization header: expected "Bearer <token>"' };
const INVALID = { status: 401, code: 'unauthorized', message: 'missing, invalid or expired credentials' };

describe('Authorization header parsing', () => {
  it('no credentials at all: 401 that says what to send', async () => {
    expect(await failure(auth.authenticateBearer({}))).toEqual({ status: 401, code: 'unauthorized', message: 'missing credentials: send Authorization: Bearer <API key>' });
    expect(await failure(auth.authenticateBearer({ authorization: undefined }))).toEqual({
      status: 401,
      code: 'unauthorized',
      message: 'missing credentials: send Authorization: Bearer <API key>',
    });
  });

  it('X-API-Key (any spelling, even empty) is refused as unsupported, not looked up', async () => {
    const message = 'the X-API-Key header is not accepted; send Authorization: Bearer <API key>';
    for (const headers of [{ 'x-api-key': 'scm_whatever' }, { 'X-Api-Key': 'k' }, { 'X-API-KEY': '' }]) {
      expect(await failure(auth.authenticateBearer(headers))).toEqual({ status: 401, code: 'unsupported_credentials', message });
    }
  });

  it('an empty Authorization header counts as none', async () => {
    expect(await failure(auth.authenticateBearer({ authorization: '' }))).toMatchObject({ message: 'missing credentials: send Authorization: Bearer <API key>' });
  });

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['the scheme alone', 'Bearer'],
    ['the scheme and a space', 'Bearer '],
    ['text before the scheme', 'xBearer scm_abcdefgh_0123456789'],
    ['a tab instead of the space', 'Bearer\tscm_abcdefgh_0123456789'],
    ['text after the token', 'Bearer scm_abcdefgh_0123456789 junk'],
    ['a token of 7 characters', 'Bearer 1234567'],
    ['a token of 4097 characters', `Bearer ${'a'.repeat(4097)}`],
    ['a non-ASCII character', 'Bearer scm_abcdefgh_01234é6789'],
    ['a control character', 'Bearer scm_abcdefgh\u0001_0123456789'],
    ['a comma-separated second credential', 'Bearer scm_abcdefgh_0123456789, Bearer other-token-1'],
  ])('%s is malformed (401 before any lookup)', async (_name, value) => {
    expect(await failure(auth.authenticateBearer({ Authorization: value }))).toEqual(MALFORMED);
  });

  it('the shortest and longest well-formed tokens reach the lookup (unknown: the generic 401 with WWW-Authenticate)', async () => {
    for (const token of ['12345678', 'a'.repeat(4096), '!~"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}']) {
      const result = await auth.authenticateBearer({ Authorization: `Bearer ${token}` }).catch((e: unknown) => e);
      expect(result).toBeInstanceOf(errors.HttpError);
      expect(result).toMatchObject({ ...INVALID, options: { headers: { 'WWW-Authenticate': 'Bearer' } } });
    }
  });

  it('surrounding whitespace of the header value is ignored; the header name and the scheme in any case (RFC 9110 §11.1); one or more spaces (RFC 6750 §2.1)', async () => {
    const tenantId = await t.account();
    const { key, keyId } = await apiKey(tenantId);
    for (const headers of [
      { Authorization: `  Bearer ${key}\t ` },
      { AUTHORIZATION: `Bearer ${key}` },
      { aUtHoRiZaTiOn: `Bearer ${key}` },
      { Authorization: `bearer ${key}` },
      { Authorization: `BEARER ${key}` },
      { Authorization: `bEaReR ${key}` },
      { Authorization: `Bearer   ${key}` },
    ]) {
      expect(await auth.authenticateBearer(headers)).toMatchObject({ kind: 'api_key', id: keyId, tenantId });
    }
  });

  it('only a whole token of JWT shape is verified as a JWT; anything else is looked up as an API key', async () => {
    const { intercept } = await import('./dynamo-faults.js');
    const keyReads: string[] = [];
    const undo = intercept(t.db(), (command, input) => {
      if (command === 'GetItemCommand' && String(input.Key?.pk).startsWith('KEY#')) keyReads.push(input.Key.pk as string);
      return undefined;
    });
    try {
      // JWT-like text inside a longer token (before it, after it): an API key lookup, by the hash of the whole token
      for (const token of ['xeyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl', 'eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl!']) {
        keyReads.length = 0;
        expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${token}` }))).toEqual(INVALID);
        expect(keyReads).toEqual([`KEY#${apiKeys.hashApiKey(token)}`]);
      }
      // a JWT-shaped token is never looked up as an API key
      keyReads.length = 0;
      expect(await failure(auth.authenticateBearer({ authorization: 'Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl' }))).toEqual(INVALID);
      expect(keyReads).toEqual([]);
    } finally {
      undo();
    }
  });

  it('header() finds a name in any case and returns undefined when absent', () => {
    expect(auth.header({ 'Content-Type': 'a', other: 'b' }, 'content-type')).toBe('a');
    expect(auth.header({ 'content-type': 'a' }, 'CONTENT-TYPE')).toBe('a');
    expect(auth.header({ 'content-typ': 'a' }, 'content-type')).toBeUndefined();
    expect(auth.header({}, 'x')).toBeUndefined();
  });
});

describe('API keys', () => {
  it('a valid key: the principal of its account with its scopes, creator and key id', async () => {
    const tenantId = await t.account();
    const { key, keyId } = await apiKey(tenantId, { scopes: ['secrets:read', 'secrets:write'], created_by: 'bob@unit.example' });
    const principal = await auth.authenticateBearer({ authorization: `Bearer ${key}` });
    expect(principal).toEqual({
      kind: 'api_key',
      tenantId,
      tenant: expect.objectContaining({ id: tenantId, status: 'active', operator: false }),
      id: keyId,
      user: 'bob@unit.example',
      scopes: ['secrets:read', 'secrets:write'],
      operator: false,
    });
  });

  it('a key whose hash is not stored, or one character off, is the generic 401', async () => {
    const tenantId = await t.account();
    const { key } = await apiKey(tenantId);
    const off = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${off}` }))).toEqual(INVALID);
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${apiKeys.generateApiKey().key}` }))).toEqual(INVALID);
  });

  it('expiry: valid up to the millisecond before expires_at, expired from that instant on', async () => {
    const tenantId = await t.account();
    const at = Date.parse('2030-01-01T00:00:00.000Z');
    const { key } = await apiKey(tenantId, { expires_at: new Date(at).toISOString() });
    const headers = { authorization: `Bearer ${key}` };
    expect(await auth.authenticateBearer(headers, at - 1)).toMatchObject({ kind: 'api_key', tenantId });
    const expired = { status: 401, code: 'credentials_expired', message: 'API key has expired' };
    expect(await failure(auth.authenticateBearer(headers, at))).toEqual(expired);
    expect(await failure(auth.authenticateBearer(headers, at + 1))).toEqual(expired);
    // the default clock is now: a key that expired in the past is refused without a clock argument
    const { key: old } = await apiKey(tenantId, { expires_at: '2020-01-01T00:00:00.000Z' });
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${old}` }))).toEqual(expired);
  });

  it('a key of a missing account is the generic 401; of a suspended one, 403 tenant_suspended', async () => {
    const { key: orphan } = await apiKey(randomUUID());
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${orphan}` }))).toEqual(INVALID);
    const suspended = await t.account({ status: 'suspended' });
    const { key } = await apiKey(suspended);
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${key}` }))).toEqual({ status: 403, code: 'tenant_suspended', message: 'account is suspended' });
  });

  it('operator: only an admin:* key of an operator account', async () => {
    const operatorAccount = await t.account({ operator: true });
    const plainAccount = await t.account();
    const cases: [string, string[], boolean][] = [
      [operatorAccount, ['admin:*'], true],
      [operatorAccount, ['secrets:read'], false],
      [plainAccount, ['admin:*'], false],
    ];
    for (const [tenantId, scopes, operator] of cases) {
      const { key } = await apiKey(tenantId, { scopes });
      expect((await auth.authenticateBearer({ authorization: `Bearer ${key}` })).operator).toBe(operator);
    }
  });

  it('onIdentified is told the account and key before the account is read', async () => {
    const tenantId = await t.account();
    const { key, keyId } = await apiKey(tenantId);
    const seen = vi.fn();
    await auth.authenticateBearer({ authorization: `Bearer ${key}` }, Date.now(), seen);
    expect(seen).toHaveBeenCalledTimes(1);
    expect(seen.mock.calls[0]![0]).toBe(tenantId);
    expect(seen.mock.calls[0]![1]).toBe(keyId);
    expect(await seen.mock.calls[0]![2]).toMatchObject({ id: tenantId });
  });
});

describe('JWT access tokens', () => {
  it('a token issued for the account: user_token principal with subject, scopes and token id', async () => {
    const tenantId = await t.account({ operator: true });
    const token = await jwt.issueAccessToken(tenantId, 'carol@unit.example', ['secrets:read', 'admin:*']);
    const seen = vi.fn();
    const principal = await auth.authenticateBearer({ authorization: `Bearer ${token}` }, Date.now(), seen);
    expect(principal).toMatchObject({ kind: 'user_token', tenantId, user: 'carol@unit.example', scopes: ['secrets:read', 'admin:*'], operator: true });
    expect(principal.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.mock.calls[0]!.slice(0, 2)).toEqual([tenantId, principal.id]);
    const plain = await jwt.issueAccessToken(tenantId, 'dave@unit.example', ['secrets:read']);
    expect((await auth.authenticateBearer({ authorization: `Bearer ${plain}` })).operator).toBe(false);
  });

  it('a tampered or foreign token is the generic 401; a suspended account 403', async () => {
    const tenantId = await t.account();
    const token = await jwt.issueAccessToken(tenantId, 'erin@unit.example', ['secrets:read']);
    const [h, p, s] = token.split('.') as [string, string, string];
    const tampered = `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`;
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${tampered}` }))).toEqual(INVALID);
    const suspended = await t.account({ status: 'suspended' });
    const other = await jwt.issueAccessToken(suspended, 'frank@unit.example', ['secrets:read']);
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${other}` }))).toEqual({ status: 403, code: 'tenant_suspended', message: 'account is suspended' });
    // a JWT-shaped token of an account that no longer exists: the signing key is gone with it
    const gone = await t.account();
    const orphan = await jwt.issueAccessToken(gone, 'gina@unit.example', ['secrets:read']);
    await t.remove({ pk: `T#${gone}`, sk: 'TENANT' });
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${orphan}` }))).toEqual(INVALID);
  });
});

describe('personal API tokens', () => {
  async function apiToken(tenantId: string, fields: { expires_at: string; valid_until?: string; scopes?: string[] }) {
    const { token } = apiTokens.generateApiToken();
    const tokenId = randomUUID();
    await t.put({
      pk: `APITOKEN#${apiTokens.hashApiToken(token)}`,
      sk: 'APITOKEN',
      tenant_id: tenantId,
      token_id: tokenId,
      scopes: fields.scopes ?? ['admin:*'],
      created_by: 'hank@unit.example',
      expires_at: fields.expires_at,
      ...(fields.valid_until ? { valid_until: fields.valid_until } : {}),
    });
    return { token, tokenId };
  }

  it('an api_token principal, never an operator (even admin:* on an operator account)', async () => {
    const tenantId = await t.account({ operator: true });
    const { token, tokenId } = await apiToken(tenantId, { expires_at: '2099-01-01T00:00:00.000Z' });
    const seen = vi.fn();
    expect(await auth.authenticateBearer({ authorization: `Bearer ${token}` }, Date.now(), seen)).toEqual({
      kind: 'api_token',
      tenantId,
      tenant: expect.objectContaining({ id: tenantId }),
      id: tokenId,
      user: 'hank@unit.example',
      scopes: ['admin:*'],
      operator: false,
    });
    expect(seen.mock.calls[0]!.slice(0, 2)).toEqual([tenantId, tokenId]);
  });

  it('expired at its instant; after a rotation valid until the grace period ends', async () => {
    const tenantId = await t.account();
    const at = Date.parse('2031-06-01T00:00:00.000Z');
    const { token } = await apiToken(tenantId, { expires_at: new Date(at).toISOString() });
    expect(await auth.authenticateBearer({ authorization: `Bearer ${token}` }, at - 1)).toMatchObject({ kind: 'api_token' });
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${token}` }, at))).toEqual({ status: 401, code: 'credentials_expired', message: 'API token has expired' });
    const grace = Date.parse('2030-06-01T00:00:00.000Z');
    const { token: rotated } = await apiToken(tenantId, { expires_at: '2099-01-01T00:00:00.000Z', valid_until: new Date(grace).toISOString() });
    expect(await auth.authenticateBearer({ authorization: `Bearer ${rotated}` }, grace - 1)).toMatchObject({ kind: 'api_token' });
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${rotated}` }, grace))).toEqual({
      status: 401,
      code: 'credentials_expired',
      message: 'API token was rotated: use the new token',
    });
    // an unknown token of the right shape
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${apiTokens.generateApiToken().token}` }))).toEqual(INVALID);
    // the default clock
    const { token: old } = await apiToken(tenantId, { expires_at: '2020-01-01T00:00:00.000Z' });
    expect(await failure(apiTokens.authenticateApiToken(old))).toMatchObject({ code: 'credentials_expired' });
  });

  it('a suspended account: 403', async () => {
    const tenantId = await t.account({ status: 'suspended' });
    const { token } = await apiToken(tenantId, { expires_at: '2099-01-01T00:00:00.000Z' });
    expect(await failure(auth.authenticateBearer({ authorization: `Bearer ${token}` }))).toMatchObject({ status: 403, code: 'tenant_suspended' });
  });
});

describe('authenticate() by route auth kind', () => {
  const route = (kind: string) => ({ auth: kind }) as never;

  it('public, endpoint and temp-token routes authenticate themselves: null, whatever the headers', async () => {
    for (const kind of ['public', 'endpoint', 'temp-token']) {
      expect(await auth.authenticate(route(kind), { authorization: 'garbage' })).toBeNull();
    }
  });

  it('bearer: the credential; operator: only an operator credential', async () => {
    const operatorAccount = await t.account({ operator: true });
    const { key: admin, keyId } = await apiKey(operatorAccount, { scopes: ['admin:*'] });
    const { key: reader } = await apiKey(operatorAccount, { scopes: ['secrets:read'] });
    expect(await auth.authenticate(route('bearer'), { authorization: `Bearer ${reader}` })).toMatchObject({ kind: 'api_key', operator: false });
    expect(await auth.authenticate(route('operator'), { authorization: `Bearer ${admin}` })).toMatchObject({ id: keyId, operator: true });
    expect(await failure(auth.authenticate(route('operator'), { authorization: `Bearer ${reader}` }))).toEqual({
      status: 403,
      code: 'operator_required',
      message: 'platform operator credentials required',
    });
    expect(await failure(auth.authenticate(route('operator'), {}))).toMatchObject({ status: 401 });
    const seen = vi.fn();
    await auth.authenticate(route('bearer'), { authorization: `Bearer ${reader}` }, undefined, seen);
    await auth.authenticate(route('operator'), { authorization: `Bearer ${admin}` }, undefined, seen);
    expect(seen).toHaveBeenCalledTimes(2);
  });

  it('device: both signature headers and the whole event are needed', async () => {
    const missing = { status: 401, code: 'unauthorized', message: 'missing request signature (Signature and Signature-Input headers, RFC 9421)' };
    expect(await failure(auth.authenticate(route('device'), {}))).toEqual(missing);
    expect(await failure(auth.authenticate(route('device'), { signature: 'sig1=:AA==:' }))).toEqual(missing);
    expect(await failure(auth.authenticate(route('device'), { 'signature-input': 'sig1=()' }))).toEqual(missing);
    expect(await failure(auth.authenticate(route('device'), { Signature: 'sig1=:AA==:', 'Signature-Input': 'sig1=()' }))).toEqual({
      status: 401,
      code: 'unauthorized',
      message: 'a signed device request needs the whole request',
    });
    // with the event, the signature itself is verified (here: it covers nothing, so it is refused)
    const event = { httpMethod: 'GET', path: '/api/v1/agent/identity', headers: { signature: 'sig1=:AA==:', 'signature-input': 'sig1=();created=1' }, body: null } as never;
    expect(await failure(auth.authenticate(route('device'), { signature: 'sig1=:AA==:', 'signature-input': 'sig1=();created=1' }, event))).toMatchObject({
      status: 401,
      code: 'invalid_signature',
    });
  });
});
