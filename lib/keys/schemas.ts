import * as z from 'zod/v4';
import { atLeastOneField, Description, Tags } from '../schemas.js';

export { Description, Tags };
import { ListPage, PageQuery, Timestamp } from '../schemas.js';

/** Fields shared by every key family's requests. */
export const KeyName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._@:+-]*$/, 'letters, digits, space, ".", "_", "@", ":", "+" and "-", starting with a letter or digit');
/** A PEM/armored/OpenSSH text block. */
export const KeyText = z
  .string()
  .min(1)
  .max(64 * 1024);
export const Passphrase = z.string().min(1).max(1024);

export const IdParams = z.strictObject({ id: z.uuid() });
export type IdParams = z.infer<typeof IdParams>;

export const ListQuery = PageQuery;
export type ListQuery = z.infer<typeof ListQuery>;

/** `PUT /{id}` on a key: metadata only (the key material of a key never changes). */
export const UpdateKeyBody = atLeastOneField(
  z.strictObject({ name: KeyName.optional(), description: Description.optional(), tags: Tags.optional() }),
);
export type UpdateKeyBody = z.infer<typeof UpdateKeyBody>;

const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** `GET .../export?private=true`: the private part too (needs the export scopes). */
export const ExportQuery = z.strictObject({ private: bool.default(false) });
export const IncludePrivateQuery = z.strictObject({ include_private: bool.default(false) });

export const Email = z.email().max(254);
export const DnsName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'a DNS name');

/* Responses (lib/http/define-handler.ts `HandlerDoc`): what the key routes answer. */

/** A stored key's own fields (lib/keys/common.ts `keyView`): the record's and lib/catalog.ts `KeyMetaBase`. */
export const KEY_BASE = {
  id: z.uuid().describe('The key’s id.'),
  type: z.string().describe('The resource type, e.g. `ssh_key`.'),
  name: z.string().describe('The key’s name.'),
  algorithm: z.string().describe('The key algorithm, lower case (e.g. `rsa`, `ec`, `ed25519`).'),
  bits: z.int().nullable().describe('The key size in bits; null when the algorithm has none.'),
  curve: z.string().nullable().describe('The named curve of an EC or EdDSA key; null otherwise.'),
  fingerprint: z.string().describe('The key’s fingerprint in its family’s usual form.'),
  public_key: z.string().describe('The public key in its family’s usual text form.'),
  expires_at: Timestamp.nullable().describe('When the key (or its certificate) expires; null when never.'),
  has_private_key: z.boolean().describe('Whether the service holds the private part (exported only by the export routes).'),
  source: z.enum(['generated', 'imported', 'issued', 'acme']).describe('How the key came to the service.'),
  description: z.string().describe('Free text; empty when none.'),
  tags: z.array(z.string()),
  version: z.int().min(1).describe('Increases by one on every update; the ETag is `"<id>.<version>"`.'),
  created_at: Timestamp,
  updated_at: Timestamp,
  created_by: z.string().nullable().describe('The principal that created the key (null when unknown).'),
  updated_by: z.string().nullable().describe('The principal that last changed the key (null when unknown).'),
};

/** `{ deleted: true, <field>: { id, name } }`: a key's deletion. */
const keyDeleted = (field: string) => z.strictObject({ deleted: z.literal(true), [field]: z.strictObject({ id: z.uuid(), name: z.string() }) });

/** The responses of a key family's list, create/get/update and delete routes, over the schema of one key. */
export const keyFamilyResponses = (field: string, key: z.ZodType, label: string) => ({
  one: z.strictObject({ [field]: key }),
  list: ListPage(`${field}s`, key, { paged: true, describe: `The ${label} keys of this page, without their private parts.` }),
  deleted: keyDeleted(field),
});

export const SshKey = z
  .strictObject({
    ...KEY_BASE,
    type: z.literal('ssh_key'),
    key_type: z.string().describe('The OpenSSH key type, e.g. `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`.'),
    comment: z.string().describe('The key comment; empty when none.'),
    fingerprint: z.string().describe('`SHA256:…` as `ssh-keygen -l -E sha256` prints it.'),
    fingerprint_md5: z.string().describe('`MD5:…` as `ssh-keygen -l -E md5` prints it.'),
    public_key: z.string().describe('The authorized_keys line.'),
  })
  .describe('An SSH key, public parts only.');

export const GpgKey = z
  .strictObject({
    ...KEY_BASE,
    type: z.literal('gpg_key'),
    fingerprint: z.string().describe('The primary key’s fingerprint (upper-case hex).'),
    public_key: z.string().describe('The ASCII-armored public key.'),
    key_id: z.string().describe('The primary key’s long key id (upper-case hex).'),
    user_ids: z.array(z.string()).describe('The user ids, `Name (comment) <email>`.'),
    key_created_at: Timestamp.describe('The creation time written in the key.'),
    subkeys: z.array(
      z.strictObject({
        key_id: z.string(),
        fingerprint: z.string(),
        algorithm: z.string(),
        bits: z.int().nullable(),
        curve: z.string().nullable(),
      }),
    ),
  })
  .describe('An OpenPGP key, public parts only.');

