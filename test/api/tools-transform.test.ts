import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, errorCode, newAccount, type TestAccount } from '../helpers/api.js';

/**
 * Transforms through HTTP, each checked against another implementation (Node's Buffer
 * codecs, node:crypto reading the PEM, jose signing the JWT), and secret detection over
 * inputs shaped like the real tokens of each rule.
 */
let acct: TestAccount;
let key: string;
const post = (what: string, body: unknown, k = key) => api('POST', `/api/v1/transform/${what}`, { key: k, body });

beforeAll(async () => {
  acct = await newAccount('tools-transform');
  key = await acct.key(['transform:use']);
});

describe('encode and decode', () => {
  const bytes = randomBytes(40);
  const expected: Record<string, string> = {
    base64: bytes.toString('base64'),
    base64url: bytes.toString('base64url'),
    hex: bytes.toString('hex'),
  };

  it.each(Object.entries(expected))('%s agrees with Node and round-trips', async (format, out) => {
    const enc = await post('encode', { format, input_base64: bytes.toString('base64') });
    expect(enc.status, enc.text).toBe(200);
    expect(enc.body.data.output).toBe(out);
    const dec = await post('decode', { format, input: out });
    expect(dec.body.data).toMatchObject({ output_base64: bytes.toString('base64'), bytes: 40, output: null });
  });

  it('base32 (RFC 4648 §10 vectors), URL and quoted-printable text', async () => {
    expect((await post('encode', { format: 'base32', input: 'foobar' })).body.data.output).toBe('MZXW6YTBOI======');
    expect((await post('decode', { format: 'base32', input: 'mzxw6ytboi======' })).body.data.output).toBe('foobar');
    const url = await post('encode', { format: 'url', input: 'a b&c=d/é~' });
    expect(url.body.data.output).toBe(encodeURIComponent('a b&c=d/é~').replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
    expect((await post('decode', { format: 'url', input: 'a%20b+c%C3%A9' })).body.data.output).toBe('a b cé');
    const qp = await post('encode', { format: 'quoted-printable', input: `caf\u00e9 = ${'x'.repeat(100)}` });
    expect(qp.body.data.output).toContain('caf=C3=A9 =3D');
    expect(qp.body.data.output.split('\r\n').every((l: string) => l.length <= 76)).toBe(true);
    expect((await post('decode', { format: 'quoted-printable', input: qp.body.data.output })).body.data.output).toBe(
      `caf\u00e9 = ${'x'.repeat(100)}`,
    );
  });

  it('PEM <-> DER: node:crypto reads the PEM it makes, and the DER comes back', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const pem = await post('encode', { format: 'pem', label: 'PUBLIC KEY', input_base64: der.toString('base64') });
    expect(createPublicKey(pem.body.data.output).export({ type: 'spki', format: 'der' }).equals(der)).toBe(true);
    const back = await post('decode', { format: 'pem', input: publicKey.export({ type: 'spki', format: 'pem' }) as string });
    expect(back.body.data).toMatchObject({ label: 'PUBLIC KEY', output_base64: der.toString('base64') });
  });

  it('decodes a JWT without verifying it, and says so', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwt = await new SignJWT({ sub: 'alice', scope: 'read' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
    const res = await post('decode', { format: 'jwt', input: jwt });
    expect(res.body.data).toMatchObject({ header: { alg: 'ES256', kid: 'k1' }, payload: { sub: 'alice' }, verified: false, signature_present: true });
    expect(res.body.data.warning).toContain('NOT VERIFIED');
    const jwe = await post('decode', { format: 'jwt', input: `${Buffer.from('{"alg":"dir","enc":"A256GCM"}').toString('base64url')}....` });
    expect(jwe.body.data).toMatchObject({ encrypted: true, payload: null });
  });

  it('400 with what is wrong', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['decode', { format: 'hex', input: 'abc' }, 'not valid hex'],
      ['decode', { format: 'base64', input: '@@@@' }, 'not valid base64'],
      ['decode', { format: 'url', input: '%zz' }, 'two hex digits'],
      ['decode', { format: 'pem', input: '-----BEGIN A-----\nAAAA\n-----END B-----' }, 'RFC 7468'],
      ['decode', { format: 'quoted-printable', input: 'a=zz' }, '=XX'],
      ['decode', { format: 'jwt', input: 'a.b' }, 'three dot-separated'],
      ['decode', { format: 'jwt', input: 'bm90.anNvbg.x' }, 'not base64url JSON'],
      ['encode', { format: 'jwt', input: '{}' }, 'decode-only'],
      ['encode', { format: 'hex', input: 'x', label: 'CERTIFICATE' }, 'pem only'],
    ];
    for (const [what, body, message] of cases) {
      const res = await post(what, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toContain(message);
    }
    for (const body of [{ format: 'rot13', input: 'x' }, { format: 'hex' }, { format: 'hex', input: 'x', input_base64: 'AA==' }]) {
      expect(errorCode(await post('encode', body))).toBe('validation_failed');
    }
    expect(errorCode(await post('detect', {}))).toBe('validation_failed');
  });

  it('401 and 403', async () => {
    expect((await post('encode', { format: 'hex', input: 'x' }, '')).status).toBe(401);
    const other = await acct.key(['secrets:read']);
    for (const what of ['encode', 'decode', 'detect'])
      expect(errorCode(await post(what, { format: 'hex', input: 'aa' }, other))).toBe('insufficient_scope');
  });
});

