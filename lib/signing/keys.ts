import { createHash, createPublicKey } from 'node:crypto';
import * as z from 'zod/v4';
import type { CallContext } from '../auth/principal.js';
import { fieldIssues, validationFailed } from '../core/errors.js';
import { newId } from '../ids.js';
import { logger } from '../core/logger.js';
import { keys } from '../store/keys.js';
import { decodeCursor, encodeCursor, queryPages } from '../store/pagination.js';
import { describeKey, publicSpkiPem } from '../pki/keys.js';
import { createResource, readResource, toRecord, type ResourceRecord } from '../resources/store.js';
import { KEY_SPECS, SIGNING_ALGORITHMS, algorithmsFor, type KeySpec, type SigningAlgorithm } from './algorithms.js';
import type { KeyRef } from './backend.js';
import { BACKEND_NAMES, signingBackend } from './registry.js';
import { signingError } from './errors.js';

/**
 * Backend-held signing keys. Each is a `code_signing_key` resource (lib/resources/store.ts:
 * head `T#<tenant>` / `R#code_signing_key#<id>`, tenant-first), stored in the layout of the
 * code-signing-keys collection (functions/credentials: meta = description, tags,
 * secret_fields and the public fields), so the collection lists, reads, updates and
 * exports it like any other code-signing key. Its fields map the account's key id (the
 * resource id) to the object inside the backend — `key_handle`: the PKCS#11 private key's
 * CKA_LABEL `<tenant id>/<handle id>` (CKA_ID = the handle id's 16 bytes), or the KMS key
 * ARN — and keep the public key. It has no secret part: the private key never leaves the
 * backend, so an export can only ever return the public key (and a certificate, if set).
 */
export const SIGNING_KEY_TYPE = 'code_signing_key';

/** The stored fields of a backend-held key (beside description, tags, secret_fields). */
interface HsmKeyMeta {
  readonly description?: string;
  readonly tags?: string[];
  readonly backend: string;
  readonly origin: 'generated';
  readonly exportable: false;
  /** As for software keys (lib/pki/keys.ts describeKey): RSA, EC or Ed25519. */
  readonly algorithm: string;
  readonly key_size: number;
  readonly curve?: string;
  readonly key_spec: KeySpec;
  /** The one algorithm this key signs with (lib/signing/algorithms.ts). */
  readonly signing_algorithm: SigningAlgorithm;
  /** SubjectPublicKeyInfo, PEM. */
  readonly public_key: string;
  /** SHA-256 of the SubjectPublicKeyInfo DER, lower-case hex. */
  readonly fingerprint_sha256: string;
  /** Where the private key lives: PKCS#11 CKA_LABEL, or the KMS key ARN. */
  readonly key_handle: string;
  /** PKCS#11 CKA_ID, hex. */
  readonly key_object_id?: string;
  readonly token_label?: string;
  readonly secret_fields?: string[];
}

const ALIASES: Record<string, KeySpec> = {
  P256: 'EC_P256',
  P_256: 'EC_P256',
  EC_P_256: 'EC_P256',
  ECDSA_P256: 'EC_P256',
  ECDSA_P256_SHA256: 'EC_P256',
  P384: 'EC_P384',
  P_384: 'EC_P384',
  EC_P_384: 'EC_P384',
  ECDSA_P384: 'EC_P384',
  ECDSA_P384_SHA384: 'EC_P384',
  EDDSA: 'ED25519',
  RSA2048: 'RSA_2048',
  RSA3072: 'RSA_3072',
  RSA4096: 'RSA_4096',
};

/** Every spelling of one name that reads as it: any case, `-` or `_` between its parts. */
const spellingsOf = (name: string) => [...name].map((c) => (c === '_' ? '[-_]' : /[A-Z]/.test(c) ? `[${c}${c.toLowerCase()}]` : c)).join('');
/**
 * What `algorithm` accepts, as a pattern the description carries (the request validator and
 * any client check it the same way): a key spec or one of its aliases, in any case, `-` or `_`,
 * blanks around it ignored.
 */
const KEY_SPEC_SPELLING = new RegExp(`^\\s*(?:${[...KEY_SPECS, ...Object.keys(ALIASES)].map(spellingsOf).join('|')})\\s*$`);

