import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * SRP-6a (RFC 2945, RFC 5054): the server side, on BigInt and @noble/hashes' SHA-256. The
 * group is RFC 5054 Appendix A's 2048-bit one (g = 2); the hashing conventions are those of
 * the `secure-remote-password` npm client (documented in docs/api.md, "Sign-in"), which the
 * tests use as an independent implementation:
 *
 *   k = H(N, g)        x = H(s, H(I ":" p))     v = g^x
 *   B = (k·v + g^b) mod N                       u = H(A, B)
 *   S = (A · v^u)^b mod N                       K = H(S)
 *   M1 = H(H(N) xor H(g), H(I), s, A, B, K)     M2 = H(A, M1, K)
 *
 * where N, A, B and S are 256 bytes (left-padded), g one byte, s the salt's bytes and I
 * the user's e-mail. The password and x never reach the server: registration sends s and
 * v, sign-in A and M1.
 */
const N_HEX =
  'AC6BDB41324A9A9BF166DE5E1389582FAF72B6651987EE07FC3192943DB56050A37329CBB4A099ED8193E0757767A13DD52312AB4B03310D' +
  'CD7F48A9DA04FD50E8083969EDB767B0CF6095179A163AB3661A05FBD5FAAAE82918A9962F0B93B855F97993EC975EEAA80D740ADBF4FF74' +
  '7359D041D5C33EA71D281E446B14773BCA97B43A23FB801676BD207A436C6481F1D2B9078717461A5B9D32E688F87748544523B524B0D57D' +
  '5EA77A2775D2ECFA032CFBDBF52FB37861602790' +
  '04E57AE6AF874E7303CE53299CCC041C7BC308D82A5698F3A8D0C38271AE35F8E9DBFBB694B5C803D89F7AE435DE236D525F54759B65E372' +
  'FCD68EF20FA7111F9E4AFF73';
const N = BigInt(`0x${N_HEX}`);
const N_BYTES = 256;
const G = 2n;
const G_BYTES = Uint8Array.of(2);

/** Hex of an element of the group (A, B, v): 512 hex digits. */
export const GROUP_HEX_RE = /^[0-9a-fA-F]{512}$/;
/** Hex of a salt or proof: 32 bytes. */
export const HASH_HEX_RE = /^[0-9a-fA-F]{64}$/;

const toBig = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${bytesToHex(bytes)}`));
const pad = (n: bigint, len = N_BYTES): Uint8Array => hexToBytes(n.toString(16).padStart(len * 2, '0'));

function H(...parts: (Uint8Array | string)[]): Uint8Array {
  const h = sha256.create();
  for (const p of parts) h.update(typeof p === 'string' ? utf8ToBytes(p) : p);
  return h.digest();
}

function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = base % m;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

const K_MULT = toBig(H(pad(N), G_BYTES));
const HN_XOR_HG = (() => {
  const hn = H(pad(N));
  const hg = H(G_BYTES);
  return hn.map((x, i) => x ^ hg[i]!);
})();

/** A verifier that is 0 or a multiple of N would make B predictable: refused at registration. */
export function validVerifier(verifierHex: string): boolean {
  const v = BigInt(`0x${verifierHex}`);
  return v > 0n && v < N;
}

/** Step 1: the server's ephemeral pair for a verifier. */
export function serverEphemeral(verifierHex: string): { secret: string; public: string } {
  const v = BigInt(`0x${verifierHex}`);
  const b = toBig(randomBytes(32));
  const B = (K_MULT * v + modPow(G, b, N)) % N;
  return { secret: bytesToHex(pad(b, 32)), public: bytesToHex(pad(B)) };
}

/** A % N must not be 0 (RFC 5054 §2.5.4): else the session key is known to anyone. */
export const validClientEphemeral = (aHex: string): boolean => BigInt(`0x${aHex}`) % N !== 0n;

/**
 * Step 2: checks the client's proof M1; on success returns M2 (the server's proof). The
 * comparison is in constant time; undefined when the proof does not match.
 */
export function verifyClientProof(input: {
  readonly identity: string;
  readonly salt: string;
  readonly verifier: string;
  readonly clientPublic: string;
  readonly serverSecret: string;
  readonly clientProof: string;
}): string | undefined {
  const A = BigInt(`0x${input.clientPublic}`);
  const v = BigInt(`0x${input.verifier}`);
  const b = BigInt(`0x${input.serverSecret}`);
  if (A % N === 0n) return undefined;
  const B = (K_MULT * v + modPow(G, b, N)) % N;
  const Ab = pad(A);
  const Bb = pad(B);
  const u = toBig(H(Ab, Bb));
  const S = modPow((A * modPow(v, u, N)) % N, b, N);
  const K = H(pad(S));
  const M1 = H(HN_XOR_HG, H(input.identity), hexToBytes(input.salt), Ab, Bb, K);
  const presented = hexToBytes(input.clientProof.toLowerCase());
  if (presented.length !== M1.length || !timingSafeEqual(presented, M1)) return undefined;
  return bytesToHex(H(Ab, M1, K));
}
