import { createPrivateKey } from 'node:crypto';
import { bech32 } from '@scure/base';
import * as openpgp from 'openpgp';
import sshpk from 'sshpk';

/**
 * Leak probes for private key material (the tests of keys, key kinds and certificates).
 * A test collects every private key it exported; after its file, the whole table is
 * searched for the key's private scalar in every encoding a plaintext copy could take:
 * hex, and base64/base64url at every byte alignment (so a PEM,
 * OpenSSH, JWK or DER copy anywhere in an item is found). Probing the private scalar,
 * not a line of the exported file, avoids false hits on the public parts every key file
 * also carries (and the service legitimately stores).
 */
function scalarOf(material: string): Buffer | undefined {
  const text = material.trim();
  if (/-----BEGIN OPENSSH PRIVATE KEY-----/.test(text)) {
    const k = sshpk.parsePrivateKey(text, 'openssh');
    const parts = k.part as unknown as Record<string, { data: Buffer } | undefined>;
    const part = parts.d ?? parts.k;
    return part ? Buffer.from(part.data) : undefined;
  }
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    const block = text.slice(text.indexOf('-----BEGIN'));
    return Buffer.from(createPrivateKey(block).export({ format: 'jwk' }).d!, 'base64url');
  }
  if (/^AGE-SECRET-KEY-1/.test(text)) return Buffer.from(bech32.fromWords(bech32.decode(text.toLowerCase() as `${string}1${string}`, false).words));
  if (/^[A-Za-z0-9_-]{43,}$/.test(text)) return Buffer.from(text, 'base64url'); // a JWK d
  if (/^[A-Za-z0-9+/]{43}=$/.test(text)) return Buffer.from(text, 'base64'); // a WireGuard key
  if (/^[A-Za-z0-9+/=]{200,}$/.test(text)) {
    const sk = Buffer.from(text, 'base64'); // a minisign secret key line
    return sk.subarray(62, 94);
  }
  return undefined;
}

/** The seed/scalar of an armored OpenPGP private key (first secret parameter of the primary key). */
export async function gpgScalar(armored: string): Promise<Buffer> {
  const key = await openpgp.readPrivateKey({ armoredKey: armored });
  const params = (key.keyPacket as unknown as { privateParams: Record<string, Uint8Array> }).privateParams;
  return Buffer.from(Object.values(params)[0]!);
}

/**
 * The probe strings of one private scalar: 9-byte windows (12 base64 characters, 72 bits)
 * at each of the first 24 offsets, so that in any line-wrapped base64 copy at least one
 * window is aligned and within one line; and its hex form.
 */
export function probes(scalar: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at <= Math.min(scalar.length - 9, 23); at++) {
    const w = scalar.subarray(at, at + 9);
    out.push(w.toString('base64'), w.toString('base64url'));
  }
  out.push(scalar.subarray(0, 16).toString('hex'));
  return [...new Set(out)];
}

/** Probe strings for exported material (PEM, OpenSSH, JWK d, age identity, WireGuard key, minisign line). */
export function materialProbes(material: string): string[] {
  const scalar = scalarOf(material);
  if (!scalar) throw new Error(`no private scalar found in exported material (${material.slice(0, 30)}…)`);
  return probes(scalar);
}
