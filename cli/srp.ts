import { createHash, randomBytes } from 'node:crypto';

/**
 * The CLI's SRP-6a client, RFC 5054 (`srp_version: 2`) on node:crypto: the CLI bundles no
 * server code (test/unit/cli-build.test.ts), so it has its own client side of the formulas in
 * lib/users/srp.ts (RFC 5054 2048-bit group, SHA-256, k = H(N | PAD(g)), proofs of RFC 2945
 * §3); test/unit/srp.test.ts runs it against the server side.
 */
export const SRP_VERSION = 2;
const N = BigInt(
  '0xAC6BDB41324A9A9BF166DE5E1389582FAF72B6651987EE07FC3192943DB56050A37329CBB4A099ED8193E0757767A13DD52312AB4B03310D' +
    'CD7F48A9DA04FD50E8083969EDB767B0CF6095179A163AB3661A05FBD5FAAAE82918A9962F0B93B855F97993EC975EEAA80D740ADBF4FF74' +
    '7359D041D5C33EA71D281E446B14773BCA97B43A23FB801676BD207A436C6481F1D2B9078717461A5B9D32E688F87748544523B524B0D57D' +
    '5EA77A2775D2ECFA032CFBDBF52FB37861602790' +
    '04E57AE6AF874E7303CE53299CCC041C7BC308D82A5698F3A8D0C38271AE35F8E9DBFBB694B5C803D89F7AE435DE236D525F54759B65E372' +
    'FCD68EF20FA7111F9E4AFF73',
);
const g = 2n;
const pad = (n: bigint) => Buffer.from(n.toString(16).padStart(512, '0'), 'hex');
const big = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).toString('hex')}`);
const H = (...parts: (Uint8Array | string)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let r = 1n;
  let b = base % m;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}
const k = big(H(pad(N), pad(g)));

/** The client's ephemeral pair: a kept secret, A sent in step 1. */
export function clientEphemeral(): { secret: bigint; public: string } {
  const a = big(randomBytes(32));
  return { secret: a, public: pad(modPow(g, a, N)).toString('hex') };
}

/** Step 2: M1 to send and the M2 the server must answer; throws when B mod N is 0 (RFC 5054 §2.5.4). */
export function clientProof(input: { identity: string; password: string; salt: string; serverPublic: string; secret: bigint }): {
  proof: string;
  expectedServerProof: string;
} {
  const B = BigInt(`0x${input.serverPublic}`);
  if (B % N === 0n) throw new Error('B mod N is 0');
  const a = input.secret;
  const A = modPow(g, a, N);
  const salt = Buffer.from(input.salt, 'hex');
  const u = big(H(pad(A), pad(B)));
  const x = big(H(salt, H(`${input.identity}:${input.password}`)));
  const S = modPow((((B - k * modPow(g, x, N)) % N) + N) % N, a + u * x, N);
  const K = H(pad(S));
  const hg = H(Uint8Array.of(2));
  const M1 = H(
    H(pad(N)).map((b, i) => b ^ hg[i]!),
    H(input.identity),
    salt,
    pad(A),
    pad(B),
    K,
  );
  return { proof: M1.toString('hex'), expectedServerProof: H(pad(A), M1, K).toString('hex') };
}
