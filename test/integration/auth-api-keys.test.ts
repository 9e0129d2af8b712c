import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_KEY_RE, generateApiKey, hashApiKey, publicPrefix, sameHash } from '../../lib/auth/api-keys.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import { API_TOKEN_RE, apiTokenAuthDelete, apiTokenAuthGrace, apiTokenAuthPut, generateApiToken, hashApiToken } from '../../lib/auth/api-tokens.js';

/** lib/auth/api-keys.ts and the pure parts of lib/auth/api-tokens.ts: formats, entropy, hashing. */
describe('API key format', () => {
  it('scm_<8 base32 lower-case>_<43 base64url>; the prefix is scm_ and the 8 characters', () => {
    for (let i = 0; i < 200; i++) {
      const { key, prefix } = generateApiKey();
      expect(key).toMatch(/^scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
      expect(API_KEY_RE.test(key)).toBe(true);
      expect(prefix).toBe(key.slice(0, 12));
      expect(key[12]).toBe('_');
      // 43 base64url characters are exactly the 32 random bytes
      expect(Buffer.from(key.slice(13), 'base64url')).toHaveLength(32);
    }
  });

  it('keys and prefixes are random: no repeats, and every base32 letter and digit occurs in prefixes', () => {
    const keys = Array.from({ length: 500 }, () => generateApiKey());
    expect(new Set(keys.map((k) => k.key)).size).toBe(500);
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(500);
    const seen = new Set(keys.flatMap((k) => [...k.prefix.slice(4)]));
    expect([...seen].sort().join('')).toBe('234567abcdefghijklmnopqrstuvwxyz');
  });

  it('the format regex is anchored and exact', () => {
    const { key } = generateApiKey();
    expect(API_KEY_RE.test(`x${key}`)).toBe(false);
    expect(API_KEY_RE.test(`${key}x`)).toBe(false);
    expect(API_KEY_RE.test(key.slice(0, -1))).toBe(false);
    expect(API_KEY_RE.test(key.replace('scm_', 'scp_'))).toBe(false);
    expect(API_KEY_RE.test(`scm_ABCDEFGH_${key.slice(13)}`)).toBe(false);
    expect(API_KEY_RE.test(`scm_abcdefg1_${key.slice(13)}`)).toBe(false);
    expect(API_KEY_RE.test(`scm_abcdefgh_${'+'.repeat(43)}`)).toBe(false);
  });

  it('hash: hex SHA-256 of the whole key as UTF-8', () => {
    expect(hashApiKey('scm_abcdefgh_x')).toBe(createHash('sha256').update('scm_abcdefgh_x').digest('hex'));
    // UTF-8, not Latin-1 or UTF-16: the digest of the bytes c3 a9
    expect(hashApiKey('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
    expect(hashApiKey('a')).toBe('ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb');
  });

  it('publicPrefix: the prefix of a well-formed key (as generateApiKey gives it), "custom" for anything else', () => {
    const { key, prefix } = generateApiKey();
    expect(publicPrefix(key)).toBe(prefix);
    expect(publicPrefix('my-own-root-key-0123456789')).toBe('custom');
    expect(publicPrefix(`${key}x`)).toBe('custom');
  });

  it('sameHash compares hex digests in constant time: equal, different, different lengths', () => {
    const a = hashApiKey('a');
    expect(sameHash(a, a)).toBe(true);
    expect(sameHash(a, hashApiKey('b'))).toBe(false);
    expect(sameHash(a, a.slice(0, 62))).toBe(false);
    expect(sameHash('', '')).toBe(true);
  });
});

describe('personal API token format and auth items', () => {
  it('scp_<8>_<43>, prefix scp_<8>, hashed like API keys', () => {
    const { token, prefix } = generateApiToken();
    expect(token).toMatch(/^scp_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/);
    expect(API_TOKEN_RE.test(token)).toBe(true);
    expect(API_KEY_RE.test(token)).toBe(false);
    expect(prefix).toBe(token.slice(0, 12));
    expect(hashApiToken(token)).toBe(hashApiKey(token));
    expect(API_TOKEN_RE.test(`${token}x`)).toBe(false);
    expect(API_TOKEN_RE.test(`x${token}`)).toBe(false);
  });

  it('auth item put: conditional on a new key, with a TTL one day after expiry (epoch seconds)', () => {
    useRuntimeConfig();
    const item = apiTokenAuthPut('h1', { tenant_id: 't', token_id: 'i', scopes: ['a'], created_by: null, expires_at: '2030-01-01T00:00:00.000Z' });
    const expires = Date.parse('2030-01-01T00:00:00.000Z') / 1000;
    expect(item.Put).toMatchObject({
      Item: { pk: 'APITOKEN#h1', sk: 'APITOKEN', tenant_id: 't', token_id: 'i', scopes: ['a'], created_by: null, ttl: expires + 86_400 },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(apiTokenAuthDelete('h2').Delete).toMatchObject({ Key: { pk: 'APITOKEN#h2', sk: 'APITOKEN' } });
    const grace = apiTokenAuthGrace('h3', '2030-02-01T00:00:00.000Z').Update!;
    expect(grace).toMatchObject({
      Key: { pk: 'APITOKEN#h3', sk: 'APITOKEN' },
      UpdateExpression: 'SET valid_until = :u, #ttl = :ttl',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':u': '2030-02-01T00:00:00.000Z', ':ttl': Date.parse('2030-02-01T00:00:00.000Z') / 1000 + 86_400 },
    });
  });
});
