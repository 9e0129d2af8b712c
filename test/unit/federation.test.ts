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

describe('validateJwkSet (RFC 7517/7518 checks)', async () => {
  const { generateKeyPairSync } = await import('node:crypto');
  const { validateJwkSet } = await import('../../lib/federation/jwk.js');
  const rsa = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }), kid: 'r' };
  const ec = { ...generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' }), kid: 'e' };
  const ed = { ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: 'd' };
  const issue = (key: unknown) => validateJwkSet({ keys: [key] }).issues.map((i) => `${i.path}: ${i.message}`);

  it('keeps the public members of valid RSA, EC and OKP keys, dropping unknown members', () => {
    const out = validateJwkSet({ keys: [{ ...rsa, alg: 'PS256', use: 'sig', extra: 1 }, { ...ec, alg: 'ES384' }, { ...ed, alg: 'EdDSA' }] });
    expect(out.issues).toEqual([]);
    expect(out.keys.map((k) => k.kid)).toEqual(['r', 'e', 'd']);
    expect(out.keys[0]).not.toHaveProperty('extra');
  });

  it('names the member at fault', () => {
    expect(validateJwkSet(null).issues[0]!.path).toBe('body.jwks');
    expect(validateJwkSet({ keys: 'x' }).issues[0]!.path).toBe('body.jwks');
    expect(issue('x')[0]).toContain('a JWK is a JSON object');
    expect(issue([])[0]).toContain('a JWK is a JSON object');
    expect(issue({ ...rsa, kid: 7 })[0]).toContain('.kid: kid must be');
    expect(issue({ ...rsa, kid: '' })[0]).toContain('.kid: kid must be');
    expect(issue({ ...rsa, use: 'enc' })[0]).toContain('.use:');
    expect(issue({ ...rsa, n: 'not base64url!' })[0]).toContain('.n: must be base64url');
    expect(issue({ ...rsa, e: 5 })[0]).toContain('.e: must be base64url');
    expect(issue({ ...rsa, n: 'AQAB' })[0]).toMatch(/\.n: RSA keys must have at least 2048 bits|not a valid RSA key/);
    expect(issue({ ...rsa, alg: 'ES256' })[0]).toContain('.alg: alg of an RSA key');
    expect(issue({ ...rsa, alg: 5 })[0]).toContain('.alg: alg must be a string');
    expect(issue({ ...ec, alg: 'ES256' })[0]).toContain('.alg: alg of a P-384 key must be ES384');
    expect(issue({ ...generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({ format: 'jwk' }), kid: 'k' })[0]).toContain('.crv:');
    expect(issue({ ...generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }), kid: 'x' })[0]).toContain('.crv:');
    expect(issue({ ...ed, alg: 'RS256' })[0]).toContain('.alg: alg of an OKP key');
    expect(issue({ kty: 'RSA', kid: 'n' })[0]).toContain('not a valid RSA key');
    expect(validateJwkSet({ keys: Array(101).fill(rsa) }).issues[0]!.message).toBe('1 to 100 keys');
  });
});

describe('SAML XML reading (lib/federation/saml-xml.ts)', async () => {
  const { locateAssertion, parseMetadata, xmlText } = await import('../../lib/federation/saml-xml.js');
  const A = 'urn:oasis:names:tc:SAML:2.0:assertion';
  const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
  const DS = 'http://www.w3.org/2000/09/xmldsig#';
  const reason = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      const e = error as { code: string; options: { details?: { message: string }[] } };
      return `${e.code}: ${e.options.details?.[0]?.message}`;
    }
    return 'accepted';
  };

  it('takes XML or base64 of XML, nothing else, within the size limit', () => {
    expect(xmlText(' <a/>', 'p')).toBe(' <a/>');
    expect(xmlText(Buffer.from('<a/>').toString('base64'), 'p')).toBe('<a/>');
    expect(reason(() => xmlText('%%%', 'p'))).toBe('invalid_xml: neither XML nor base64 of XML');
    expect(reason(() => xmlText(Buffer.from('hello').toString('base64'), 'p'))).toBe('invalid_xml: the base64 does not decode to XML');
    expect(reason(() => xmlText(`<a>${'x'.repeat(256 * 1024)}</a>`, 'p'))).toContain('exceeds');
  });

  it('metadata: endpoints need Binding and Location; KeyDescriptor use is signing or encryption', () => {
    const md = (inner: string) => `<md:EntityDescriptor xmlns:md="${MD}" xmlns:ds="${DS}" entityID="e"><md:SPSSODescriptor>${inner}</md:SPSSODescriptor></md:EntityDescriptor>`;
    expect(parseMetadata(md('<md:AssertionConsumerService Binding="b" Location="l"/>')).endpoints).toEqual([{ role: 'sp', kind: 'AssertionConsumerService', binding: 'b', location: 'l' }]);
    expect(reason(() => parseMetadata(md('<md:AssertionConsumerService Binding="b"/>')))).toContain('lacks Binding or Location');
    expect(reason(() => parseMetadata(md('<md:KeyDescriptor use="other"/>')))).toContain('signing or encryption');
    expect(parseMetadata(md('<md:KeyDescriptor use="encryption"><ds:KeyInfo/></md:KeyDescriptor>')).certificates).toEqual([]);
    expect(parseMetadata(md('')).valid_until).toBeNull();
  });

  it('assertions: the structural XSW checks', () => {
    const assertion = (attrs: string, inner: string) => `<saml:Assertion xmlns:saml="${A}" xmlns:ds="${DS}" ${attrs}>${inner}</saml:Assertion>`;
    const sig = '<ds:Signature/>';
    expect(reason(() => locateAssertion(assertion('', `<saml:Issuer>i</saml:Issuer>${sig}`)))).toContain('has no ID');
    expect(reason(() => locateAssertion(assertion('ID="a"', `<saml:Issuer>i</saml:Issuer>${sig}${sig}`)))).toContain('several signatures');
    expect(reason(() => locateAssertion(assertion('ID="a"', sig)))).toContain('no Issuer');
    expect(reason(() => locateAssertion(`<x:Wrap xmlns:x="urn:x">${assertion('ID="a"', `<saml:Issuer>i</saml:Issuer>${sig}`)}</x:Wrap>`))).toContain('root or a direct child');
    expect(reason(() => locateAssertion(`<saml:EncryptedAssertion xmlns:saml="${A}"/>`))).toContain('encrypted assertions');
    expect(locateAssertion(assertion('ID="a"', `<saml:Issuer> i </saml:Issuer>${sig}`)).issuer).toBe('i');
  });
});
