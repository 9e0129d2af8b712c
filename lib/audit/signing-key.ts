import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { open, seal } from '../crypto/envelope.js';
import { nowIso } from '../ids.js';
import { putAuditKeyOnce, readAuditKey } from './store.js';

/**
 * Each account's audit signing key: an Ed25519 key pair made on first use. The private
 * key is sealed with the account's data key (envelope encryption, AAD bound to the tenant),
 * so a writer of the table without KMS cannot re-sign a rewritten chain; the public key is
 * published in every export's digest so customers can pin it.
 */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
}

interface AuditKey {
  readonly publicJwk: PublicJwk;
  /** Ed25519 signature of the UTF-8 message, base64url. */
  sign(message: string): string;
}

const scope = (tenantId: string) => ({ tenantId, type: 'audit-key', id: tenantId, version: 1 });
const cache = new Map<string, AuditKey>();

function toAuditKey(privateKey: KeyObject): AuditKey {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string };
  return {
    publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x },
    sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64url'),
  };
}

export async function auditKey(tenantId: string): Promise<AuditKey> {
  const hit = cache.get(tenantId);
  if (hit) return hit;
  const read = () => readAuditKey(tenantId);
  let item = await read();
  if (!item) {
    const pair = generateKeyPairSync('ed25519');
    const der = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
    const publicJwk = toAuditKey(pair.privateKey).publicJwk;
    await putAuditKeyOnce(tenantId, publicJwk, await seal(scope(tenantId), der), nowIso());
    item = await read(); // ours, or the one a concurrent sealer created first
    if (!item) throw new Error('audit key vanished');
  }
  const der = await open(scope(tenantId), item.private_key as Uint8Array);
  const key = toAuditKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
  if (cache.size > 5000) cache.delete(cache.keys().next().value as string);
  cache.set(tenantId, key);
  return key;
}
