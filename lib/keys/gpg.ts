import * as openpgp from 'openpgp';
import type { CallContext } from '../auth/principal.js';
import { badRequest } from '../core/errors.js';
import { createKey, exportSecret, getKey, keyView, type KeyView } from './common.js';
import type { KeyMetaBase } from '../catalog.js';

/**
 * OpenPGP keys with openpgp.js: generated as v4 keys (Curve25519: EdDSA primary + ECDH
 * subkey; or RSA), which every GnuPG reads; imported from armored blocks, a protected
 * private key decrypted with its passphrase at import. The armored public key, the
 * fingerprint, user ids and expiry are public metadata; the armored private key is sealed
 * (unprotected inside the envelope) and leaves only through export.
 */
const TYPE = 'gpg_key';

interface GpgMeta extends KeyMetaBase {
  readonly key_id: string;
  readonly user_ids: string[];
  readonly key_created_at: string;
  readonly subkeys: { key_id: string; fingerprint: string; algorithm: string; bits: number | null; curve: string | null }[];
}
interface GpgSecret {
  readonly private_key: string;
}

interface GenerateGpg {
  name: string;
  algorithm: 'curve25519' | 'rsa';
  bits?: number;
  user_ids: { name?: string; email?: string; comment?: string }[];
  expires_in_days?: number;
  description?: string;
  tags?: string[];
}
interface ImportGpg {
  name: string;
  armored_key: string;
  passphrase?: string;
  description?: string;
  tags?: string[];
}

const ALGORITHMS: Record<string, string> = {
  eddsaLegacy: 'ed25519',
  ed25519: 'ed25519',
  rsaEncryptSign: 'rsa',
  rsaSign: 'rsa',
  ecdsa: 'ecdsa',
  ecdh: 'ecdh',
  x25519: 'x25519',
  ed448: 'ed448',
  x448: 'x448',
  dsa: 'dsa',
  elgamal: 'elgamal',
  rsaEncrypt: 'rsa',
};
const CURVES: Record<string, string> = {
  ed25519Legacy: 'ed25519',
  curve25519Legacy: 'curve25519',
  nistP256: 'P-256',
  nistP384: 'P-384',
  nistP521: 'P-521',
};

function algorithmOf(info: { algorithm: string; bits?: number; curve?: string }) {
  return {
    algorithm: ALGORITHMS[info.algorithm] ?? info.algorithm,
    bits: info.bits ?? (info.curve ? 256 : null),
    curve: info.curve ? (CURVES[info.curve] ?? info.curve) : null,
  };
}

async function metaOf(key: openpgp.Key, base: { description?: string; tags?: string[]; source: 'generated' | 'imported' }): Promise<GpgMeta> {
  const expiry = await key.getExpirationTime();
  const primary = algorithmOf(key.getAlgorithmInfo() as { algorithm: string; bits?: number; curve?: string });
  return {
    ...primary,
    fingerprint: key.getFingerprint().toUpperCase(),
    key_id: key.getKeyID().toHex().toUpperCase(),
    user_ids: key.getUserIDs(),
    public_key: key.toPublic().armor(),
    key_created_at: key.getCreationTime().toISOString(),
    expires_at: expiry instanceof Date ? expiry.toISOString() : null,
    subkeys: key.getSubkeys().map((s) => ({
      key_id: s.getKeyID().toHex().toUpperCase(),
      fingerprint: s.getFingerprint().toUpperCase(),
      ...algorithmOf(s.getAlgorithmInfo() as { algorithm: string; bits?: number; curve?: string }),
    })),
    has_private_key: key.isPrivate(),
    source: base.source,
    description: base.description ?? '',
    tags: base.tags ?? [],
  };
}

export async function generateGpgKey(ctx: CallContext, body: GenerateGpg): Promise<KeyView> {
  const bits = body.algorithm === 'rsa' ? (body.bits ?? 3072) : undefined;
  if (body.algorithm === 'rsa' && bits !== 3072 && bits !== 4096) throw badRequest('rsa keys are 3072 or 4096 bits');
  if (body.algorithm === 'curve25519' && body.bits !== undefined) throw badRequest('bits applies to rsa keys only');
  const { privateKey } = await openpgp.generateKey({
    ...(body.algorithm === 'rsa' ? { type: 'rsa' as const, rsaBits: bits } : { type: 'ecc' as const, curve: 'curve25519Legacy' as const }),
    userIDs: body.user_ids,
    keyExpirationTime: body.expires_in_days ? body.expires_in_days * 86400 : 0,
    format: 'object',
  });
  const meta = await metaOf(privateKey, { description: body.description, tags: body.tags, source: 'generated' });
  const rec = await createKey<GpgMeta, GpgSecret>(ctx, TYPE, { name: body.name, meta, secret: { private_key: privateKey.armor() } });
  return keyView(rec);
}

