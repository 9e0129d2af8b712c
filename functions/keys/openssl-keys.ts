import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../../lib/auth/principal.js';
import { badRequest, created, defineHandler, ok } from '../../lib/http/index.js';
import { crossFieldRule, listPage } from '../../lib/schemas.js';
import {
  describeKey,
  generateKeyPair,
  parsePrivateKeyPem,
  parsePublicKeyPem,
  privatePkcs8Pem,
  publicSpkiPem,
  spkiFingerprint,
  type KeySpec,
} from '../../lib/pki/keys.js';
import { createKey, deleteKey, etagOf, exportSecret, getKey, keyView, listKeys, type KeyView } from '../../lib/keys/common.js';
import {
  Description,
  IdParams,
  keyFamilyResponses,
  KeyName,
  KeyText,
  ListQuery,
  OpensslKey,
  OpensslKeyExport,
  Passphrase,
  Tags,
} from '../../lib/keys/schemas.js';
import type { KeyMetaBase } from '../../lib/catalog.js';

/**
 * /api/v1/openssl-keys: RSA, EC and Ed25519 keys with node:crypto, in PEM (PKCS#8 for the
 * private key, SPKI for the public key). The export route's own scopes
 * (credentials:read + export:read) are those of private material, so it returns both parts.
 */
const TYPE = 'openssl_key';

interface OpensslMeta extends KeyMetaBase {}
interface OpensslSecret {
  readonly private_key: string;
}

function metaOf(pub: KeyObject, base: { description?: string; tags?: string[]; source: 'generated' | 'imported'; hasPrivate: boolean }): OpensslMeta {
  const facts = describeKey(pub);
  if (facts.algorithm === 'X25519') throw badRequest('X25519 keys are not supported here: use RSA, EC or Ed25519', undefined, 'invalid_key');
  return {
    algorithm: facts.algorithm.toLowerCase(),
    bits: facts.bits,
    curve: facts.curve,
    fingerprint: spkiFingerprint(pub),
    public_key: publicSpkiPem(pub),
    expires_at: null,
    has_private_key: base.hasPrivate,
    source: base.source,
    description: base.description ?? '',
    tags: base.tags ?? [],
  };
}

const GenerateBody = crossFieldRule(
  crossFieldRule(
    z.strictObject({
      name: KeyName,
      algorithm: z.enum(['rsa', 'ec', 'ed25519']).default('rsa'),
      bits: z.union([z.literal(2048), z.literal(3072), z.literal(4096)]).optional(),
      curve: z.enum(['P-256', 'P-384', 'P-521']).optional(),
      description: Description.optional(),
      tags: Tags.optional(),
    }),
    (b) => b.algorithm === 'rsa' || b.bits === undefined,
    // algorithm defaults to rsa
    { not: { required: ['bits', 'algorithm'], properties: { algorithm: { not: { const: 'rsa' } } } } },
    'bits applies to rsa keys only',
    'bits',
  ),
  (b) => b.algorithm === 'ec' || b.curve === undefined,
  { anyOf: [{ not: { required: ['curve'] } }, { required: ['algorithm'], properties: { algorithm: { const: 'ec' } } }] },
  'curve applies to ec keys only',
  'curve',
);

const ImportBody = z.strictObject({
  name: KeyName,
  private_key: KeyText.optional(),
  public_key: KeyText.optional(),
  passphrase: Passphrase.optional(),
  description: Description.optional(),
  tags: Tags.optional(),
});

const ExportQuery = z.strictObject({ format: z.enum(['pem', 'der', 'jwk']).default('pem') });

async function generateOpensslKey(ctx: CallContext, body: z.infer<typeof GenerateBody>): Promise<KeyView> {
  const spec: KeySpec =
    body.algorithm === 'rsa'
      ? { kind: 'rsa', bits: body.bits ?? 3072 }
      : body.algorithm === 'ec'
        ? { kind: 'ec', curve: body.curve ?? 'P-256' }
        : { kind: 'ed25519' };
  const pair = await generateKeyPair(spec);
  const meta = metaOf(pair.publicKey, { description: body.description, tags: body.tags, source: 'generated', hasPrivate: true });
  return keyView(
    await createKey<OpensslMeta, OpensslSecret>(ctx, TYPE, { name: body.name, meta, secret: { private_key: privatePkcs8Pem(pair.privateKey) } }),
  );
}

