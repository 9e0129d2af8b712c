import { createPrivateKey } from 'node:crypto';
import sshpk from 'sshpk';
import type { CallContext } from '../auth/principal.js';
import { badRequest } from '../core/errors.js';
import { assertPrivateKeyConsistent, generateKeyPair, privatePkcs8Pem, type KeySpec } from '../pki/keys.js';
import { createKey, exportSecret, getKey, keyView, type KeyView } from './common.js';
import type { KeyMetaBase } from '../catalog.js';

/**
 * SSH keys: generated with node:crypto, parsed and serialized by sshpk. The private key is
 * stored (sealed) in OpenSSH format; the public key in `authorized_keys` form and the
 * SHA-256 fingerprint exactly as `ssh-keygen -l` prints it are public metadata.
 */
const TYPE = 'ssh_key';

interface SshMeta extends KeyMetaBase {
  /** The OpenSSH key type, e.g. ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa. */
  readonly key_type: string;
  readonly comment: string;
  /** SHA256:… as `ssh-keygen -l -E sha256` prints it. */
  readonly fingerprint: string;
  readonly fingerprint_md5: string;
}
interface SshSecret {
  readonly private_key: string;
}

interface GenerateSsh {
  name: string;
  algorithm: 'ed25519' | 'ecdsa' | 'rsa';
  bits?: number;
  comment?: string;
  description?: string;
  tags?: string[];
}
interface ImportSsh {
  name: string;
  private_key?: string;
  public_key?: string;
  passphrase?: string;
  comment?: string;
  description?: string;
  tags?: string[];
}

function specFor(body: GenerateSsh): KeySpec {
  switch (body.algorithm) {
    case 'ed25519':
      if (body.bits !== undefined && body.bits !== 256) throw badRequest('ed25519 keys are 256 bits');
      return { kind: 'ed25519' };
    case 'ecdsa': {
      const bits = body.bits ?? 256;
      if (bits !== 256 && bits !== 384 && bits !== 521) throw badRequest('ecdsa keys are 256, 384 or 521 bits');
      return { kind: 'ec', curve: `P-${bits}` as 'P-256' | 'P-384' | 'P-521' };
    }
    case 'rsa': {
      const bits = body.bits ?? 3072;
      if (bits !== 3072 && bits !== 4096) throw badRequest('rsa keys are 3072 or 4096 bits');
      return { kind: 'rsa', bits };
    }
  }
}

function metaOf(
  key: sshpk.Key | sshpk.PrivateKey,
  base: { comment: string; description?: string; tags?: string[]; source: 'generated' | 'imported'; hasPrivate: boolean },
): SshMeta {
  key.comment = base.comment;
  const pub = key instanceof sshpk.PrivateKey ? key.toPublic() : key;
  pub.comment = base.comment;
  const line = pub.toString('ssh').trim();
  return {
    algorithm: key.type,
    bits: key.size,
    curve: key.curve ?? null,
    key_type: line.split(' ')[0]!,
    comment: base.comment,
    fingerprint: pub.fingerprint('sha256').toString(),
    fingerprint_md5: pub.fingerprint('md5').toString(),
    public_key: line,
    expires_at: null,
    has_private_key: base.hasPrivate,
    source: base.source,
    description: base.description ?? '',
    tags: base.tags ?? [],
  };
}

export async function generateSshKey(ctx: CallContext, body: GenerateSsh): Promise<KeyView> {
  const pair = await generateKeyPair(specFor(body));
  const key = sshpk.parsePrivateKey(privatePkcs8Pem(pair.privateKey), 'pem');
  const comment = body.comment ?? body.name;
  const meta = metaOf(key, { comment, description: body.description, tags: body.tags, source: 'generated', hasPrivate: true });
  const rec = await createKey<SshMeta, SshSecret>(ctx, TYPE, { name: body.name, meta, secret: { private_key: key.toString('openssh') } });
  return keyView(rec);
}

const SUPPORTED = new Set(['rsa', 'ecdsa', 'ed25519']);

/** Parses an OpenSSH or PEM private key and checks its consistency (lib/pki/keys.ts assertPrivateKeyConsistent). */
function parsePrivate(text: string, passphrase?: string): sshpk.PrivateKey {
  const key = readPrivate(text, passphrase);
  if (SUPPORTED.has(key.type)) assertPrivateKeyConsistent(createPrivateKey(key.toString('pkcs8')));
  return key;
}

function readPrivate(text: string, passphrase?: string): sshpk.PrivateKey {
  try {
    return sshpk.parsePrivateKey(text, 'auto', passphrase !== undefined ? { passphrase } : undefined);
  } catch (error) {
    const name = (error as Error).name;
    const message = (error as Error).message ?? '';
    if (name === 'KeyEncryptedError') throw badRequest('the private key is encrypted: send its passphrase', undefined, 'passphrase_required');
    if (/passphrase/i.test(message)) throw badRequest('wrong passphrase: the private key could not be decrypted', undefined, 'wrong_passphrase');
    throw badRequest('private_key is not a valid OpenSSH or PEM private key', undefined, 'invalid_key');
  }
}

function parsePublic(text: string): sshpk.Key {
  try {
    return sshpk.parseKey(text, 'auto');
  } catch {
    throw badRequest('public_key is not a valid SSH public key (authorized_keys line or PEM)', undefined, 'invalid_key');
  }
}

export async function importSshKey(ctx: CallContext, body: ImportSsh): Promise<KeyView> {
  if ((body.private_key === undefined) === (body.public_key === undefined)) throw badRequest('send exactly one of private_key and public_key');
  if (body.public_key !== undefined && body.passphrase !== undefined) throw badRequest('passphrase applies to private_key only');
  const key: sshpk.Key | sshpk.PrivateKey =
    body.private_key !== undefined ? parsePrivate(body.private_key, body.passphrase) : parsePublic(body.public_key!);
  if (!SUPPORTED.has(key.type)) throw badRequest(`unsupported SSH key type ${key.type}: use ed25519, ecdsa or rsa`, undefined, 'invalid_key');
  if (key.type === 'rsa' && key.size < 2048) throw badRequest('RSA keys shorter than 2048 bits are refused', undefined, 'invalid_key');
  const comment = body.comment ?? (key.comment && key.comment !== '(unnamed)' ? key.comment : body.name);
  const hasPrivate = key instanceof sshpk.PrivateKey;
  const meta = metaOf(key, { comment, description: body.description, tags: body.tags, source: 'imported', hasPrivate });
  const secret = hasPrivate ? { private_key: (key as sshpk.PrivateKey).toString('openssh') } : undefined;
  const rec = await createKey<SshMeta, SshSecret>(ctx, TYPE, { name: body.name, meta, secret });
  return keyView(rec);
}

export async function getSshKey(ctx: CallContext, id: string) {
  return getKey<SshMeta>(ctx, TYPE, id);
}

/** The export: the authorized_keys line always, the OpenSSH private key when asked (and allowed). */
export async function exportSshKey(ctx: CallContext, id: string, includePrivate: boolean) {
  const stored = await getKey<SshMeta>(ctx, TYPE, id);
  const { meta } = stored.record;
  const out: Record<string, unknown> = {
    id,
    name: stored.record.name,
    format: 'openssh',
    fingerprint: meta.fingerprint,
    public_key: `${meta.public_key}\n`,
  };
  if (includePrivate) {
    const secret = await exportSecret<SshMeta, SshSecret>(ctx, TYPE, stored, 'openssh private key');
    if (!secret) throw badRequest('this SSH key was imported without its private part', undefined, 'no_private_key');
    out.private_key = secret.private_key;
  }
  return out;
}