/** A key spec, case-insensitive, `-` or `_` (EC_P256, ecdsa-p256, P-256, Ed25519, RSA-3072, ...). */
export const KeySpecField = z
  .string()
  .regex(KEY_SPEC_SPELLING, {
    message: `must be one of ${KEY_SPECS.join(', ')} (any case, - or _; aliases such as P-256, ecdsa-p384, rsa-3072)`,
  })
  .meta({
    description: `The key spec: ${KEY_SPECS.join(', ')}, in any case with \`-\` or \`_\`, or an alias (P-256, ECDSA_P384, EdDSA, RSA3072, ...).`,
  })
  .transform((v) => {
    const n = v.trim().toUpperCase().replace(/-/g, '_');
    return ALIASES[n] ?? n;
  })
  .pipe(z.enum(KEY_SPECS));

/** What a backend key is created from (the code-signing-keys POST body's backend variant). */
const BackendKeyInput = z.strictObject({
  backend: z.enum(BACKEND_NAMES),
  algorithm: KeySpecField,
  /** RSA keys: RSA_PKCS1_SHA256 (default) or RSA_PSS_SHA256; other specs have exactly one. */
  signing_algorithm: z.enum(SIGNING_ALGORITHMS).optional(),
});
type BackendKeyInput = z.input<typeof BackendKeyInput>;

const CreateHsmKeyInput = BackendKeyInput.extend({
  name: z.string().trim().min(1).max(128),
  description: z.string().max(1024).optional(),
  tags: z.array(z.string().min(1).max(64)).max(50).optional(),
  container_id: z.uuid().nullable().optional(),
});
type CreateHsmKeyInput = z.input<typeof CreateHsmKeyInput>;

/** Whether a code-signing-key record is held by a backend (versus a software key). */
const isBackendKey = (meta: unknown): meta is HsmKeyMeta => {
  const m = meta as Partial<HsmKeyMeta> | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    typeof m.backend === 'string' &&
    typeof m.key_handle === 'string' &&
    typeof m.signing_algorithm === 'string'
  );
};

export const refOf = (meta: HsmKeyMeta): KeyRef => ({ handle: meta.key_handle, ...(meta.key_object_id ? { object_id: meta.key_object_id } : {}) });

const parseOr400 = <T>(schema: z.ZodType<T>, raw: unknown): T => {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationFailed(fieldIssues('body', parsed.error.issues));
  return parsed.data;
};

/**
 * Generates a key pair inside a backend and returns the fields to store for it (the
 * create hook of the code-signing-keys collection). The private key is generated
 * sensitive and non-extractable and labelled `<tenant id>/<handle id>`. Device failure →
 * 502; backend not configured here → 503; a spec the backend cannot generate → 400.
 */
export async function generateBackendKey(ctx: CallContext, raw: BackendKeyInput): Promise<HsmKeyMeta> {
  const input = parseOr400(BackendKeyInput, raw);
  const allowed = algorithmsFor(input.algorithm);
  const algorithm = input.signing_algorithm ?? allowed[0]!;
  if (!allowed.includes(algorithm))
    throw validationFailed([{ path: 'body.signing_algorithm', message: `a ${input.algorithm} key signs with ${allowed.join(' or ')}` }]);
  const backend = signingBackend(input.backend)!;
  let generated: Awaited<ReturnType<typeof backend.generateKey>>;
  try {
    generated = await backend.generateKey(input.algorithm, { tenantId: ctx.principal.tenantId, keyId: newId() });
  } catch (error) {
    throw signingError(error);
  }
  const pub = createPublicKey({ key: generated.spki, format: 'der', type: 'spki' });
  const facts = describeKey(pub);
  return {
    backend: backend.name,
    origin: 'generated',
    exportable: false,
    algorithm: facts.algorithm,
    key_size: facts.bits,
    ...(facts.curve ? { curve: facts.curve } : {}),
    key_spec: input.algorithm,
    signing_algorithm: algorithm,
    public_key: publicSpkiPem(pub),
    fingerprint_sha256: createHash('sha256').update(generated.spki).digest('hex'),
    key_handle: generated.ref.handle,
    ...(generated.ref.object_id ? { key_object_id: generated.ref.object_id } : {}),
    ...(backend.tokenLabel ? { token_label: backend.tokenLabel } : {}),
  };
}

/**
 * Generates a backend key and records it as a code-signing key in one call (what the
 * collection's POST does, for library callers): first the device, then the resource with
 * its audit entry and event in one transaction; if that write fails the new device key is
 * destroyed again.
 */
