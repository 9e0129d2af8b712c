import { describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import { CREDENTIAL_TYPES, typeByCollection, typeByName, renderResource } from '../api/credential-types.js';
import { isBitlockerRecoveryKey } from '../../lib/credentials/types/basic.js';
import { codeAt } from '../../lib/credentials/types/totp-token.js';
import { crc16, CRC_OK_RESIDUE, decodeOtp, modhexToBytes } from '../../lib/credentials/types/yubikey.js';
import { charEntropy, generateChars } from '../../lib/passwords/generator.js';
import { deriveAddress, eip55 } from '../../lib/credentials/types/crypto-wallet.js';
import { ROUTES } from '../../lib/routes.js';
import { RESOURCE_TYPES } from '../../lib/catalog.js';

describe('registry', () => {
  it('every typed route of lib/routes.ts resolves to a registry type, and every type is a resource type', () => {
    // the generic CRUD: the five exports of a module named after its collection (lib/credentials/handlers.ts)
    const crud = ROUTES.filter(
      (x) =>
        /^(credentials|passwords)\/[a-z-]+\.(list|create|get|update|remove)$/.test(x.handler ?? '') &&
        x.handler!.split('.')[0]!.split('/')[1] === x.path.split('/')[3],
    );
    for (const r of crud) {
      const def = typeByCollection(r.path.split('/')[3]!);
      expect(def, r.key).toBeDefined();
      expect(def!.ownRoutes).toBeFalsy();
      expect(r.handler!.split('/')[0]).toBe(def!.family);
    }
    for (const t of CREDENTIAL_TYPES) expect(RESOURCE_TYPES.some((r) => r.type === t.type && r.path === t.path)).toBe(true);
    expect(crud).toHaveLength(17 * 5 + 6 + 5 - 1);
  });

  it('renders metadata without secret fields, and a record with them (withheld ones never)', () => {
    const def = typeByName('code_signing_key')!;
    const rec = {
      id: 'i',
      name: 'n',
      version: 3,
      meta: { description: '', tags: [], algorithm: 'EC', secret_fields: ['private_key'], expires_at: '2000-01-01T00:00:00Z' },
    };
    expect(renderResource(def, rec)).toMatchObject({
      id: 'i',
      type: 'code_signing_key',
      algorithm: 'EC',
      secret_fields: ['private_key'],
      expired: true,
      version: 3,
    });
    const withSecret = renderResource(def, rec, { private_key: 'PEM' });
    expect(withSecret).not.toHaveProperty('private_key');
    expect(withSecret.secret_fields).toEqual(['private_key']);
    const wifi = typeByName('wifi_credential')!;
    expect(renderResource(wifi, { id: 'w', name: 'n', version: 1, meta: { ssid: 's' } }, { passphrase: 'p' })).toMatchObject({
      ssid: 's',
      passphrase: 'p',
      secret_fields: ['passphrase'],
    });
  });
});

describe('TOTP (RFC 6238 Appendix B)', () => {
  const secret = (ascii: string) => new OTPAuth.Secret({ buffer: new Uint8Array(Buffer.from(ascii)).buffer }).base32;
  it.each([
    ['SHA1', '12345678901234567890', 59, '94287082'],
    ['SHA256', '12345678901234567890123456789012', 1111111109, '68084774'],
    ['SHA512', '1234567890123456789012345678901234567890123456789012345678901234', 2000000000, '38618901'],
  ])('%s at T=%d', (algorithm, ascii, t, code) => {
    const out = codeAt({ secret: secret(ascii), algorithm, digits: 8, period: 30, account: 'x' }, t * 1000);
    expect(out.code).toBe(code);
    expect(out.seconds_remaining).toBe(30 - (t % 30));
  });
});

describe('Yubico OTP', () => {
  // the decoding example of Yubico's documentation and libraries
  const fields = { public_id: 'dteffuje', aes_key: 'ecde18dbe76fbd0c33330f1c354871db', private_id: '8792ebfe26cc' };
  it('decodes the published example: usage counter 19, session counter 17', () => {
    const out = decodeOtp('dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh', fields);
    expect(out).toMatchObject({ ok: true, otp: { usageCounter: 19, sessionCounter: 17, timestamp: 49712, counter: 19 * 256 + 17 } });
  });
  it('refuses another key, another private id, another public id', () => {
    expect(decodeOtp('dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh', { ...fields, aes_key: '00'.repeat(16) }).ok).toBe(false);
    expect(decodeOtp('dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh', { ...fields, private_id: '000000000000' }).ok).toBe(false);
    expect(decodeOtp('dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh', { ...fields, public_id: 'cccccccc' }).ok).toBe(false);
  });
  it('modhex and the CRC residue', () => {
    expect(modhexToBytes('cbdefghijklnrtuv').toString('hex')).toBe('0123456789abcdef');
    const block = Buffer.from('0102030405060708090a0b0c0d0e', 'hex');
    const crc = ~crc16(block) & 0xffff;
    expect(crc16(Buffer.concat([block, Buffer.from([crc & 0xff, crc >> 8])]))).toBe(CRC_OK_RESIDUE);
  });
});

describe('password generation', () => {
  it('entropy by inclusion–exclusion equals a brute-force count on a small alphabet', () => {
    // classes of sizes 2 and 1, length 3: strings over 3 symbols that use both classes
    let count = 0;
    for (let i = 0; i < 27; i++) {
      const s = [i % 3, Math.floor(i / 3) % 3, Math.floor(i / 9)];
      if (s.some((x) => x < 2) && s.some((x) => x === 2)) count++;
    }
    expect(charEntropy([2, 1], 3, true)).toBeCloseTo(Math.log2(count), 10);
    expect(charEntropy([26, 26, 10, 32], 20, false)).toBeCloseTo(20 * Math.log2(94), 10);
  });
  it('every required class appears', () => {
    for (let i = 0; i < 50; i++) {
      const { password } = generateChars({
        length: 4,
        classes: ['lowercase', 'uppercase', 'digits', 'symbols'],
        exclude: '',
        excludeAmbiguous: false,
        requireEachClass: true,
      });
      for (const re of [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/]) expect(password).toMatch(re);
    }
  });
});

describe('wallets and other checks', () => {
  const m = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
  it('derives the BIP-84, BIP-44 and Ethereum test-vector addresses', () => {
    expect(deriveAddress({ chain: 'bitcoin', network: 'mainnet', address_type: 'p2wpkh', mnemonic: m, derivation_path: "m/84'/0'/0'/0/0" })).toBe(
      'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
    );
    expect(deriveAddress({ chain: 'bitcoin', network: 'mainnet', address_type: 'p2pkh', mnemonic: m, derivation_path: "m/44'/0'/0'/0/0" })).toBe(
      '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA',
    );
    expect(deriveAddress({ chain: 'bitcoin', network: 'testnet', address_type: 'p2wpkh', mnemonic: m, derivation_path: "m/84'/1'/0'/0/0" })).toBe(
      'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl',
    );
    expect(deriveAddress({ chain: 'ethereum', mnemonic: m, derivation_path: "m/44'/60'/0'/0/0" })).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });
  it("EIP-55 checksums (the EIP's own examples)", () => {
    for (const a of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    ]) {
      expect(eip55(a.slice(2).toLowerCase())).toBe(a);
    }
  });
  it('BitLocker recovery passwords: 8 groups of 6 digits, each divisible by 11', () => {
    expect(isBitlockerRecoveryKey('000011-000022-000033-000044-000055-000066-000077-000088')).toBe(true);
    expect(isBitlockerRecoveryKey('000011-000022-000033-000044-000055-000066-000077-000089')).toBe(false);
    expect(isBitlockerRecoveryKey('000011-000022')).toBe(false);
  });
});