async function readArmored(text: string): Promise<openpgp.Key> {
  try {
    return /PRIVATE KEY BLOCK/.test(text) ? await openpgp.readPrivateKey({ armoredKey: text }) : await openpgp.readKey({ armoredKey: text });
  } catch {
    throw badRequest('armored_key is not a valid ASCII-armored OpenPGP key', undefined, 'invalid_key');
  }
}

/**
 * Keeps what GnuPG keeps on import: the user ids whose self-certification verifies (a key
 * with none is refused, as `gpg --import` refuses it: "no valid user IDs") and the subkeys
 * whose binding signature verifies (an expired one still counts). The others are dropped
 * from the stored key, so they are neither reported nor exported.
 */
async function keepVerified(key: openpgp.Key): Promise<void> {
  const now = new Date();
  const verified = async (check: () => Promise<unknown>) => {
    try {
      await check();
      return true;
    } catch (error) {
      return /expired/i.test((error as Error).message ?? '');
    }
  };
  const users = [];
  for (const user of key.users) if (user.userID && (await verified(() => user.verify(now)))) users.push(user);
  if (users.length === 0)
    throw badRequest(
      'no user id of this key carries a valid self-signature (GnuPG refuses such a key too): export it again from its source',
      undefined,
      'invalid_key',
    );
  const subkeys = [];
  for (const subkey of key.subkeys) if (await verified(() => subkey.verify(now))) subkeys.push(subkey);
  key.users = users;
  key.subkeys = subkeys;
}

/** Each secret key packet's private parameters match its public ones (openpgp's own validation). */
async function checkSecretKeys(key: openpgp.PrivateKey): Promise<void> {
  for (const k of key.getKeys()) {
    const packet = k.keyPacket as openpgp.SecretKeyPacket | openpgp.SecretSubkeyPacket;
    if (typeof packet.validate !== 'function' || packet.isDummy() || !packet.isDecrypted()) continue;
    try {
      await packet.validate();
    } catch {
      throw badRequest(`the private key material of ${k.getKeyID().toHex().toUpperCase()} does not match its public key`, undefined, 'invalid_key');
    }
  }
}

export async function importGpgKey(ctx: CallContext, body: ImportGpg): Promise<KeyView> {
  let key = await readArmored(body.armored_key);
  if (key.isPrivate()) {
    const priv = key as openpgp.PrivateKey;
    if (!priv.isDecrypted()) {
      if (body.passphrase === undefined) throw badRequest('the private key is protected: send its passphrase', undefined, 'passphrase_required');
      try {
        key = await openpgp.decryptKey({ privateKey: priv, passphrase: body.passphrase });
      } catch {
        throw badRequest('wrong passphrase: the private key could not be decrypted', undefined, 'wrong_passphrase');
      }
    } else if (body.passphrase !== undefined) {
      throw badRequest('the private key is not protected: omit passphrase');
    }
  } else if (body.passphrase !== undefined) {
    throw badRequest('passphrase applies to private keys only');
  }
  await keepVerified(key);
  if (key.isPrivate()) await checkSecretKeys(key as openpgp.PrivateKey);
  const meta = await metaOf(key, { description: body.description, tags: body.tags, source: 'imported' });
  const secret = key.isPrivate() ? { private_key: key.armor() } : undefined;
  const rec = await createKey<GpgMeta, GpgSecret>(ctx, TYPE, { name: body.name, meta, secret });
  return keyView(rec);
}

export const getGpgKey = (ctx: CallContext, id: string) => getKey<GpgMeta>(ctx, TYPE, id);

export async function exportGpgKey(ctx: CallContext, id: string, includePrivate: boolean) {
  const stored = await getKey<GpgMeta>(ctx, TYPE, id);
  const { meta } = stored.record;
  const out: Record<string, unknown> = {
    id,
    name: stored.record.name,
    format: 'armored',
    fingerprint: meta.fingerprint,
    public_key: meta.public_key,
  };
  if (includePrivate) {
    const secret = await exportSecret<GpgMeta, GpgSecret>(ctx, TYPE, stored, 'armored private key');
    if (!secret) throw badRequest('this GPG key was imported without its private part', undefined, 'no_private_key');
    out.private_key = secret.private_key;
  }
  return out;
}
