import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { serviceKeyProvider } from '../crypto/envelope.js';
import { KeyCache } from '../crypto/key-cache.js';
import { readSealedSession, writeSealedSession } from '../store/tenant-sessions.js';
import { type SessionCredentials, type SessionStore, TENANT_SESSION_PURPOSE } from '../tenancy/credentials.js';

/**
 * Tenant sessions shared between the containers and functions of one tenant-access role
 * (docs/capacity.md, "STS: AssumeRole within its quota"): 287 tenant routes run on 15 such
 * roles, so STS sees one AssumeRole per role and account an hour instead of one per
 * function, container and account.
 *
 * A session is sealed before it reaches the table (AES-256-GCM under a data key of the
 * envelope key, wrapped with the encryption context `{purpose: "tenant-session",
 * tenant_role: <role name>}`; the item's key is the additional data, so a sealed session
 * opens only as the session of that role and account). The function's own role reads and
 * writes only its tenant-access role's items and opens only that context (infra/grants.ts
 * `TenantSessionCache`, `TenantSessionKey`): it may assume that role for any account
 * already, so the store grants it nothing it did not have.
 */
const PURPOSE = TENANT_SESSION_PURPOSE;
/** A container seals with one data key for at most this long. */
const SEAL_KEY_MS = 3_600_000;
const MAX_OPEN_KEYS = 256;

const roleNameOf = (roleArn: string): string => roleArn.slice(roleArn.lastIndexOf('/') + 1);
const contextOf = (roleName: string) => ({ purpose: PURPOSE, tenant_role: roleName });
const aadOf = (roleName: string, tenantId: string) => Buffer.from(`${PURPOSE}\u0000${roleName}\u0000${tenantId}`);

/** The data key this container seals with, per role (one role per function), for SEAL_KEY_MS (lib/crypto/key-cache.ts). */
const sealKeys = new KeyCache<{ readonly plaintext: Buffer; readonly wrapped: Uint8Array }>({ max: 1, ttlMs: SEAL_KEY_MS });
/** Data keys opened, by their wrapped form: a container opens each key once. */
const opened = new KeyCache<Buffer>({ max: MAX_OPEN_KEYS, ttlMs: Number.POSITIVE_INFINITY });

const keyToSeal = (roleName: string) => sealKeys.get(roleName, () => serviceKeyProvider().generateDataKey(contextOf(roleName)));

const keyToOpen = (roleName: string, wrapped: Uint8Array): Promise<Buffer> =>
  opened.get(Buffer.from(wrapped).toString('base64'), () => serviceKeyProvider().decryptDataKey(wrapped, contextOf(roleName)));

export const tableSessionStore: SessionStore = {
  async get(roleArn, tenantId) {
    const role = roleNameOf(roleArn);
    const item = await readSealedSession(role, tenantId);
    if (!item || item.expiresAt * 1000 <= Date.now()) return undefined;
    const key = await keyToOpen(role, item.wrapped);
    const sealed = Buffer.from(item.sealed);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(item.iv));
    decipher.setAAD(aadOf(role, tenantId));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const json = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8'));
    return {
      accessKeyId: json.accessKeyId,
      secretAccessKey: json.secretAccessKey,
      sessionToken: json.sessionToken,
      expiration: new Date(json.expiration),
    } satisfies SessionCredentials;
  },
  async put(roleArn, tenantId, session) {
    const role = roleNameOf(roleArn);
    const key = await keyToSeal(role);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.plaintext, iv);
    cipher.setAAD(aadOf(role, tenantId));
    const plaintext = Buffer.from(JSON.stringify({ ...session, expiration: session.expiration.toISOString() }));
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    await writeSealedSession(role, tenantId, { wrapped: key.wrapped, iv, sealed, expiresAt: Math.floor(session.expiration.getTime() / 1000) });
  },
};