describe('detect', () => {
  const fake = (prefix: string, n: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') =>
    prefix + Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join('');

  it('names the formats of an input', async () => {
    const names = async (input: string) => ((await post('detect', { input })).body.data.formats as { format: string }[]).map((f) => f.format);
    expect(await names('48656c6c6f')).toEqual(expect.arrayContaining(['hex']));
    expect(await names(Buffer.from('hello world!').toString('base64'))).toContain('base64');
    expect(await names('MZXW6YTBOI======')).toContain('base32');
    expect(await names(randomBytes(30).toString('base64url').replace(/^./, '-'))).toContain('base64url');
    expect(await names('a%20b%2Fc')).toContain('url');
    expect(await names('caf=C3=A9 au lait')).toContain('quoted-printable');
    expect(await names('{"a": 1}')).toContain('json');
    const { publicKey } = generateKeyPairSync('ed25519');
    const pem = await post('detect', { input: publicKey.export({ type: 'spki', format: 'pem' }) as string });
    expect(pem.body.data.formats[0]).toMatchObject({ format: 'pem', detail: { label: 'PUBLIC KEY', der_bytes: 44 } });
    const jwt = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.c2ln`;
    expect(await names(jwt)).toContain('jwt');
  });

  it('flags likely secrets by rule, with a redacted preview and never the secret', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const tokens: Record<string, string> = {
      'private-key': privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
      'aws-access-key-id': fake('AKIA', 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'),
      'github-pat': fake('ghp_', 36),
      'github-fine-grained-pat': fake('github_pat_', 82),
      'slack-token': fake('xoxb-1234567890-', 24),
      'stripe-key': fake('sk_live_', 24),
      'google-api-key': fake('AIza', 35),
      'gitlab-pat': fake('glpat-', 20),
      'npm-token': fake('npm_', 36),
    };
    const awsSecret = fake('', 40);
    const input = `${Object.entries(tokens)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n')}\naws_secret_access_key = ${awsSecret}\nrandom=${randomBytes(24).toString('base64')}\nplain words here and there\n`;
    const res = await post('detect', { input });
    expect(res.status).toBe(200);
    const rules = (res.body.data.findings as { rule: string }[]).map((f) => f.rule);
    for (const rule of [...Object.keys(tokens), 'aws-secret-access-key', 'high-entropy-string']) expect(rules, rule).toContain(rule);
    for (const v of [...Object.values(tokens), awsSecret]) expect(res.text).not.toContain(v.trim().split('\n')[1] ?? v);
    const aws = res.body.data.findings.find((f: { rule: string }) => f.rule === 'aws-access-key-id');
    expect(input.slice(aws.start, aws.end)).toBe(tokens['aws-access-key-id']);
    expect(aws.preview).toBe('AKIA…(20 characters)');
    const clean = await post('detect', { input: 'just an ordinary sentence with nothing secret in it' });
    expect(clean.body.data.findings).toEqual([]);
  });
});
