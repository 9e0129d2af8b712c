import { randomBytes, type KeyObject } from 'node:crypto';
import { blake2b } from '@noble/hashes/blake2.js';

/**
 * minisign's key file formats (https://jedisct1.github.io/minisign/), for an Ed25519 key
 * held by node:crypto:
 * - public key: `untrusted comment: minisign public key <KEYID>` then
 *   base64("Ed" || key_id[8] || public_key[32]);
 * - secret key: `untrusted comment: ...` then base64("Ed" || kdf_alg[2] || "B2" ||
 *   kdf_salt[32] || opslimit[8] || memlimit[8] || key_id[8] || secret_key[64] ||
 *   checksum[32]), where secret_key is seed || public key and checksum is
 *   BLAKE2b-256("Ed" || key_id || secret_key). The key is written unencrypted (kdf_alg
 *   0x0000, as `minisign -G -W` does): the service keeps it sealed at rest and only
 *   exports it to callers with export rights.
 * The key id is 8 random bytes; minisign prints it as a little-endian 64-bit hex number.
 */
interface MinisignKeys {
  readonly key_id: string;
  readonly public_key: string;
  readonly public_key_file: string;
  readonly secret_key_file: string;
}

const rawEd25519 = (privateKey: KeyObject) => {
  const jwk = privateKey.export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || !jwk.d || !jwk.x) throw new Error('minisign keys are Ed25519');
  return { seed: Buffer.from(jwk.d, 'base64url'), pub: Buffer.from(jwk.x, 'base64url') };
};

export const minisignKeyIdHex = (keyId: Buffer) => Buffer.from(keyId).reverse().toString('hex').toUpperCase();

export function newMinisignKeyId(): Buffer {
  return randomBytes(8);
}

/** The public and secret key files of an Ed25519 key under a given 8-byte key id. */
export function minisignKeys(privateKey: KeyObject, keyId: Buffer, comment = 'minisign secret key'): MinisignKeys {
  const { seed, pub } = rawEd25519(privateKey);
  const alg = Buffer.from('Ed');
  const publicKey = Buffer.concat([alg, keyId, pub]).toString('base64');
  const sk = Buffer.concat([seed, pub]);
  const checksum = Buffer.from(blake2b(Buffer.concat([alg, keyId, sk]), { dkLen: 32 }));
  const secret = Buffer.concat([
    alg,
    Buffer.from([0, 0]), // kdf_alg: none
    Buffer.from('B2'),
    Buffer.alloc(32), // kdf_salt (unused without a KDF)
    Buffer.alloc(8), // kdf_opslimit
    Buffer.alloc(8), // kdf_memlimit
    keyId,
    sk,
    checksum,
  ]);
  const id = minisignKeyIdHex(keyId);
  return {
    key_id: id,
    public_key: publicKey,
    public_key_file: `untrusted comment: minisign public key ${id}\n${publicKey}\n`,
    secret_key_file: `untrusted comment: ${comment.replace(/[\r\n]/g, ' ')}\n${secret.toString('base64')}\n`,
  };
}
