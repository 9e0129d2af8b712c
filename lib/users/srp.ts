import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * SRP-6a (RFC 2945, RFC 5054) on BigInt and @noble/hashes' SHA-256: the server side, and a
 * client side the unit tests check it with (the CLI bundles no server code: cli/srp.ts). The group is RFC 5054 Appendix A's 2048-bit one (g = 2):
 *
 *   x = H(s | H(I ":" p))    v = g^x               A = g^a
 *   B = (k·v + g^b) mod N    u = H(PAD(A) | PAD(B))
 *   S = (A · v^u)^b mod N = (B − k·g^x)^(a + u·x) mod N       K = H(PAD(S))
 *   M1 = H(H(N) xor H(g) | H(I) | s | PAD(A) | PAD(B) | K)    M2 = H(PAD(A) | M1 | K)
 *
 * where PAD is left-padding to N's 256 bytes, s the salt's bytes, I the user's e-mail, g in
 * H(g) one byte (RFC 2945 §3). Two protocol versions differ only in the multiplier k:
 *
 * - `srp_version: 2` (RFC 5054 §2.5.3): k = H(N | PAD(g)). What a strict RFC 5054 client
 *   computes; the CLI and the sign-in page register and sign in with it.
 * - `srp_version: 1`: k = H(N | g) with g as one byte, the convention of the
 *   `secure-remote-password` npm client that earlier CLIs used; a handshake without a version
 *   is this one.
 *
 * The verifier is the same number in both (k enters only B), so a verifier registered as
 * version 1 answers either handshake, and one registered as version 2 only version 2
 * (lib/users/passwords.ts). The password and x never reach the server: registration sends
 * s and v, sign-in A and M1.
 */
export type SrpVersion = 1 | 2;
export const SRP_VERSIONS = [1, 2] as const;

/** A group and hash (tests use RFC 5054 Appendix B's 1024-bit group with SHA-1). */
interface SrpGroup {
  readonly N: bigint;
  readonly g: bigint;
  /** N's length in bytes: the width of PAD. */
  readonly length: number;
  readonly hash: { create(): { update(b: Uint8Array): unknown; digest(): Uint8Array } };
}

export const N_2048_HEX =
  'AC6BDB41324A9A9BF166DE5E1389582FAF72B6651987EE07FC3192943DB56050A37329CBB4A099ED8193E0757767A13DD52312AB4B03310D' +
  'CD7F48A9DA04FD50E8083969EDB767B0CF6095179A163AB3661A05FBD5FAAAE82918A9962F0B93B855F97993EC975EEAA80D740ADBF4FF74' +
  '7359D041D5C33EA71D281E446B14773BCA97B43A23FB801676BD207A436C6481F1D2B9078717461A5B9D32E688F87748544523B524B0D57D' +
  '5EA77A2775D2ECFA032CFBDBF52FB37861602790' +
  '04E57AE6AF874E7303CE53299CCC041C7BC308D82A5698F3A8D0C38271AE35F8E9DBFBB694B5C803D89F7AE435DE236D525F54759B65E372' +
  'FCD68EF20FA7111F9E4AFF73';

export const groupOf = (nHex: string, g: bigint, hash: SrpGroup['hash']): SrpGroup => ({
  N: BigInt(`0x${nHex}`),
  g,
  length: nHex.length / 2,
  hash,
});

/** The service's group: RFC 5054 Appendix A 2048-bit, g = 2, SHA-256. */
const GROUP_2048 = groupOf(N_2048_HEX, 2n, sha256);

/** Hex of an element of the group (A, B, v): 512 hex digits. */
export const GROUP_HEX_RE = /^[0-9a-fA-F]{512}$/;
/** Hex of a salt or proof: 32 bytes. */
export const HASH_HEX_RE = /^[0-9a-fA-F]{64}$/;

