import { beforeAll, describe, expect, it } from 'vitest';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { api, canary, errorCode, newAccount, type TestAccount } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';

/**
 * Passwords: GET /{id} checks access in the handler (passwords:read, or the creator in their
 * own sign-in session); POST /generate draws from node:crypto by policy and reports entropy. The CRUD
 * itself is covered with every collection in credentials.test.ts.
 */
let a: TestAccount;
let b: TestAccount;
let jwt: typeof import('../../lib/auth/jwt.js');

beforeAll(async () => {
  useRuntimeConfig();
  jwt = await import('../../lib/auth/jwt.js');
  [a, b] = await Promise.all([newAccount('pw-a'), newAccount('pw-b')]);
});

describe('GET /api/v1/passwords/{id}: the creator in their own session, or passwords:read', () => {
  it('the creator reads in their session without passwords:read, another user needs it, another account sees 404', async () => {
    const secret = canary('pw');
    const writer = await a.key(['passwords:write']); // issued by the account admin, who becomes the creator
    const made = await api('POST', '/api/v1/passwords', { key: writer, body: { name: 'mail', username: 'alice', password: secret } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.password.id;
    expect(made.body.data.password.created_by).toBe(a.adminEmail);
    const session = await jwt.issueAccessToken(a.tenantId, a.adminEmail, ['passwords:write']);
    const own = await api('GET', `/api/v1/passwords/${id}`, { key: session });
    expect(
      own.status,
      `GET /api/v1/passwords/{id} as its creator's own session without passwords:read: got ${own.status} ${own.body?.code ?? ''}`,
    ).toBe(200);
    expect(own.body.data.password.password).toBe(secret);

    const bob = await jwt.issueAccessToken(a.tenantId, 'bob@example.test', ['passwords:write']);
    const denied = await api('GET', `/api/v1/passwords/${id}`, { key: bob });
    expect(denied.status).toBe(403);
    expect(errorCode(denied)).toBe('insufficient_scope');
    expect(denied.text).not.toContain(secret);
    const bobsOwn = await api('POST', '/api/v1/passwords', { key: bob, body: { name: 'bob', password: canary('bob') } });
    expect(bobsOwn.body.data.password.created_by).toBe('bob@example.test');
    expect((await api('GET', `/api/v1/passwords/${bobsOwn.body.data.password.id}`, { key: bob })).status).toBe(200);

    const carol = await jwt.issueAccessToken(a.tenantId, 'carol@example.test', ['passwords:read']);
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: carol })).body.data.password.password).toBe(secret);
    const nobody = await jwt.issueAccessToken(a.tenantId, 'dave@example.test', ['secrets:read']);
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: nobody })).status).toBe(403);
    expect((await api('GET', `/api/v1/passwords/${id}`, { key: b.adminKey })).status).toBe(404);
    expect((await api('GET', '/api/v1/passwords/00000000-0000-7000-8000-000000000000', { key: nobody })).status).toBe(404);
  });

  it("a key the creator issued holds only its own scopes: without passwords:read it never reads the creator's password", async () => {
    const secret = canary('pw-key');
    const made = await api('POST', '/api/v1/passwords', { key: a.adminKey, body: { name: 'issuer-owned', password: secret } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.password.id;
    expect(made.body.data.password.created_by).toBe(a.adminEmail);
    for (const scopes of [['intelligence:read'], ['audit:read'], ['ldap:use'], ['passwords:write']]) {
      const key = await a.key(scopes);
      const res = await api('GET', `/api/v1/passwords/${id}`, { key });
      const who = `GET /api/v1/passwords/{id} as an API key [${scopes}] issued by the password's creator: got ${res.status} ${res.body?.code ?? ''}`;
      expect(res.status, who).toBe(403);
      expect(errorCode(res), who).toBe('insufficient_scope');
      expect(res.text).not.toContain(secret);
    }
    const session = await jwt.issueAccessToken(a.tenantId, a.adminEmail, ['audit:read']);
    const own = await api('GET', `/api/v1/passwords/${id}`, { key: session });
    expect(
      own.status,
      `GET /api/v1/passwords/{id} as its creator's own session without passwords:read: got ${own.status} ${own.body?.code ?? ''}`,
    ).toBe(200);
    expect(own.body.data.password.password).toBe(secret);
    const reader = await api('GET', `/api/v1/passwords/${id}`, { key: await a.key(['passwords:read']) });
    expect(reader.status, reader.text).toBe(200);
    expect(reader.body.data.password.password).toBe(secret);
  });
});

describe('POST /api/v1/passwords/generate', () => {
  const gen = async (body?: unknown) => api('POST', '/api/v1/passwords/generate', { key: await a.key(['passwords:write']), body });

  it('defaults to 20 characters of all four classes with their entropy', async () => {
    const res = await gen({});
    expect(res.status).toBe(200);
    const [p] = res.body.data.passwords;
    expect(p.password).toHaveLength(20);
    for (const re of [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/]) expect(p.password).toMatch(re);
    expect(p.entropy_bits).toBeGreaterThan(130);
    expect(p.entropy_bits).toBeLessThan(131.1);
    expect(p.strength).toBe('very-strong');
    expect((await gen()).status).toBe(200);
  });

  it('honours classes, exclusions and require_each_class; entropy counts exactly the allowed passwords', async () => {
    const res = await gen({ length: 8, classes: ['lowercase', 'digits'], exclude: 'abc', count: 20 });
    expect(res.status).toBe(200);
    const expected = Math.log2(33 ** 8 - 23 ** 8 - 10 ** 8);
    for (const p of res.body.data.passwords) {
      expect(p.password).toMatch(/^[d-z0-9]{8}$/);
      expect(p.password).toMatch(/\d/);
      expect(p.password).toMatch(/[a-z]/);
      expect(p.entropy_bits).toBeCloseTo(expected, 1);
      expect(p.strength).toBe('fair'); // 40.2 bits
    }
    expect(new Set(res.body.data.passwords.map((p: { password: string }) => p.password)).size).toBe(20);
    const noAmbiguous = await gen({ length: 64, exclude_ambiguous: true });
    expect(noAmbiguous.body.data.passwords[0].password).not.toMatch(/[Il1O0o|`'"]/);
    const digits = await gen({ length: 12, classes: ['digits'], require_each_class: false });
    expect(digits.body.data.passwords[0]).toMatchObject({ entropy_bits: 39.9, strength: 'weak' });
  });

  it('words mode: BIP-39 words, 11 bits each', async () => {
    const res = await gen({ mode: 'words', words: 6, separator: '.', capitalize: true, add_number: true });
    expect(res.status).toBe(200);
    const [p] = res.body.data.passwords;
    const parts = p.password.split('.');
    expect(parts).toHaveLength(7);
    for (const w of parts.slice(0, 6)) expect(wordlist).toContain(w.toLowerCase());
    expect(parts[6]).toMatch(/^\d{1,2}$/);
    expect(p.entropy_bits).toBeCloseTo(66 + Math.log2(100), 1);
  });

  it('400 on impossible or malformed policies; 403 without passwords:write', async () => {
    for (const body of [
      { classes: ['digits'], exclude: '0123456789' },
      { length: 3 },
      { length: 257 },
      { mode: 'emoji' },
      { classes: ['greek'] },
      { length: 12, colour: 'red' },
      { mode: 'words', words: 2 },
    ]) {
      expect((await gen(body)).status, JSON.stringify(body)).toBe(400);
    }
    const res = await api('POST', '/api/v1/passwords/generate', { key: await a.key(['passwords:read']), body: {} });
    expect(res.status).toBe(403);
  });
});