export const OpensslKey = z
  .strictObject({
    ...KEY_BASE,
    type: z.literal('openssl_key'),
    fingerprint: z.string().describe('SHA-256 of the SubjectPublicKeyInfo (hex).'),
    public_key: z.string().describe('The public key, PEM (SPKI).'),
  })
  .describe('An RSA, EC or Ed25519 key, public parts only.');

/** `GET /{id}/export` of the SSH and GPG families: the public key, and the private key when asked. */
const keyExport = (format: string, publicText: string, privateText: string) =>
  z.strictObject({
    export: z.strictObject({
      id: z.uuid(),
      name: z.string(),
      format: z.literal(format),
      fingerprint: z.string(),
      public_key: z.string().describe(publicText),
      private_key: z.string().optional().describe(privateText),
    }),
  });
export const SshKeyExport = keyExport('openssh', 'The authorized_keys line.', 'The OpenSSH private key; with `?private=true` only.');
export const GpgKeyExport = keyExport('armored', 'The ASCII-armored public key.', 'The ASCII-armored private key; with `?private=true` only.');

const Jwk = z.looseObject({ kty: z.string() }).describe('A JSON Web Key (RFC 7517).');
/** A PEM string, base64 DER or a JWK, as `format` asked. */
const Rendered = z.union([z.string(), Jwk]);
export const OpensslKeyExport = z.strictObject({
  export: z.strictObject({
    id: z.uuid(),
    name: z.string(),
    format: z.enum(['pem', 'der', 'jwk']),
    fingerprint: z.string(),
    public_key: Rendered.describe('SPKI as PEM or base64 DER, or a public JWK.'),
    private_key: Rendered.optional().describe('PKCS#8 as PEM or base64 DER, or a private JWK; when the key has a private part.'),
  }),
});

/** POST /api/v1/generate-material. */
const KeyPairMaterial = z.strictObject({
  algorithm: z.string(),
  fingerprint: z.string().describe('SHA-256 of the SubjectPublicKeyInfo (hex).'),
  format: z.enum(['pem', 'jwk', 'openssh']),
  private_key: Rendered,
  public_key: Rendered,
  ssh_fingerprint: z.string().optional().describe('`SHA256:…` of the OpenSSH form.'),
});
export const GeneratedMaterial = z.strictObject({
  type: z.enum(['bytes', 'uuid', 'password', 'key_pair']),
  count: z.int().min(1),
  material: z
    .array(z.union([z.strictObject({ value: z.string() }), KeyPairMaterial]))
    .describe('The generated items: `{ value }` for bytes, UUIDs and passwords, a key pair otherwise.'),
  stored: z
    .union([
      OpensslKey,
      z
        .strictObject({ type: z.literal('secret'), id: z.uuid(), name: z.string(), version: z.int().min(1) })
        .describe('The secret that keeps the value.'),
    ])
    .nullable()
    .describe('What `store` kept: an OpenSSL key for a key pair, a secret otherwise; null without `store`.'),
});

/*
 * The kinds of /api/v1/keys/{kind} (functions/keys/kinds.ts): the key's fields, its kind's
 * own public facts, and `private` (its kind's private view) with `?include_private=true`.
 */
