import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { table } from './table.js';
import * as jwt from '../../lib/auth/jwt.js';
import { openJson } from '../../lib/crypto/envelope.js';

/**
 * lib/auth/jwt.ts against the suite's table: the access token's exact header and claims,
 * one signing key per account kept sealed, and every reason verification refuses a token
 * (each crafted with the account's real key, so only the named defect is wrong).
 */
let t: Awaited<ReturnType<typeof table>>;

beforeAll(async () => {
  t = await table();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function signingKeys(tenantId: string) {
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const out = await t.db().send(
    new QueryCommand({ TableName: t.tableName(), KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)', ExpressionAttributeValues: { ':p': `T#${tenantId}`, ':s': 'TOKENKEY#' }, ConsistentRead: true }),
  );
  return out.Items ?? [];
}

/** A token signed with the account's own key, with the header and claims given. */
async function craft(tenantId: string, header: Record<string, unknown>, claims: Record<string, unknown>, expiresIn: string | null = '5m') {
  const [item] = await signingKeys(tenantId);
  const priv = await openJson<JWK>({ tenantId, type: 'token_key', id: item!.kid as string, version: 1 }, item!.private as Uint8Array);
  let b = new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: item!.kid as string, typ: 'at+jwt', ...header } as never);
  if (expiresIn) b = b.setExpirationTime(expiresIn);
  return b.setIssuedAt().sign(await importJWK(priv, 'ES256'));
}
const good = (tenantId: string) => ({ tid: tenantId, scope: 'a b', iss: 'secrets-api', aud: 'secrets-api', sub: 'u@x', jti: randomUUID() });

describe('access tokens', () => {
  it('header and claims exactly: ES256, the key id, at+jwt; issuer, audience, subject, id, lifetime, account and scopes', async () => {
    const tenantId = await t.account();
    const before = Math.floor(Date.now() / 1000);
    const token = await jwt.issueAccessToken(tenantId, 'alice@unit.example', ['secrets:read', 'secrets:write'], 120);
    const [key] = await signingKeys(tenantId);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: key!.kid, typ: 'at+jwt' });
    const claims = decodeJwt(token);
    expect(claims).toEqual({
      tid: tenantId,
      scope: 'secrets:read secrets:write',
      iss: 'secrets-api',
      aud: 'secrets-api',
      sub: 'alice@unit.example',
      jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/),
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.exp! - claims.iat!).toBe(120);
    expect(jwt.TOKEN_ISSUER).toBe('secrets-api');
    expect(jwt.TOKEN_AUDIENCE).toBe('secrets-api');
    // the default lifetime: 15 minutes
    const d = decodeJwt(await jwt.issueAccessToken(tenantId, 'a', []));
    expect(d.exp! - d.iat!).toBe(900);
    expect(d.scope).toBe('');
  });

  it('one signing key per account, created once, its private half sealed, its public JWK stored as is', async () => {
    const tenantId = await t.account();
    await jwt.issueAccessToken(tenantId, 'a', ['x']);
    await jwt.issueAccessToken(tenantId, 'b', ['y']);
    const keys = await signingKeys(tenantId);
    expect(keys).toHaveLength(1);
    const [k] = keys;
    expect(k!.public).toMatchObject({ kty: 'EC', crv: 'P-256', kid: k!.kid, alg: 'ES256', use: 'sig' });
    expect(k!.public).not.toHaveProperty('d');
    expect(Buffer.from(k!.private as Uint8Array)[0]).toBe(1); // the sealed format byte
    const priv = await openJson<JWK>({ tenantId, type: 'token_key', id: k!.kid as string, version: 1 }, k!.private as Uint8Array);
    expect(priv).toMatchObject({ kty: 'EC', crv: 'P-256', x: (k!.public as JWK).x, d: expect.any(String) });
    // another account has its own key
    const other = await t.account();
    await jwt.issueAccessToken(other, 'c', []);
    expect((await signingKeys(other))[0]!.kid).not.toBe(k!.kid);
  });

  it('verification returns the account, subject, scopes and token id', async () => {
    const tenantId = await t.account();
    const token = await jwt.issueAccessToken(tenantId, 'bob@unit.example', ['a', 'b:c']);
    expect(await jwt.verifyAccessToken(token)).toEqual({ tenantId, subject: 'bob@unit.example', scopes: ['a', 'b:c'], tokenId: decodeJwt(token).jti });
    expect((await jwt.verifyAccessToken(await jwt.issueAccessToken(tenantId, 's', [])))!.scopes).toEqual([]);
    expect((await jwt.verifyAccessToken(await craft(tenantId, {}, { ...good(tenantId), scope: ' a  b ' })))!.scopes).toEqual(['a', 'b']);
  });

  it('lifetime: accepted up to 5 s past expiry (clock tolerance), refused after', async () => {
    const tenantId = await t.account();
    const token = await jwt.issueAccessToken(tenantId, 's', ['a'], 60);
    const exp = decodeJwt(token).exp! * 1000;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(exp + 4_000);
      expect(await jwt.verifyAccessToken(token)).toBeDefined();
      vi.setSystemTime(exp + 6_000);
      expect(await jwt.verifyAccessToken(token)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses: another issuer, audience or type; a missing exp, sub or jti; a scope that is not a string', async () => {
    const tenantId = await t.account();
    await jwt.issueAccessToken(tenantId, 's', []); // creates the account's signing key
    const base = good(tenantId);
    expect(await jwt.verifyAccessToken(await craft(tenantId, {}, base))).toBeDefined();
    const bad: [Record<string, unknown>, Record<string, unknown>, string | null][] = [
      [{}, { ...base, iss: 'other' }, '5m'],
      [{}, { ...base, aud: 'other' }, '5m'],
      [{ typ: 'JWT' }, base, '5m'],
      [{}, base, null],
      [{}, { ...base, sub: undefined }, '5m'],
      [{}, { ...base, jti: undefined }, '5m'],
      [{}, { ...base, scope: ['a'] }, '5m'],
      [{}, { ...base, scope: undefined }, '5m'],
    ];
    for (const [header, claims, exp] of bad) {
      expect(await jwt.verifyAccessToken(await craft(tenantId, header, claims, exp)), JSON.stringify([header, claims, exp])).toBeUndefined();
    }
  });

  it('refuses before any verification: another algorithm, a missing or non-string key id, a missing or non-UUID account', async () => {
    const tenantId = await t.account();
    await jwt.issueAccessToken(tenantId, 's', []);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const [k] = await signingKeys(tenantId);
    const forged = (header: unknown, claims: unknown) => `${b64(header)}.${b64(claims)}.${Buffer.alloc(64).toString('base64url')}`;
    const claims = good(tenantId);
    for (const [header, c] of [
      [{ alg: 'HS256', kid: k!.kid, typ: 'at+jwt' }, claims],
      [{ alg: 'none', kid: k!.kid }, claims],
      [{ alg: 'ES256', typ: 'at+jwt' }, claims],
      [{ alg: 'ES256', kid: 7, typ: 'at+jwt' }, claims],
      [{ alg: 'ES256', kid: k!.kid }, { ...claims, tid: undefined }],
      [{ alg: 'ES256', kid: k!.kid }, { ...claims, tid: 'not-a-uuid' }],
      [{ alg: 'ES256', kid: k!.kid }, { ...claims, tid: 42 }],
    ] as const) {
      expect(await jwt.verifyAccessToken(forged(header, c))).toBeUndefined();
    }
    expect(await jwt.verifyAccessToken('not.a.jwt')).toBeUndefined();
    expect(await jwt.verifyAccessToken('')).toBeUndefined();
  });

  it('a token refused on its header or account is refused without reading the table', async () => {
    const { intercept } = await import('./dynamo-faults.js');
    const tenantId = await t.account();
    await jwt.issueAccessToken(tenantId, 's', []);
    const [k] = await signingKeys(tenantId);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const reads: string[] = [];
    const undo = intercept(t.db(), (command, input) => {
      if (command === 'GetItemCommand' && String(input.Key?.sk).startsWith('TOKENKEY#')) reads.push(input.Key.sk as string);
      return undefined;
    });
    try {
      const claims = good(tenantId);
      for (const [header, c] of [
        [{ alg: 'HS256', kid: k!.kid }, claims],
        [{ alg: 'ES256', kid: 1 }, claims],
        [{ alg: 'ES256', kid: k!.kid }, { ...claims, tid: 5 }],
        [{ alg: 'ES256', kid: k!.kid }, { ...claims, tid: 'x' }],
      ] as const) {
        expect(await jwt.verifyAccessToken(`${b64(header)}.${b64(c)}.${Buffer.alloc(64).toString('base64url')}`)).toBeUndefined();
      }
      expect(reads).toEqual([]);
      // a well-formed one reads exactly its key
      expect(await jwt.verifyAccessToken(await jwt.issueAccessToken(tenantId, 's', []))).toBeDefined();
      expect(reads).toEqual([`TOKENKEY#${k!.kid}`]);
    } finally {
      undo();
    }
  });

  it('signs with the newest key of the account', async () => {
    const tenantId = await t.account();
    await jwt.issueAccessToken(tenantId, 's', []);
    const [old] = await signingKeys(tenantId);
    // a newer key (ids sort by time), as a rotation would add it
    const { exportJWK, generateKeyPair } = await import('jose');
    const { sealJson } = await import('../../lib/crypto/envelope.js');
    const { newId } = await import('../../lib/ids.js');
    const kid = newId();
    const pair = await generateKeyPair('ES256', { extractable: true });
    await t.put({
      pk: `T#${tenantId}`,
      sk: `TOKENKEY#${kid}`,
      kid,
      public: { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' },
      private: await sealJson({ tenantId, type: 'token_key', id: kid, version: 1 }, await exportJWK(pair.privateKey)),
      created_at: new Date().toISOString(),
    });
    expect(kid > (old!.kid as string)).toBe(true);
    const token = await jwt.issueAccessToken(tenantId, 's', ['a']);
    expect(decodeProtectedHeader(token).kid).toBe(kid);
    expect(await jwt.verifyAccessToken(token)).toMatchObject({ tenantId, scopes: ['a'] });
  });

  it('refuses a token naming a key the account does not have, or signed by another account', async () => {
    const a = await t.account();
    const b = await t.account();
    const tokenOfB = await jwt.issueAccessToken(b, 's', ['x']);
    // B's token re-labelled as A's: A has no key with B's kid
    const [h, , s] = tokenOfB.split('.') as [string, string, string];
    const relabelled = `${h}.${Buffer.from(JSON.stringify({ ...decodeJwt(tokenOfB), tid: a })).toString('base64url')}.${s}`;
    expect(await jwt.verifyAccessToken(relabelled)).toBeUndefined();
    // A's kid in the header of a token signed with B's key
    await jwt.issueAccessToken(a, 's', []);
    const [ka] = await signingKeys(a);
    const crossed = await craft(b, { kid: ka!.kid }, good(a));
    expect(await jwt.verifyAccessToken(crossed)).toBeUndefined();
    // a tampered payload
    const token = await jwt.issueAccessToken(a, 's', ['x']);
    const [h2, , s2] = token.split('.') as [string, string, string];
    const widened = `${h2}.${Buffer.from(JSON.stringify({ ...decodeJwt(token), scope: 'admin:*' })).toString('base64url')}.${s2}`;
    expect(await jwt.verifyAccessToken(widened)).toBeUndefined();
  });
});