export async function createHsmKey(ctx: CallContext, raw: CreateHsmKeyInput): Promise<ResourceRecord<HsmKeyMeta>> {
  const input = parseOr400(CreateHsmKeyInput, raw);
  const fields = await generateBackendKey(ctx, { backend: input.backend, algorithm: input.algorithm, signing_algorithm: input.signing_algorithm });
  const meta: HsmKeyMeta = { description: input.description ?? '', tags: input.tags ? [...new Set(input.tags)] : [], ...fields, secret_fields: [] };
  try {
    return await createResource<HsmKeyMeta, never>(
      ctx,
      { type: SIGNING_KEY_TYPE, name: input.name, meta, container_id: input.container_id ?? null },
      (rec) => ({
        action: `${SIGNING_KEY_TYPE}.create`,
        resource: { type: SIGNING_KEY_TYPE, id: rec.id, name: rec.name },
        detail: {
          backend: meta.backend,
          key_spec: meta.key_spec,
          signing_algorithm: meta.signing_algorithm,
          fingerprint_sha256: meta.fingerprint_sha256,
        },
        event: { type: 'credential.created', data: { id: rec.id, type: SIGNING_KEY_TYPE, name: rec.name, version: rec.version } },
      }),
    );
  } catch (error) {
    await destroySigningKey(meta).catch((e: unknown) =>
      logger.warn('orphan signing key not destroyed', { backend: meta.backend, key_handle: meta.key_handle, error: e as Error }),
    );
    throw error;
  }
}

/** The caller's backend-held key, or undefined (missing, another account's, or not backend-held). */
export async function readSigningKey(tenantId: string, keyId: string): Promise<ResourceRecord<HsmKeyMeta> | undefined> {
  const stored = await readResource<HsmKeyMeta>(tenantId, SIGNING_KEY_TYPE, keyId);
  if (!stored || !isBackendKey(stored.record.meta)) return undefined;
  return stored.record;
}

/** The public view of a backend-held key (GET /api/v1/crypto/signing-keys): never its handle. */
function renderSigningKey(rec: ResourceRecord<HsmKeyMeta>) {
  return {
    key_id: rec.id,
    name: rec.name,
    backend: rec.meta.backend,
    key_spec: rec.meta.key_spec,
    algorithm: rec.meta.signing_algorithm,
    public_key: rec.meta.public_key,
    fingerprint_sha256: rec.meta.fingerprint_sha256,
    ...(rec.meta.token_label ? { token_label: rec.meta.token_label } : {}),
    created_at: rec.created_at,
    created_by: rec.created_by,
  };
}

/** Destroys the key inside its backend (the delete hook of the collection). */
async function destroySigningKey(meta: HsmKeyMeta): Promise<void> {
  const backend = signingBackend(meta.backend);
  if (!backend) return;
  try {
    await backend.destroyKey(refOf(meta));
  } catch (error) {
    throw signingError(error);
  }
}

interface SigningKeyPage {
  readonly keys: ReturnType<typeof renderSigningKey>[];
  readonly nextCursor?: string;
}

/**
 * The caller's backend-held keys (of one backend, or all): one Query on the tenant's
 * partition under `R#code_signing_key#`, filtered to backend keys, newest id last.
 */
export async function listSigningKeys(ctx: CallContext, query: { backend?: string; limit: number; cursor?: string }): Promise<SigningKeyPage> {
  const pk = keys.tenant(ctx.principal.tenantId).pk;
  const prefix = keys.resourcePrefix(SIGNING_KEY_TYPE);
  const out: ResourceRecord<HsmKeyMeta>[] = [];
  const start = query.cursor ? { pk, sk: decodeCursor(query.cursor, prefix) } : undefined;
  const filter = {
    expression: query.backend ? '#m.#b = :b' : 'attribute_exists(#m.#b)',
    names: { '#m': 'meta', '#b': 'backend' },
    values: query.backend ? { ':b': query.backend } : {},
  };
  for await (const page of queryPages({ pk, sk: { prefix }, filter }, { start })) {
    const items = page.items.filter((i) => isBackendKey(i.meta));
    for (const [n, item] of items.entries()) {
      out.push(toRecord<HsmKeyMeta>(item));
      if (out.length === query.limit) {
        const more = n < items.length - 1 || page.more;
        return { keys: out.map(renderSigningKey), ...(more ? { nextCursor: encodeCursor(item.sk as string) } : {}) };
      }
    }
  }
  return { keys: out.map(renderSigningKey) };
}