const CertFacts = {
  certificate_pem: z.string().describe('The certificate, PEM.'),
  certificate_fingerprint: z.string().describe('SHA-256 of the certificate’s DER (hex).'),
  serial_number: z.string().describe('The serial number, lower-case hex.'),
  subject: z.string(),
  not_before: Timestamp,
  not_after: Timestamp,
};
const KIND_SHAPES = {
  age: {
    type: 'age_key',
    label: 'An age X25519 identity.',
    public: { recipient: z.string().describe('The age recipient, `age1…`.'), public_key: z.string().describe('The age recipient, `age1…`.') },
    private: {
      identity: z.string().describe('The identity, `AGE-SECRET-KEY-1…`.'),
      identity_file: z.string().describe('An identity file for `age -i`.'),
    },
  },
  dkim: {
    type: 'dkim_key',
    label: 'A DKIM RSA key (RFC 6376).',
    public: {
      selector: z.string(),
      domain: z.string(),
      public_key: z.string().describe('The public key, PEM (SPKI).'),
      dns_record: z
        .strictObject({
          name: z.string().describe('`<selector>._domainkey.<domain>`.'),
          type: z.literal('TXT'),
          value: z.string().describe('`v=DKIM1; k=rsa; p=…`.'),
          strings: z.array(z.string()).describe('The value split into DNS strings of at most 255 bytes.'),
          zone_line: z.string().describe('The record as a zone file line.'),
        })
        .describe('The TXT record to publish.'),
    },
    private: { private_key: z.string().describe('PKCS#8 PEM.'), private_key_pkcs1: z.string().describe('PKCS#1 PEM (`BEGIN RSA PRIVATE KEY`).') },
  },
  'jwt-signing': {
    type: 'jwt_signing_key',
    label: 'A JWT signing key; its public JWK is published in the account’s JWKS.',
    public: {
      kid: z.string().describe('The key id: the JWK thumbprint (RFC 7638, SHA-256).'),
      public_key: z.string().describe('The public key, PEM (SPKI).'),
      public_jwk: Jwk.describe('The public JWK with `kid`, `alg` and `use`.'),
    },
    private: { private_jwk: Jwk.describe('The private JWK.'), private_key: z.string().describe('PKCS#8 PEM.') },
  },
  minisign: {
    type: 'minisign_key',
    label: 'A minisign Ed25519 key.',
    public: {
      key_id: z.string().describe('The minisign key id (hex).'),
      public_key: z.string().describe('The public key, base64 as `minisign -p` writes it.'),
      public_key_file: z.string().describe('The `minisign.pub` file.'),
    },
    private: { secret_key_file: z.string().describe('The `minisign.key` file (unencrypted).') },
  },
  piv: {
    type: 'piv_key',
    label: 'A PIV slot key with its self-signed certificate.',
    public: {
      slot: z.enum(['9a', '9c', '9d', '9e']),
      slot_name: z.string(),
      public_key: z.string().describe('The public key, PEM (SPKI).'),
      ...CertFacts,
    },
    private: { private_key: z.string().describe('PKCS#8 PEM.') },
  },
  smime: {
    type: 'smime_key',
    label: 'An S/MIME key with its certificate from the account CA.',
    public: {
      email: z.string(),
      public_key: z.string().describe('The public key, PEM (SPKI).'),
      ...CertFacts,
      chain_pem: z.string().describe('The issuing chain (intermediate, then root), PEM.'),
      issuer: z.string(),
      ca_id: z.uuid().describe('The account CA.'),
    },
    private: { private_key: z.string().describe('PKCS#8 PEM.') },
  },
  wireguard: {
    type: 'wireguard_key',
    label: 'A WireGuard X25519 key.',
    public: {
      public_key: z.string().describe('The public key, base64 as `wg pubkey` writes it.'),
      address: z.array(z.string()),
      allowed_ips: z.array(z.string()),
      endpoint: z.string().nullable(),
      listen_port: z.int().nullable(),
      persistent_keepalive: z.int().nullable(),
      peer_config: z.string().describe('The `[Peer]` section for the other side.'),
    },
    private: {
      private_key: z.string().describe('The private key, base64 as `wg genkey` writes it.'),
      interface_config: z.string().describe('The `[Interface]` section.'),
    },
  },
} as const;
export type KeyKind = keyof typeof KIND_SHAPES;

const kindKey = (kind: KeyKind, withPrivate: boolean) => {
  const k = KIND_SHAPES[kind];
  return z
    .strictObject({
      ...KEY_BASE,
      type: z.literal(k.type),
      kind: z.literal(kind),
      ...k.public,
      ...(withPrivate ? { private: z.strictObject(k.private).optional().describe('The private parts; with `?include_private=true` only.') } : {}),
    })
    .describe(k.label);
};

/** POST /api/v1/keys/{kind}/generate: the new key, public parts. */
export const generatedKindKey = (kind: KeyKind) => z.strictObject({ key: kindKey(kind, false) });
/** GET /api/v1/keys/{kind}/{id}: the key of the route's kind. */
export const KindKeyAnswer = z.strictObject({
  key: z.discriminatedUnion(
    'kind',
    (Object.keys(KIND_SHAPES) as KeyKind[]).map((k) => kindKey(k, true)) as [ReturnType<typeof kindKey>, ...ReturnType<typeof kindKey>[]],
  ),
});
/** GET /api/v1/keys/smime/{id}/pkcs12. */
export const SmimePkcs12 = z.strictObject({
  pkcs12: z.strictObject({
    id: z.uuid(),
    format: z.literal('pkcs12'),
    filename: z.string(),
    content_type: z.literal('application/x-pkcs12'),
    encoding: z.literal('base64'),
    content: z.string().describe('The PKCS#12 file, base64: key, certificate and CA chain.'),
    friendly_name: z.string().describe('The entry’s alias: the email address.'),
    password: z.string().optional().describe('The generated password; only when no `X-PKCS12-Password` was sent.'),
  }),
});
