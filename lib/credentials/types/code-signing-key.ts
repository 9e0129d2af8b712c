import { createPublicKey } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../../auth/principal.js';
import { describeKey, generateKeyPair, parsePrivateKeyPem, privatePkcs8Pem, publicSpkiPem, spkiFingerprint, type KeySpec } from '../../pki/keys.js';
import { certPem, certPublicKey, parseCertificates } from '../../pki/x509.js';
import { CertificatePem, PrivateKeyPem, Secret } from '../fields.js';
import { Problems, type Fields, type TypeSpec } from '../model.js';
import { HSM_CODE_SIGNING_BACKENDS } from '../../signing/code-signing-backends.js';

/**
 * Code-signing keys. How a key comes to exist is its backend's business:
 *
 * - `software` (default): imported (PEM `private_key`, optionally encrypted with
 *   `private_key_passphrase`) or generated here (`generate`); the private key is sealed.
 *   Only an imported key may be marked `exportable`; GET /{id}/export returns its private
 *   key to a caller with export:read, and only when asked (`include_private_key=true`).
 *
 * Extension point: another backend (e.g. `pkcs11`, the key generated inside an HSM, only
 * its handle and public key stored) is one more entry in CODE_SIGNING_BACKENDS: `body` is
 * its POST body (with `backend: z.literal('<name>')`), `create` returns the fields to
 * store (public ones: algorithm, public_key, fingerprint, key_label, ...; secret ones:
 * those listed in `secret`). Export and GET then never find a private key for it.
 */
interface CodeSigningBackend {
  readonly body: z.ZodObject;
  /** Secret fields this backend stores (sealed). */
  readonly secret: readonly string[];
  create(ctx: CallContext, body: Fields): Promise<Fields>;
}

const PLATFORMS = ['authenticode', 'apple-codesign', 'java-jar', 'android-apk', 'gpg', 'sigstore', 'nuget', 'generic'] as const;
const GENERATE: Record<string, KeySpec> = {
  'rsa-3072': { kind: 'rsa', bits: 3072 },
  'rsa-4096': { kind: 'rsa', bits: 4096 },
  'ecdsa-p256': { kind: 'ec', curve: 'P-256' },
  'ecdsa-p384': { kind: 'ec', curve: 'P-384' },
  ed25519: { kind: 'ed25519' },
};

/** Public facts of a key pair and the checked certificate chain (leaf first). */
function keyFacts(publicKey: ReturnType<typeof createPublicKey>, chainPem: string | undefined): Fields {
  const facts = describeKey(publicKey);
  return {
    algorithm: facts.algorithm,
    key_size: facts.bits,
    ...(facts.curve ? { curve: facts.curve } : {}),
    public_key: publicSpkiPem(publicKey),
    fingerprint_sha256: spkiFingerprint(publicKey),
    ...chainFacts(publicKey, chainPem),
  };
}

/** The certificate chain must start with a certificate of this key; its validity is the key's expiry. */
function chainFacts(publicKey: ReturnType<typeof createPublicKey>, chainPem: string | undefined): Fields {
  if (chainPem === undefined) return { certificate_chain: undefined, certificate_subject: undefined, expires_at: undefined };
  const certs = parseCertificates(chainPem);
  const leafSpki = certs[0] && certPublicKey(certs[0]).export({ type: 'spki', format: 'der' });
  new Problems()
    .check(
      !!leafSpki && leafSpki.equals(publicKey.export({ type: 'spki', format: 'der' })),
      'certificate_chain',
      'the first certificate does not belong to this key',
    )
    .throwIfAny();
  return { certificate_chain: certs.map(certPem).join(''), certificate_subject: certs[0]!.subject, expires_at: certs[0]!.notAfter.toISOString() };
}

const software: CodeSigningBackend = {
  body: z.strictObject({
    backend: z.literal('software'),
    platform: z.enum(PLATFORMS).default('generic'),
    private_key: PrivateKeyPem.optional(),
    private_key_passphrase: Secret(1024).optional(),
    generate: z.enum(Object.keys(GENERATE) as [string, ...string[]]).optional(),
    certificate_chain: CertificatePem.optional(),
    exportable: z.boolean().default(false),
  }),
  secret: ['private_key'],
  async create(_ctx, b) {
    const p = new Problems();
    p.check((b.private_key === undefined) !== (b.generate === undefined), 'private_key', 'send either private_key (import) or generate');
    p.check(!(b.generate !== undefined && b.exportable), 'exportable', 'only imported keys can be exportable');
    p.throwIfAny();
    const key =
      b.generate !== undefined
        ? (await generateKeyPair(GENERATE[b.generate as string]!)).privateKey
        : parsePrivateKeyPem(b.private_key as string, b.private_key_passphrase as string | undefined);
    const pub = createPublicKey(key);
    return {
      backend: 'software',
      platform: b.platform,
      origin: b.generate !== undefined ? 'generated' : 'imported',
      exportable: b.exportable,
      ...keyFacts(pub, b.certificate_chain as string | undefined),
      private_key: privatePkcs8Pem(key),
    };
  },
};

// pkcs11 / kms: the key is generated inside the signing backend (functions/signing/code-signing-backends.ts)
export const CODE_SIGNING_BACKENDS: Readonly<Record<string, CodeSigningBackend>> = { software, ...HSM_CODE_SIGNING_BACKENDS };

export const codeSigningKey: TypeSpec = {
  type: 'code_signing_key',
  summary: 'A code-signing key pair with its certificate chain; the private key is never shown, and exported only when imported as exportable.',
  fields: { key: 'backend', default: 'software', options: Object.values(CODE_SIGNING_BACKENDS).map((b) => b.body) },
  secret: [...new Set(Object.values(CODE_SIGNING_BACKENDS).flatMap((b) => b.secret))],
  update: 'merge',
  updateFields: z.strictObject({ platform: z.enum(PLATFORMS), certificate_chain: CertificatePem.nullable() }),
  updateSemantics:
    'Partial update: name, description, tags, platform and certificate_chain (a renewed certificate for the same key; null removes it) change when given; the key, its backend and exportable never change.',
  expires: 'expires_at',
  shown: { algorithm: z.string().describe('The signing algorithm (a software or imported key: its key algorithm).') },
  createErrors: ['service_unavailable', 'device_error', 'invalid_key', 'passphrase_required', 'wrong_passphrase'],
  async prepare(ctx, f, current) {
    if (current === undefined) return CODE_SIGNING_BACKENDS[f.backend as string]!.create(ctx, f);
    const chain = f.certificate_chain === null ? undefined : (f.certificate_chain as string | undefined);
    return { ...f, ...chainFacts(createPublicKey(f.public_key as string), chain) };
  },
};

/* Responses of the code-signing collection's own route (functions/credentials/code-signing-keys.ts). */
export const CodeSigningExport = z.strictObject({
  code_signing_key: z.strictObject({
    id: z.uuid(),
    name: z.string(),
    backend: z.string().describe('Where the private key lives.'),
    algorithm: z.string(),
    public_key: z.string().describe('The public key (PEM).'),
    fingerprint_sha256: z.string(),
    certificate_chain: z.string().nullable().describe('The PEM certificate chain, when one was stored.'),
    exportable: z.boolean(),
    private_key: z.string().optional().describe('The PKCS#8 private key (PEM), with `include_private_key=true` only.'),
  }),
});