const toBig = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${bytesToHex(bytes)}`));
const fromHex = (hex: string): bigint => BigInt(`0x${hex}`);
const pad = (n: bigint, len: number): Uint8Array => hexToBytes(n.toString(16).padStart(len * 2, '0'));
/** The minimal big-endian bytes of n (g as one byte). */
const bytesOf = (n: bigint): Uint8Array => {
  const hex = n.toString(16);
  return hexToBytes(hex.length % 2 ? `0${hex}` : hex);
};

function H(group: SrpGroup, ...parts: (Uint8Array | string)[]): Uint8Array {
  const h = group.hash.create();
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

const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;

/** k: RFC 5054 §2.5.3 `H(N | PAD(g))` for version 2; `H(N | g)`, g one byte, for version 1. */
export const multiplier = (version: SrpVersion, group: SrpGroup = GROUP_2048): bigint =>
  toBig(H(group, pad(group.N, group.length), version === 2 ? pad(group.g, group.length) : bytesOf(group.g)));

/** x = H(s | H(I ":" p)) (RFC 5054 §2.4). */
export const privateKey = (saltHex: string, identity: string, password: string, group: SrpGroup = GROUP_2048): bigint =>
  toBig(H(group, hexToBytes(saltHex.toLowerCase()), H(group, `${identity}:${password}`)));

/** v = g^x mod N. */
export const verifierOf = (x: bigint, group: SrpGroup = GROUP_2048): bigint => modPow(group.g, x, group.N);

/** A = g^a mod N. */
export const clientPublicOf = (a: bigint, group: SrpGroup = GROUP_2048): bigint => modPow(group.g, a, group.N);

/** B = (k·v + g^b) mod N. */
export const serverPublicOf = (v: bigint, b: bigint, version: SrpVersion, group: SrpGroup = GROUP_2048): bigint =>
  (multiplier(version, group) * v + modPow(group.g, b, group.N)) % group.N;

/** u = H(PAD(A) | PAD(B)). */
export const scrambler = (A: bigint, B: bigint, group: SrpGroup = GROUP_2048): bigint => toBig(H(group, pad(A, group.length), pad(B, group.length)));

/** The server's premaster secret S = (A · v^u)^b mod N. */
export const serverPremaster = (A: bigint, v: bigint, u: bigint, b: bigint, group: SrpGroup = GROUP_2048): bigint =>
  modPow((A * modPow(v, u, group.N)) % group.N, b, group.N);

/** The client's premaster secret S = (B − k·g^x)^(a + u·x) mod N. */
export const clientPremaster = (B: bigint, x: bigint, a: bigint, u: bigint, version: SrpVersion, group: SrpGroup = GROUP_2048): bigint =>
  modPow(mod(B - multiplier(version, group) * modPow(group.g, x, group.N), group.N), a + u * x, group.N);

/** K, M1 and M2 from the premaster secret. */
function proofs(group: SrpGroup, identity: string, saltHex: string, A: bigint, B: bigint, S: bigint) {
  const K = H(group, pad(S, group.length));
  const hn = H(group, pad(group.N, group.length));
  const hg = H(group, bytesOf(group.g));
  const Ab = pad(A, group.length);
  const M1 = H(
    group,
    hn.map((x, i) => x ^ hg[i]!),
    H(group, identity),
    hexToBytes(saltHex.toLowerCase()),
    Ab,
    pad(B, group.length),
    K,
  );
  return { M1, M2: H(group, Ab, M1, K) };
}

/** A verifier that is 0 or a multiple of N would make B predictable: refused at registration. */
export function validVerifier(verifierHex: string): boolean {
  const v = fromHex(verifierHex);
  return v > 0n && v < GROUP_2048.N;
}

/** Step 1: the server's ephemeral pair for a verifier, in the handshake's version. */
export function serverEphemeral(verifierHex: string, version: SrpVersion): { secret: string; public: string } {
  const b = toBig(randomBytes(32));
  const B = serverPublicOf(fromHex(verifierHex), b, version);
  return { secret: bytesToHex(pad(b, 32)), public: bytesToHex(pad(B, GROUP_2048.length)) };
}

/** A % N must not be 0 (RFC 5054 §2.5.4): else the session key is known to anyone. */
export const validClientEphemeral = (aHex: string): boolean => fromHex(aHex) % GROUP_2048.N !== 0n;

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
  readonly version: SrpVersion;
}): string | undefined {
  const A = fromHex(input.clientPublic);
  const v = fromHex(input.verifier);
  const b = fromHex(input.serverSecret);
  if (A % GROUP_2048.N === 0n) return undefined;
  const B = serverPublicOf(v, b, input.version);
  const S = serverPremaster(A, v, scrambler(A, B), b);
  const { M1, M2 } = proofs(GROUP_2048, input.identity, input.salt, A, B, S);
  const presented = hexToBytes(input.clientProof.toLowerCase());
  if (presented.length !== M1.length || !timingSafeEqual(presented, M1)) return undefined;
  return bytesToHex(M2);
}

// ------------------------------------------------------------------ the client side (tests)

/** A new salt and verifier for a password (registration or a change). */
export function clientRegistration(identity: string, password: string): { salt: string; verifier: string } {
  const salt = randomBytes(32).toString('hex');
  return { salt, verifier: bytesToHex(pad(verifierOf(privateKey(salt, identity, password)), GROUP_2048.length)) };
}

/** The client's ephemeral pair: a kept secret, A sent in step 1. */
export function clientEphemeral(): { secret: bigint; public: string } {
  const a = toBig(randomBytes(32));
  return { secret: a, public: bytesToHex(pad(clientPublicOf(a), GROUP_2048.length)) };
}

/**
 * Step 2 on the client: M1 to send and the M2 the server must answer. Throws when B mod N is
 * 0 (RFC 5054 §2.5.4: a server that sends it learns nothing, and the client must stop).
 */
export function clientProof(input: {
  readonly identity: string;
  readonly password: string;
  readonly salt: string;
  readonly serverPublic: string;
  readonly secret: bigint;
  readonly version: SrpVersion;
}): { proof: string; expectedServerProof: string } {
  const B = fromHex(input.serverPublic);
  if (B % GROUP_2048.N === 0n) throw new Error('B mod N is 0');
  const A = clientPublicOf(input.secret);
  const x = privateKey(input.salt, input.identity, input.password);
  const S = clientPremaster(B, x, input.secret, scrambler(A, B), input.version);
  const { M1, M2 } = proofs(GROUP_2048, input.identity, input.salt, A, B, S);
  return { proof: bytesToHex(M1), expectedServerProof: bytesToHex(M2) };
}