async function importOpensslKey(ctx: CallContext, body: z.infer<typeof ImportBody>): Promise<KeyView> {
  if ((body.private_key === undefined) === (body.public_key === undefined)) throw badRequest('send exactly one of private_key and public_key');
  if (body.public_key !== undefined && body.passphrase !== undefined) throw badRequest('passphrase applies to private_key only');
  if (body.private_key !== undefined) {
    const priv = parsePrivateKeyPem(body.private_key, body.passphrase);
    const pub = createPublicKey(priv);
    if (priv.asymmetricKeyType === 'rsa' && (priv.asymmetricKeyDetails?.modulusLength ?? 0) < 2048)
      throw badRequest('RSA keys shorter than 2048 bits are refused', undefined, 'invalid_key');
    const meta = metaOf(pub, { description: body.description, tags: body.tags, source: 'imported', hasPrivate: true });
    return keyView(await createKey<OpensslMeta, OpensslSecret>(ctx, TYPE, { name: body.name, meta, secret: { private_key: privatePkcs8Pem(priv) } }));
  }
  const pub = parsePublicKeyPem(body.public_key!);
  const meta = metaOf(pub, { description: body.description, tags: body.tags, source: 'imported', hasPrivate: false });
  return keyView(await createKey<OpensslMeta, OpensslSecret>(ctx, TYPE, { name: body.name, meta }));
}

function render(key: KeyObject, isPrivate: boolean, format: 'pem' | 'der' | 'jwk'): unknown {
  const type = isPrivate ? 'pkcs8' : 'spki';
  if (format === 'jwk') return key.export({ format: 'jwk' });
  if (format === 'der') return (key.export({ type, format: 'der' }) as Buffer).toString('base64');
  return key.export({ type, format: 'pem' });
}

const responses = keyFamilyResponses('openssl_key', OpensslKey, 'OpenSSL');

export const list = defineHandler({
  summary: 'List OpenSSL keys',
  description: 'The account’s RSA, EC and Ed25519 keys, public parts only, oldest first; page with `limit` and `offset` or `cursor`.',
  responses: { 200: responses.list },
  errors: ['bad_request'],
  query: ListQuery,
  async handler({ ctx, query }) {
    const page = await listKeys(ctx, TYPE, query);
    return ok(listPage('openssl_keys', page.items, page.nextCursor, query));
  },
});

export const get = defineHandler({
  summary: 'Read an OpenSSL key',
  description: 'The key’s public parts and metadata; the ETag names its version.',
  responses: { 200: responses.one },
  errors: ['not_found'],
  params: IdParams,
  async handler({ ctx, params }) {
    const { record } = await getKey<OpensslMeta>(ctx, TYPE, params.id);
    return ok({ openssl_key: keyView(record) }, { ETag: etagOf(record) });
  },
});

export const generate = defineHandler({
  summary: 'Generate an OpenSSL key',
  description: 'An RSA (`bits`, default 3072), EC (`curve`, default P-256) or Ed25519 key pair; the private part stays sealed until exported.',
  responses: { 201: responses.one },
  errors: ['already_exists'],
  body: GenerateBody,
  async handler({ ctx, body }) {
    const key = await generateOpensslKey(ctx, body);
    return created({ openssl_key: key }, { ETag: etagOf(key) });
  },
});

export const importKey = defineHandler({
  summary: 'Import an OpenSSL key',
  description: 'Stores a PEM private key (PKCS#8, PKCS#1 or SEC1; `passphrase` for an encrypted one) or a PEM public key alone.',
  responses: { 201: responses.one },
  errors: ['bad_request', 'invalid_key', 'passphrase_required', 'wrong_passphrase', 'already_exists'],
  body: ImportBody,
  async handler({ ctx, body }) {
    const key = await importOpensslKey(ctx, body);
    return created({ openssl_key: key }, { ETag: etagOf(key) });
  },
});

/** PEM (PKCS#8 + SPKI), DER (base64) or JWK; the private part whenever the key has one. */
export const exportKey = defineHandler({
  summary: 'Export an OpenSSL key',
  description: 'Both parts (the private one when the key has it, audited) as PEM, base64 DER or JWK (`format`).',
  responses: { 200: OpensslKeyExport },
  errors: ['not_found'],
  params: IdParams,
  query: ExportQuery,
  async handler({ ctx, params, query }) {
    const stored = await getKey<OpensslMeta>(ctx, TYPE, params.id);
    const pub = createPublicKey(stored.record.meta.public_key);
    const out: Record<string, unknown> = {
      id: params.id,
      name: stored.record.name,
      format: query.format,
      fingerprint: stored.record.meta.fingerprint,
      public_key: render(pub, false, query.format),
    };
    const secret = await exportSecret<OpensslMeta, OpensslSecret>(ctx, TYPE, stored, `${query.format} private key`);
    if (secret) out.private_key = render(createPrivateKey(secret.private_key), true, query.format);
    return ok({ export: out });
  },
});

export const remove = defineHandler({
  summary: 'Delete an OpenSSL key',
  description: 'Deletes the key and its private part. `If-Match` makes the delete conditional on the version read.',
  responses: { 200: responses.deleted },
  errors: ['not_found', 'stale_etag', 'precondition_failed'],
  params: IdParams,
  async handler({ ctx, params, headers }) {
    const rec = await deleteKey(ctx, TYPE, params.id, headers['if-match']);
    return ok({ deleted: true, openssl_key: { id: rec.id, name: rec.name } });
  },
});
