import { describe, expect, it } from 'vitest';
import { canonicalQuery as clientQuery, generateDeviceKey, signRequest } from '../../scripts/agent-client.js';
import {
  canonicalQuery,
  checkContentDigest,
  checkSignatureShape,
  parseSignature,
  signatureBase,
  signatureVerifies,
  type SignedRequest,
} from '../../lib/agents/device-signature.js';
import { parseDevicePublicKey } from '../../lib/crypto/device-public-key.js';

/**
 * The signature scheme against the standard's own test vector (RFC 9421 Appendix B.2.6,
 * the B.2 test request, test-key-ed25519 of B.1.4) and the client helper against the
 * verifier.
 */
const RFC_ED25519_PUBLIC = { kty: 'OKP', crv: 'Ed25519', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs' } as const;
const RFC_BODY = '{"hello": "world"}';

function request(headers: Record<string, string>, opts: Partial<SignedRequest> = {}): SignedRequest {
  return {
    method: 'POST',
    paths: ['/foo'],
    queries: ['?param=Value&Pet=dog'],
    headers: new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), [v]])),
    body: Buffer.from(RFC_BODY),
    ...opts,
  };
}

const rfcHeaders = {
  Host: 'example.com',
  Date: 'Tue, 20 Apr 2021 02:07:55 GMT',
  'Content-Type': 'application/json',
  'Content-Digest': 'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:',
  'Content-Length': '18',
  'Signature-Input': 'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
  Signature: 'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:',
};

describe('RFC 9421 B.2.6 (ed25519)', () => {
  it('builds the RFC signature base and verifies the RFC signature', () => {
    const req = request(rfcHeaders);
    const parsed = parseSignature(req);
    expect(parsed).toMatchObject({ label: 'sig-b26', created: 1618884473, keyid: 'test-key-ed25519' });
    expect(signatureBase(req, parsed, '/foo')).toBe(
      [
        '"date": Tue, 20 Apr 2021 02:07:55 GMT',
        '"@method": POST',
        '"@path": /foo',
        '"@authority": example.com',
        '"content-type": application/json',
        '"content-length": 18',
        '"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
      ].join('\n'),
    );
    expect(signatureVerifies(req, parsed, RFC_ED25519_PUBLIC, 'ed25519')).toBe(true);
    // any covered component changed: no longer verifies
    expect(signatureVerifies(request({ ...rfcHeaders, Date: 'Tue, 20 Apr 2021 02:07:56 GMT' }), parsed, RFC_ED25519_PUBLIC, 'ed25519')).toBe(false);
    expect(signatureVerifies(request(rfcHeaders, { paths: ['/bar'] }), parsed, RFC_ED25519_PUBLIC, 'ed25519')).toBe(false);
  });

  it('checks the RFC 9530 sha-512 Content-Digest of the B.2 body against the body', () => {
    expect(() => checkContentDigest(request(rfcHeaders))).not.toThrow();
    expect(() => checkContentDigest(request(rfcHeaders, { body: Buffer.from('{"hello": "World"}') }))).toThrow(/does not match/);
  });

  it('but this service requires created, nonce and the four components: the RFC example lacks them', () => {
    const req = request(rfcHeaders);
    expect(() => checkSignatureShape(req, parseSignature(req), 1618884473)).toThrow(/must cover "@query", "content-digest"/);
  });
});

describe('client helper ↔ verifier', () => {
  it.each(['ed25519', 'ecdsa-p256-sha256'] as const)(
    'a %s signature by scripts/agent-client.ts verifies; its base is the documented one',
    async (alg) => {
      const key = generateDeviceKey(alg);
      const pub = await parseDevicePublicKey(key.publicJwk);
      const body = '{"ttl_seconds":60}';
      const { headers, base } = signRequest({
        method: 'post',
        url: 'http://h/api/v1/agent/access/db?b=2&a=1',
        body,
        keyId: 'dev-1',
        key,
        created: 1700000000,
        nonce: 'n'.repeat(22),
      });
      expect(base).toBe(
        [
          '"@method": POST',
          '"@path": /api/v1/agent/access/db',
          '"@query": ?b=2&a=1',
          `"content-digest": ${headers['content-digest']}`,
          `"@signature-params": ("@method" "@path" "@query" "content-digest");created=1700000000;nonce="${'n'.repeat(22)}";keyid="dev-1";alg="${alg}"`,
        ].join('\n'),
      );
      const req: SignedRequest = {
        method: 'POST',
        paths: ['/api/v1/agent/access/db'],
        queries: ['?b=2&a=1'],
        headers: new Map(Object.entries(headers).map(([k, v]) => [k, [v]])),
        body: Buffer.from(body),
      };
      const parsed = parseSignature(req);
      expect(() => checkSignatureShape(req, parsed, 1700000030)).not.toThrow();
      expect(signatureVerifies(req, parsed, pub.jwk, pub.algorithm)).toBe(true);
      expect(signatureVerifies({ ...req, method: 'GET' }, parsed, pub.jwk, pub.algorithm)).toBe(false);
      expect(() => checkSignatureShape(req, parsed, 1700000061)).toThrow(/older than 60 s/);
      expect(() => checkSignatureShape(req, parsed, 1699999989)).toThrow(/in the future/);
    },
  );

  it('the canonical query: names sorted, values in order, RFC 3986 encoding; both sides agree', () => {
    expect(canonicalQuery(null)).toBe('?');
    expect(canonicalQuery({ b: ['x y', '2'], a: ['1'], é: ["it's"] })).toBe('?a=1&b=x%20y&b=2&%C3%A9=it%27s');
    expect(clientQuery({ b: ['x y', '2'], a: '1', é: "it's" })).toBe('?a=1&b=x%20y&b=2&%C3%A9=it%27s');
  });

  it('refuses malformed signature headers with 401', () => {
    for (const [input, sig] of [
      ['sig1=("@method")', 'sig1=:AAAA:'],
      ['garbage((', 'sig1=:AAAA:'],
      ['sig1=("@method" "@method");created=1;nonce="x";keyid="k"', 'sig1=:AAAA:'],
      ['sig1=("@method";sf);created=1;nonce="x";keyid="k"', 'sig1=:AAAA:'],
      ['sig1=("@target-uri");created=1;nonce="x";keyid="k"', 'sig1=:AAAA:'],
      ['sig1=("@method");created=1;nonce="x";keyid="k"', 'sig2=:AAAA:'],
    ]) {
      const req = request({ 'Signature-Input': input!, Signature: sig! });
      expect(() => parseSignature(req), input).toThrow(expect.objectContaining({ status: 401 }));
    }
  });
});
