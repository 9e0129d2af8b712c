import { createHash } from 'node:crypto';
import { DICTIONARY } from './dictionary.js';

/**
 * RFC 2289 one-time passwords (S/KEY): the seed (lower-cased) concatenated with the
 * passphrase is hashed and folded to 64 bits, then hashed-and-folded again `count` times.
 * The server keeps only the last OTP it accepted: the next one, hashed once, must equal it.
 * Hex and six-word (Appendix D dictionary, 2-bit checksum) forms, MD5 and SHA-1.
 */
export const ALGORITHMS = ['md5', 'sha1'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** RFC 2289 §6: 1-16 alphanumeric characters, case-insensitive. */
export const SEED_RE = /^[A-Za-z0-9]{1,16}$/;

/** Hash and fold to 64 bits (RFC 2289 §5 and Appendix A). */
function fold(algorithm: Algorithm, input: Buffer): Buffer {
  const d = createHash(algorithm).update(input).digest();
  const out = Buffer.alloc(8);
  if (algorithm === 'md5') {
    for (let i = 0; i < 8; i++) out[i] = d[i]! ^ d[i + 8]!;
    return out;
  }
  // SHA-1: the five 32-bit words folded as Appendix A does, on words read big-endian and
  // written back little-endian (the byte order the RFC's reference code and vectors use).
  const w = [0, 1, 2, 3, 4].map((i) => d.readUInt32BE(i * 4));
  out.writeUInt32LE((w[0]! ^ w[2]! ^ w[4]!) >>> 0, 0);
  out.writeUInt32LE((w[1]! ^ w[3]!) >>> 0, 4);
  return out;
}

/** The OTP for `count` (0 = the first hash of seed + passphrase). */
export function generate(algorithm: Algorithm, seed: string, passphrase: string, count: number): Buffer {
  let otp = fold(algorithm, Buffer.from(seed.toLowerCase() + passphrase, 'utf8'));
  for (let i = 0; i < count; i++) otp = fold(algorithm, otp);
  return otp;
}

/** One step of the hash chain: the server's check is `step(presented) == last accepted`. */
export const step = (algorithm: Algorithm, otp: Buffer): Buffer => fold(algorithm, otp);

const checksum = (otp: Buffer): number => {
  let sum = 0;
  for (const byte of otp) for (let s = 0; s < 8; s += 2) sum += (byte >> s) & 3;
  return sum & 3;
};

/** The six-word form: the 64 bits then the 2-bit checksum, 11 bits a word. */
export function toWords(otp: Buffer): string {
  const bits = (otp.readBigUInt64BE(0) << 2n) | BigInt(checksum(otp));
  return [5, 4, 3, 2, 1, 0].map((i) => DICTIONARY[Number((bits >> BigInt(i * 11)) & 0x7ffn)]).join(' ');
}

export const toHex = (otp: Buffer): string => otp.toString('hex');

const INDEX: ReadonlyMap<string, number> = new Map(DICTIONARY.map((w, i) => [w, i]));

/**
 * An OTP as the user typed it: 16 hex digits (spaces allowed) or six dictionary words (any
 * case). Returns undefined when it is neither, or when the words' checksum is wrong.
 */
export function parseOtp(text: string): Buffer | undefined {
  const compact = text.replace(/\s+/g, '');
  if (/^[0-9a-fA-F]{16}$/.test(compact)) return Buffer.from(compact, 'hex');
  const words = text.trim().toUpperCase().split(/\s+/);
  if (words.length !== 6) return undefined;
  let bits = 0n;
  for (const w of words) {
    const i = INDEX.get(w);
    if (i === undefined) return undefined;
    bits = (bits << 11n) | BigInt(i);
  }
  const otp = Buffer.alloc(8);
  otp.writeBigUInt64BE(bits >> 2n);
  return Number(bits & 3n) === checksum(otp) ? otp : undefined;
}

/** The challenge a client answers (RFC 2289 §6): `otp-<algorithm> <sequence> <seed>`. */
export const challenge = (algorithm: Algorithm, sequence: number, seed: string) => `otp-${algorithm} ${sequence} ${seed}`;
