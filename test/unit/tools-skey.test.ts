import { describe, expect, it } from 'vitest';
import { DICTIONARY } from '../../lib/tools/skey/dictionary.js';
import { challenge, generate, parseOtp, step, toHex, toWords, type Algorithm } from '../../lib/tools/skey/otp.js';

/** RFC 2289 Appendix C, "OTP Verification Examples": pass phrase, seed, count, hex, six words. */
const VECTORS: Record<Algorithm, [string, string, number, string, string][]> = {
  md5: [
    ['This is a test.', 'TeSt', 0, '9E87 6134 D904 99DD', 'INCH SEA ANNE LONG AHEM TOUR'],
    ['This is a test.', 'TeSt', 1, '7965 E054 36F5 029F', 'EASE OIL FUM CURE AWRY AVIS'],
    ['This is a test.', 'TeSt', 99, '50FE 1962 C496 5880', 'BAIL TUFT BITS GANG CHEF THY'],
    ['AbCdEfGhIjK', 'alpha1', 0, '8706 6DD9 644B F206', 'FULL PEW DOWN ONCE MORT ARC'],
    ['AbCdEfGhIjK', 'alpha1', 1, '7CD3 4C10 40AD D14B', 'FACT HOOF AT FIST SITE KENT'],
    ['AbCdEfGhIjK', 'alpha1', 99, '5AA3 7A81 F212 146C', 'BODE HOP JAKE STOW JUT RAP'],
    ["OTP's are good", 'correct', 0, 'F205 7539 43DE 4CF9', 'ULAN NEW ARMY FUSE SUIT EYED'],
    ["OTP's are good", 'correct', 1, 'DDCD AC95 6F23 4937', 'SKIM CULT LOB SLAM POE HOWL'],
    ["OTP's are good", 'correct', 99, 'B203 E28F A525 BE47', 'LONG IVY JULY AJAR BOND LEE'],
  ],
  sha1: [
    ['This is a test.', 'TeSt', 0, 'BB9E 6AE1 979D 8FF4', 'MILT VARY MAST OK SEES WENT'],
    ['This is a test.', 'TeSt', 1, '63D9 3663 9734 385B', 'CART OTTO HIVE ODE VAT NUT'],
    ['This is a test.', 'TeSt', 99, '87FE C776 8B73 CCF9', 'GAFF WAIT SKID GIG SKY EYED'],
    ['AbCdEfGhIjK', 'alpha1', 0, 'AD85 F658 EBE3 83C9', 'LEST OR HEEL SCOT ROB SUIT'],
    ['AbCdEfGhIjK', 'alpha1', 1, 'D07C E229 B5CF 119B', 'RITE TAKE GELD COST TUNE RECK'],
    ['AbCdEfGhIjK', 'alpha1', 99, '27BC 7103 5AAF 3DC6', 'MAY STAR TIN LYON VEDA STAN'],
    ["OTP's are good", 'correct', 0, 'D51F 3E99 BF8E 6F0B', 'RUST WELT KICK FELL TAIL FRAU'],
    ["OTP's are good", 'correct', 1, '82AE B52D 9437 74E4', 'FLIT DOSE ALSO MEW DRUM DEFY'],
    ["OTP's are good", 'correct', 99, '4F29 6A74 FE15 67EC', 'AURA ALOE HURL WING BERG WAIT'],
  ],
};

describe('RFC 2289 one-time passwords', () => {
  it('has the 2048 words of the standard dictionary, short words first', () => {
    expect(DICTIONARY).toHaveLength(2048);
    expect(new Set(DICTIONARY).size).toBe(2048);
    expect([DICTIONARY[0], DICTIONARY[570], DICTIONARY[571], DICTIONARY[2047]]).toEqual(['A', 'YOU', 'ABED', 'YOKE']);
  });

  for (const algorithm of ['md5', 'sha1'] as const) {
    describe.each(VECTORS[algorithm])(`${algorithm}: %s / %s / %i`, (pass, seed, count, hex, words) => {
      const otp = generate(algorithm, seed, pass, count);
      it('computes the hex form', () => expect(toHex(otp)).toBe(hex.replace(/ /g, '').toLowerCase()));
      it('computes the six-word form', () => expect(toWords(otp)).toBe(words));
      it('parses both forms back (any case, any spacing)', () => {
        expect(parseOtp(hex)?.equals(otp)).toBe(true);
        expect(parseOtp(`  ${words.toLowerCase().replace(/ /g, '   ')} `)?.equals(otp)).toBe(true);
      });
      if (count > 0) it('hashed once, the OTP of count - 1 gives this one (the server check)', () => expect(step(algorithm, generate(algorithm, seed, pass, count - 1)).equals(otp)).toBe(true));
    });
  }

  it('refuses words outside the dictionary, a wrong checksum and other shapes', () => {
    expect(parseOtp('MILT VARY MAST OK SEES WENTX')).toBeUndefined();
    expect(parseOtp('MILT VARY MAST OK SEES WEND')).toBeUndefined(); // checksum bits differ
    expect(parseOtp('MILT VARY MAST OK SEES')).toBeUndefined();
    expect(parseOtp('bb9e6ae1979d8ff')).toBeUndefined();
  });

  it('writes the challenge as RFC 2289 §6 does', () => expect(challenge('sha1', 99, 'TeSt')).toBe('otp-sha1 99 TeSt'));
});
