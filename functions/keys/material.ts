import { base32 } from '@scure/base';
import sshpk from 'sshpk';
import { v4 as uuidv4, v7 as uuidv7 } from 'uuid';
import * as z from 'zod/v4';
import { requireScopes } from '../../lib/auth/scopes.js';
import { badRequest, created, defineHandler, ok } from '../../lib/http/index.js';
import { describeKey, generateKeyPair, privatePkcs8Pem, publicSpkiPem, spkiFingerprint, type KeyPair, type KeySpec } from '../../lib/pki/keys.js';
import { SecretName } from '../../lib/secrets/schemas.js';
import { createSecret } from '../../lib/secrets/service.js';
import { createKey, keyView } from '../../lib/keys/common.js';
import { generatePassword, randomBytesOf } from '../../lib/keys/material-core.js';
import { Description, GeneratedMaterial, Tags } from '../../lib/keys/schemas.js';

/**
 * POST /api/v1/generate-material: random material on demand, returned and not stored:
 * random bytes (hex, base64, base64url, base32), UUIDs (v4, v7), passwords, key pairs
 * (PEM, JWK or OpenSSH). With `store` (a single item) it is also kept: bytes, UUIDs and
 * passwords as a generic secret (needs secrets:write as well), a key pair as an OpenSSL
 * key (X25519 pairs cannot be stored).
 */
const Store = z.strictObject({ name: SecretName, description: Description.optional(), tags: Tags.optional() });
const Count = z.number().int().min(1).max(100).default(1);

const Body = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('bytes'),
    length: z.number().int().min(1).max(4096).default(32),
    encoding: z.enum(['hex', 'base64', 'base64url', 'base32']).default('hex'),
    count: Count,
    store: Store.optional(),
  }),
  z.strictObject({ type: z.literal('uuid'), version: z.enum(['v4', 'v7']).default('v4'), count: Count, store: Store.optional() }),
  z.strictObject({
    type: z.literal('password'),
    length: z.number().int().min(8).max(256).default(24),
    lowercase: z.boolean().default(true),
    uppercase: z.boolean().default(true),
    digits: z.boolean().default(true),
    symbols: z.boolean().default(true),
    exclude_ambiguous: z.boolean().default(false),
    count: Count,
    store: Store.optional(),
  }),
  z.strictObject({
    type: z.literal('key_pair'),
    algorithm: z.enum(['rsa-2048', 'rsa-3072', 'rsa-4096', 'ec-p256', 'ec-p384', 'ec-p521', 'ed25519', 'x25519']).default('ed25519'),
    format: z.enum(['pem', 'jwk', 'openssh']).default('pem'),
    count: z.number().int().min(1).max(10).default(1),
    store: Store.optional(),
  }),
]);
type Body = z.infer<typeof Body>;

const SPECS: Record<Extract<Body, { type: 'key_pair' }>['algorithm'], KeySpec> = {
  'rsa-2048': { kind: 'rsa', bits: 2048 },
  'rsa-3072': { kind: 'rsa', bits: 3072 },
  'rsa-4096': { kind: 'rsa', bits: 4096 },
  'ec-p256': { kind: 'ec', curve: 'P-256' },
  'ec-p384': { kind: 'ec', curve: 'P-384' },
  'ec-p521': { kind: 'ec', curve: 'P-521' },
  ed25519: { kind: 'ed25519' },
  x25519: { kind: 'x25519' },
};

function encode(bytes: Buffer, encoding: 'hex' | 'base64' | 'base64url' | 'base32'): string {
  return encoding === 'base32' ? base32.encode(bytes) : bytes.toString(encoding);
}

function renderPair(pair: KeyPair, format: 'pem' | 'jwk' | 'openssh', algorithm: string) {
  const base = { algorithm, fingerprint: spkiFingerprint(pair.publicKey) };
  if (format === 'jwk')
    return { ...base, format, private_key: pair.privateKey.export({ format: 'jwk' }), public_key: pair.publicKey.export({ format: 'jwk' }) };
  if (format === 'openssh') {
    const k = sshpk.parsePrivateKey(privatePkcs8Pem(pair.privateKey), 'pem');
    return {
      ...base,
      format,
      private_key: k.toString('openssh'),
      public_key: k.toPublic().toString('ssh'),
      ssh_fingerprint: k.fingerprint('sha256').toString(),
    };
  }
  return { ...base, format, private_key: privatePkcs8Pem(pair.privateKey), public_key: publicSpkiPem(pair.publicKey) };
}

export const generateMaterial = defineHandler({
  summary: 'Generate random material',
  description:
    'Random bytes, UUIDs, passwords or key pairs, returned and not stored (200). With `store` and `count` 1 the item is also kept (201): bytes, UUIDs and passwords as a secret (needs secrets:write), a key pair as an OpenSSL key.',
  responses: { 200: GeneratedMaterial, 201: GeneratedMaterial },
  errors: ['bad_request', 'insufficient_scope', 'already_exists', 'quota_exceeded'],
  body: Body,
  async handler({ ctx, body }) {
    if (body.store && body.count !== 1) throw badRequest('store keeps a single item: send count 1');
    if (body.type === 'key_pair') {
      if (body.format === 'openssh' && body.algorithm === 'x25519') throw badRequest('X25519 keys have no OpenSSH form: use pem or jwk');
      if (body.store && body.algorithm === 'x25519') throw badRequest('X25519 key pairs cannot be stored as OpenSSL keys');
      const pairs = await Promise.all(Array.from({ length: body.count }, () => generateKeyPair(SPECS[body.algorithm])));
      const material = pairs.map((p) => renderPair(p, body.format, body.algorithm));
      if (!body.store) return ok({ type: body.type, count: material.length, material, stored: null });
      const pair = pairs[0]!;
      const facts = describeKey(pair.publicKey);
      const rec = await createKey(ctx, 'openssl_key', {
        name: body.store.name,
        meta: {
          algorithm: facts.algorithm.toLowerCase(),
          bits: facts.bits,
          curve: facts.curve,
          fingerprint: spkiFingerprint(pair.publicKey),
          public_key: publicSpkiPem(pair.publicKey),
          expires_at: null,
          has_private_key: true,
          source: 'generated',
          description: body.store.description ?? '',
          tags: body.store.tags ?? [],
        },
        secret: { private_key: privatePkcs8Pem(pair.privateKey) },
      });
      return created({ type: body.type, count: 1, material, stored: keyView(rec) });
    }
    let values: string[];
    if (body.type === 'bytes') values = Array.from({ length: body.count }, () => encode(randomBytesOf(body.length), body.encoding));
    else if (body.type === 'uuid') values = Array.from({ length: body.count }, () => (body.version === 'v7' ? uuidv7() : uuidv4()));
    else {
      const enabled = [body.lowercase, body.uppercase, body.digits, body.symbols].filter(Boolean).length;
      if (enabled === 0) throw badRequest('enable at least one character class');
      values = Array.from({ length: body.count }, () => generatePassword(body));
    }
    const material = values.map((value) => ({ value }));
    if (!body.store) return ok({ type: body.type, count: material.length, material, stored: null });
    // storing as a generic secret is a secrets write
    requireScopes(ctx.principal, ['secrets:write']);
    const secret = await createSecret(ctx, {
      name: body.store.name,
      description: body.store.description,
      tags: body.store.tags,
      data: { value: values[0]! },
    });
    return created({ type: body.type, count: 1, material, stored: { type: 'secret', id: secret.id, name: secret.name, version: secret.version } });
  },
});
