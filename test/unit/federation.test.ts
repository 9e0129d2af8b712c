import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { clientSecretMatches } from '../../lib/federation/clients.js';
import { cacheSeconds } from '../../lib/federation/fetch.js';

const h = (s: string) => createHash('sha256').update(s).digest('hex');

describe('clientSecretMatches', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const stored = { secret_hash: h('new'), previous_secret_hash: h('old'), previous_secret_expires_at: '2026-01-01T01:00:00.000Z' };

  it('accepts the current secret, and the previous one only inside its grace period', () => {
    expect(clientSecretMatches(stored, 'new', now)).toBe(true);
    expect(clientSecretMatches(stored, 'old', now)).toBe(true);
    expect(clientSecretMatches(stored, 'old', new Date('2026-01-01T01:00:00Z'))).toBe(false);
    expect(clientSecretMatches(stored, 'other', now)).toBe(false);
    expect(clientSecretMatches({ ...stored, previous_secret_expires_at: null }, 'old', now)).toBe(false);
    expect(clientSecretMatches({ secret_hash: null, previous_secret_hash: null, previous_secret_expires_at: null }, '', now)).toBe(false);
  });
});

describe('cacheSeconds (JWK set URL caching)', () => {
  it('max-age, no-store, Expires, bounded to 60 s .. 1 day, default 1 h', () => {
    expect(cacheSeconds({ 'cache-control': 'public, max-age=600' })).toBe(600);
    expect(cacheSeconds({ 'cache-control': 'no-store' })).toBe(60);
    expect(cacheSeconds({ 'cache-control': 'max-age=9999999' })).toBe(86_400);
    expect(cacheSeconds({ expires: new Date(Date.UTC(2026, 0, 1, 0, 10)).toUTCString() }, Date.UTC(2026, 0, 1))).toBe(600);
    expect(cacheSeconds({})).toBe(3600);
  });
});
