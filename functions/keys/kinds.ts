import { createPrivateKey, type KeyObject } from 'node:crypto';
import { bech32 } from '@scure/base';
import { calculateJwkThumbprint, type JWK } from 'jose';
import * as z from 'zod/v4';
import type { CallContext } from '../../lib/auth/principal.js';
import { badRequest, created, defineHandler, ok, type LambdaHandler } from '../../lib/http/index.js';
import { generateKeyPair, privatePkcs8Pem, publicSpkiPem, spkiFingerprint, type KeySpec } from '../../lib/pki/keys.js';
import { minisignKeys, newMinisignKeyId } from '../../lib/pki/minisign.js';
import { buildPkcs12, pkcs8Der } from '../../lib/pki/pkcs12.js';
import { certPem, dnEscape, randomSerial, sha256Hex, signingAlgorithm, toPublicCryptoKey, toSigningKey, x509 } from '../../lib/pki/x509.js';
import { issueFromCa } from '../../lib/certificates/ca.js';
import { Pkcs12Password } from '../../lib/certificates/schemas.js';
import { createKey, etagOf, exportSecret, getKey, keyView, requireExportScopes } from '../../lib/keys/common.js';
import {
  Description,
  DnsName,
  Email,
  generatedKindKey,
  IdParams,
  IncludePrivateQuery,
  KeyName,
  KindKeyAnswer,
  SmimePkcs12,
  Tags,
  type KeyKind,
} from '../../lib/keys/schemas.js';
import { randomString, UNAMBIGUOUS } from '../../lib/keys/material-core.js';
import type { KeyMetaBase, ResourceTypeName } from '../../lib/catalog.js';

/**
 * The seven kinds of `/api/v1/keys/{kind}`: one generic module driven by a descriptor per
 * kind (its request body, how it generates its material, and its private view). Each kind
 * has `POST /generate` and `GET /{id}`; both need credentials:write (the route table);
 * `GET /{id}?include_private=true` returns the private parts too and needs export:read as
 * well (checked here, audited). smime adds `GET /{id}/pkcs12`.
 */
interface Generated<M, S> {
  readonly meta: M;
  readonly secret: S;
}

interface KindDescriptor<B extends { name: string; description?: string; tags?: string[] }, M, S> {
  readonly kind: KeyKind;
  /** The generate route's summary. */
  readonly summary: string;
  readonly description: string;
  readonly type: ResourceTypeName;
  readonly body: z.ZodType<B>;
  generate(
    ctx: CallContext,
    body: B,
    base: Pick<KeyMetaBase, 'description' | 'tags' | 'source' | 'has_private_key' | 'expires_at'>,
  ): Promise<Generated<M, S>>;
  /** The private parts as the kind's tools want them. */
  privateView(secret: S, meta: M): Record<string, unknown>;
}

const common = { name: KeyName, description: Description.optional(), tags: Tags.optional() };

const keyFacts = (pub: KeyObject, algorithm: string, bits: number, curve: string | null) => ({
  algorithm,
  bits,
  curve,
  fingerprint: spkiFingerprint(pub),
});

const rawOkp = (privateKey: KeyObject) => {
  const jwk = privateKey.export({ format: 'jwk' });
  return { d: Buffer.from(jwk.d!, 'base64url'), x: Buffer.from(jwk.x!, 'base64url') };
};

// ---------------------------------------------------------------- age (X25519, age v1)
/** age's Bech32 encodings: recipient `age1…`, identity `AGE-SECRET-KEY-1…` (upper case). */
const ageRecipient = (x: Buffer) => bech32.encode('age', bech32.toWords(x), false);
const ageIdentity = (d: Buffer) => bech32.encode('age-secret-key-', bech32.toWords(d), false).toUpperCase();

const age: KindDescriptor<{ name: string; description?: string; tags?: string[] }, KeyMetaBase & { recipient: string }, { identity: string }> = {
  kind: 'age',
  summary: 'Generate an age identity',
  description:
    'An X25519 identity in age’s encodings: the recipient `age1…` (public) and `AGE-SECRET-KEY-1…` (private, with `?include_private=true`).',
  type: 'age_key',
  body: z.strictObject({ ...common }),
  async generate(_ctx, _body, base) {
    const pair = await generateKeyPair({ kind: 'x25519' });
    const { d, x } = rawOkp(pair.privateKey);
    const recipient = ageRecipient(x);
    return {
      meta: { ...base, ...keyFacts(pair.publicKey, 'x25519', 256, null), public_key: recipient, recipient },
      secret: { identity: ageIdentity(d) },
    };
  },
  privateView: (s, m) => ({ identity: s.identity, identity_file: `# public key: ${m.recipient}\n${s.identity}\n` }),
};

// ---------------------------------------------------------------- DKIM (RSA, RFC 6376)
const Selector = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?)*$/, 'a DNS label (letters, digits, "-", "_")');
type DkimBody = { name: string; selector: string; domain: string; bits: 2048 | 3072 | 4096; description?: string; tags?: string[] };
type DkimMeta = KeyMetaBase & {
  selector: string;
  domain: string;
  dns_record: { name: string; type: 'TXT'; value: string; strings: string[]; zone_line: string };
};

/** The TXT record of a DKIM key: `v=DKIM1; k=rsa; p=<base64 SPKI>`, split into ≤255-byte strings for DNS. */
function dkimRecord(pub: KeyObject, selector: string, domain: string): DkimMeta['dns_record'] {
  const p = (pub.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64');
  const value = `v=DKIM1; k=rsa; p=${p}`;
  const strings = value.match(/.{1,255}/g)!;
  const name = `${selector}._domainkey.${domain}`;
  return { name, type: 'TXT', value, strings, zone_line: `${name}. IN TXT ( ${strings.map((s) => `"${s}"`).join(' ')} )` };
}

const dkim: KindDescriptor<DkimBody, DkimMeta, { private_key: string }> = {
  kind: 'dkim',
  summary: 'Generate a DKIM key',
  description: 'An RSA key for DKIM signing (RFC 6376) and the TXT record to publish at `<selector>._domainkey.<domain>`.',
  type: 'dkim_key',
  body: z.strictObject({
    ...common,
    selector: Selector,
    domain: DnsName,
    bits: z.union([z.literal(2048), z.literal(3072), z.literal(4096)]).default(2048),
  }),
  async generate(_ctx, body, base) {
    const pair = await generateKeyPair({ kind: 'rsa', bits: body.bits });
    return {
      meta: {
        ...base,
        ...keyFacts(pair.publicKey, 'rsa', body.bits, null),
        public_key: publicSpkiPem(pair.publicKey),
        selector: body.selector,
        domain: body.domain,
        dns_record: dkimRecord(pair.publicKey, body.selector, body.domain),
      },
      secret: { private_key: privatePkcs8Pem(pair.privateKey) },
    };
  },
  privateView: (s) => ({
    private_key: s.private_key,
    private_key_pkcs1: createPrivateKey(s.private_key).export({ type: 'pkcs1', format: 'pem' }),
  }),
};

// ---------------------------------------------------------------- JWT signing (JWK with kid)
const JWT_SPECS: Record<'ES256' | 'RS256' | 'EdDSA', { spec: KeySpec; bits: number; curve: string | null }> = {
  ES256: { spec: { kind: 'ec', curve: 'P-256' }, bits: 256, curve: 'P-256' },
  RS256: { spec: { kind: 'rsa', bits: 2048 }, bits: 2048, curve: null },
  EdDSA: { spec: { kind: 'ed25519' }, bits: 256, curve: 'Ed25519' },
};
type JwtMeta = KeyMetaBase & { kid: string; public_jwk: JWK };

const jwtSigning: KindDescriptor<
  { name: string; algorithm: 'ES256' | 'RS256' | 'EdDSA'; description?: string; tags?: string[] },
  JwtMeta,
  { private_jwk: JWK }
> = {
  kind: 'jwt-signing',
  summary: 'Generate a JWT signing key',
  description: 'An ES256, RS256 or EdDSA key with its JWK (kid = JWK thumbprint); the public JWK is published in the account’s JWKS.',
  type: 'jwt_signing_key',
  body: z.strictObject({ ...common, algorithm: z.enum(['ES256', 'RS256', 'EdDSA']).default('ES256') }),
  async generate(_ctx, body, base) {
    const s = JWT_SPECS[body.algorithm];
    const pair = await generateKeyPair(s.spec);
    const pub = pair.publicKey.export({ format: 'jwk' }) as JWK;
    // the kid is the RFC 7638 thumbprint: stable, derived from the key, unique per key
    const kid = await calculateJwkThumbprint(pub, 'sha256');
    const meta: JwtMeta = {
      ...base,
      ...keyFacts(pair.publicKey, body.algorithm, s.bits, s.curve),
      public_key: publicSpkiPem(pair.publicKey),
      kid,
      public_jwk: { ...pub, kid, alg: body.algorithm, use: 'sig' },
    };
    return { meta, secret: { private_jwk: { ...(pair.privateKey.export({ format: 'jwk' }) as JWK), kid, alg: body.algorithm, use: 'sig' } } };
  },
  privateView: (s) => ({
    private_jwk: s.private_jwk,
    private_key: privatePkcs8Pem(createPrivateKey({ key: s.private_jwk as never, format: 'jwk' })),
  }),
};

// ---------------------------------------------------------------- minisign (Ed25519)
type MinisignMeta = KeyMetaBase & { key_id: string; public_key_file: string };
const minisign: KindDescriptor<
  { name: string; comment?: string; description?: string; tags?: string[] },
  MinisignMeta,
  { private_key: string; key_id_raw: string; comment: string }
> = {
  kind: 'minisign',
  summary: 'Generate a minisign key',
  description: 'An Ed25519 key with the `minisign.pub` file; `?include_private=true` returns the `minisign.key` file.',
  type: 'minisign_key',
  body: z.strictObject({
    ...common,
    comment: z
      .string()
      .max(256)
      .regex(/^[^\r\n]*$/, 'one line')
      .optional(),
  }),
  async generate(_ctx, body, base) {
    const pair = await generateKeyPair({ kind: 'ed25519' });
    const keyId = newMinisignKeyId();
    const files = minisignKeys(pair.privateKey, keyId);
    return {
      meta: {
        ...base,
        ...keyFacts(pair.publicKey, 'ed25519', 256, null),
        fingerprint: files.key_id,
        key_id: files.key_id,
        public_key: files.public_key,
        public_key_file: files.public_key_file,
      },
      secret: {
        private_key: privatePkcs8Pem(pair.privateKey),
        key_id_raw: keyId.toString('hex'),
        comment: body.comment ?? `minisign secret key ${files.key_id}`,
      },
    };
  },
  privateView: (s) => ({
    secret_key_file: minisignKeys(createPrivateKey(s.private_key), Buffer.from(s.key_id_raw, 'hex'), s.comment).secret_key_file,
  }),
};

// ---------------------------------------------------------------- PIV (slot key + self-signed certificate)
const PIV_SLOTS = {
  '9a': { name: 'PIV Authentication', usage: x509.KeyUsageFlags.digitalSignature, eku: [x509.ExtendedKeyUsage.clientAuth] },
  '9c': { name: 'Digital Signature', usage: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation, eku: [] },
  '9d': { name: 'Key Management', usage: -1, eku: [] },
  '9e': { name: 'Card Authentication', usage: x509.KeyUsageFlags.digitalSignature, eku: [] },
} as const;
const PIV_ALGORITHMS: Record<'rsa-2048' | 'ec-p256' | 'ec-p384', { spec: KeySpec; algorithm: string; bits: number; curve: string | null }> = {
  'rsa-2048': { spec: { kind: 'rsa', bits: 2048 }, algorithm: 'rsa', bits: 2048, curve: null },
  'ec-p256': { spec: { kind: 'ec', curve: 'P-256' }, algorithm: 'ec', bits: 256, curve: 'P-256' },
  'ec-p384': { spec: { kind: 'ec', curve: 'P-384' }, algorithm: 'ec', bits: 384, curve: 'P-384' },
};
type PivBody = {
  name: string;
  slot: keyof typeof PIV_SLOTS;
  algorithm: keyof typeof PIV_ALGORITHMS;
  subject?: string;
  validity_days: number;
  description?: string;
  tags?: string[];
};
type PivMeta = KeyMetaBase & {
  slot: string;
  slot_name: string;
  certificate_pem: string;
  certificate_fingerprint: string;
  serial_number: string;
  subject: string;
  not_before: string;
  not_after: string;
};

const piv: KindDescriptor<PivBody, PivMeta, { private_key: string }> = {
  kind: 'piv',
  summary: 'Generate a PIV slot key',
  description: 'A key for a PIV slot (9a, 9c, 9d, 9e) with a self-signed certificate suited to the slot, ready to load onto a smart card.',
  type: 'piv_key',
  body: z.strictObject({
    ...common,
    slot: z.enum(['9a', '9c', '9d', '9e']),
    algorithm: z.enum(['rsa-2048', 'ec-p256', 'ec-p384']).default('ec-p256'),
    subject: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\r\n\0]*$/)
      .optional(),
    validity_days: z.number().int().min(1).max(3650).default(365),
  }),
  async generate(_ctx, body, base) {
    const a = PIV_ALGORITHMS[body.algorithm];
    const slot = PIV_SLOTS[body.slot];
    const pair = await generateKeyPair(a.spec);
    const usage = slot.usage >= 0 ? slot.usage : a.algorithm === 'rsa' ? x509.KeyUsageFlags.keyEncipherment : x509.KeyUsageFlags.keyAgreement;
    const pub = await toPublicCryptoKey(pair.publicKey);
    const name = `CN=${dnEscape(body.subject ?? body.name)}`;
    const notBefore = new Date(Date.now() - 60_000);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: name,
      issuer: name,
      notBefore,
      notAfter: new Date(notBefore.getTime() + body.validity_days * 86400_000),
      publicKey: pub,
      signingKey: await toSigningKey(pair.privateKey),
      signingAlgorithm: signingAlgorithm(pair.privateKey),
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(usage, true),
        ...(slot.eku.length ? [new x509.ExtendedKeyUsageExtension([...slot.eku])] : []),
        await x509.SubjectKeyIdentifierExtension.create(pub),
      ],
    });
    return {
      meta: {
        ...base,
        ...keyFacts(pair.publicKey, a.algorithm, a.bits, a.curve),
        public_key: publicSpkiPem(pair.publicKey),
        expires_at: cert.notAfter.toISOString(),
        slot: body.slot,
        slot_name: slot.name,
        certificate_pem: certPem(cert),
        certificate_fingerprint: sha256Hex(cert.rawData),
        serial_number: cert.serialNumber.toLowerCase(),
        subject: cert.subject,
        not_before: cert.notBefore.toISOString(),
        not_after: cert.notAfter.toISOString(),
      },
      secret: { private_key: privatePkcs8Pem(pair.privateKey) },
    };
  },
  privateView: (s) => ({ private_key: s.private_key }),
};

// ---------------------------------------------------------------- S/MIME (key + certificate from the account CA)
const SMIME_ALGORITHMS: Record<'rsa-2048' | 'rsa-3072' | 'rsa-4096' | 'ec-p256' | 'ec-p384', KeySpec> = {
  'rsa-2048': { kind: 'rsa', bits: 2048 },
  'rsa-3072': { kind: 'rsa', bits: 3072 },
  'rsa-4096': { kind: 'rsa', bits: 4096 },
  'ec-p256': { kind: 'ec', curve: 'P-256' },
  'ec-p384': { kind: 'ec', curve: 'P-384' },
};
type SmimeBody = {
  name: string;
  email: string;
  common_name?: string;
  algorithm: keyof typeof SMIME_ALGORITHMS;
  validity_days: number;
  description?: string;
  tags?: string[];
};
type SmimeMeta = KeyMetaBase & {
  email: string;
  certificate_pem: string;
  chain_pem: string;
  certificate_fingerprint: string;
  serial_number: string;
  subject: string;
  issuer: string;
  ca_id: string;
  not_before: string;
  not_after: string;
};

const smime: KindDescriptor<SmimeBody, SmimeMeta, { private_key: string }> = {
  kind: 'smime',
  summary: 'Generate an S/MIME key',
  description: 'A key with an email-protection certificate issued by the account CA; GET /{id}/pkcs12 exports it for mail clients.',
  type: 'smime_key',
  body: z.strictObject({
    ...common,
    email: Email,
    common_name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[^\r\n\0]*$/)
      .optional(),
    algorithm: z.enum(['rsa-2048', 'rsa-3072', 'rsa-4096', 'ec-p256', 'ec-p384']).default('rsa-2048'),
    validity_days: z.number().int().min(1).max(825).default(365),
  }),
  async generate(ctx, body, base) {
    const pair = await generateKeyPair(SMIME_ALGORITHMS[body.algorithm]);
    const rsa = pair.privateKey.asymmetricKeyType === 'rsa';
    const notBefore = new Date(Date.now() - 60_000);
    const { cert, chain, ca } = await issueFromCa(ctx, {
      subjectPublicKey: pair.publicKey,
      subject: `CN=${dnEscape(body.common_name ?? body.email)}, E=${dnEscape(body.email)}`,
      notBefore,
      notAfter: new Date(notBefore.getTime() + body.validity_days * 86400_000),
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | (rsa ? x509.KeyUsageFlags.keyEncipherment : x509.KeyUsageFlags.keyAgreement),
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.emailProtection]),
        new x509.SubjectAlternativeNameExtension([{ type: 'email', value: body.email }]),
      ],
    });
    const facts = pair.privateKey.asymmetricKeyDetails!;
    return {
      meta: {
        ...base,
        ...keyFacts(
          pair.publicKey,
          rsa ? 'rsa' : 'ec',
          rsa ? facts.modulusLength! : body.algorithm === 'ec-p256' ? 256 : 384,
          rsa ? null : body.algorithm === 'ec-p256' ? 'P-256' : 'P-384',
        ),
        public_key: publicSpkiPem(pair.publicKey),
        expires_at: cert.notAfter.toISOString(),
        email: body.email,
        certificate_pem: certPem(cert),
        chain_pem: chain,
        certificate_fingerprint: sha256Hex(cert.rawData),
        serial_number: cert.serialNumber.toLowerCase(),
        subject: cert.subject,
        issuer: cert.issuer,
        ca_id: ca.id,
        not_before: cert.notBefore.toISOString(),
        not_after: cert.notAfter.toISOString(),
      },
      secret: { private_key: privatePkcs8Pem(pair.privateKey) },
    };
  },
  privateView: (s) => ({ private_key: s.private_key }),
};

// ---------------------------------------------------------------- WireGuard (Curve25519, base64)
const Cidr = z
  .string()
  .regex(/^([0-9]{1,3}(\.[0-9]{1,3}){3}\/[0-9]{1,2}|[0-9A-Fa-f:]+\/[0-9]{1,3})$/, 'an address with prefix length, e.g. 10.0.0.2/32');
type WgBody = {
  name: string;
  address?: string[];
  allowed_ips?: string[];
  endpoint?: string;
  listen_port?: number;
  persistent_keepalive?: number;
  description?: string;
  tags?: string[];
};
type WgMeta = KeyMetaBase & {
  address: string[];
  allowed_ips: string[];
  endpoint: string | null;
  listen_port: number | null;
  persistent_keepalive: number | null;
  peer_config: string;
};

/** wg genkey's clamping (RFC 7748): the same public key, the private key as WireGuard writes it. */
function clamp(d: Buffer): Buffer {
  const c = Buffer.from(d);
  c[0]! &= 248;
  c[31] = (c[31]! & 127) | 64;
  return c;
}

const wireguard: KindDescriptor<WgBody, WgMeta, { private_key: string }> = {
  kind: 'wireguard',
  summary: 'Generate a WireGuard key',
  description: 'An X25519 key in WireGuard’s encoding with the `[Peer]` section; `?include_private=true` adds the `[Interface]` section.',
  type: 'wireguard_key',
  body: z.strictObject({
    ...common,
    address: z.array(Cidr).max(16).optional(),
    allowed_ips: z.array(Cidr).max(64).optional(),
    endpoint: z
      .string()
      .max(260)
      .regex(/^(\[[0-9A-Fa-f:]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$/, 'host:port')
      .optional(),
    listen_port: z.number().int().min(1).max(65535).optional(),
    persistent_keepalive: z.number().int().min(1).max(65535).optional(),
  }),
  async generate(_ctx, body, base) {
    const pair = await generateKeyPair({ kind: 'x25519' });
    const { d, x } = rawOkp(pair.privateKey);
    const publicKey = x.toString('base64');
    const allowed = body.allowed_ips ?? body.address ?? [];
    const peer = [
      '[Peer]',
      `PublicKey = ${publicKey}`,
      ...(allowed.length ? [`AllowedIPs = ${allowed.join(', ')}`] : []),
      ...(body.endpoint ? [`Endpoint = ${body.endpoint}`] : []),
      ...(body.persistent_keepalive ? [`PersistentKeepalive = ${body.persistent_keepalive}`] : []),
    ].join('\n');
    return {
      meta: {
        ...base,
        ...keyFacts(pair.publicKey, 'x25519', 256, null),
        public_key: publicKey,
        address: body.address ?? [],
        allowed_ips: allowed,
        endpoint: body.endpoint ?? null,
        listen_port: body.listen_port ?? null,
        persistent_keepalive: body.persistent_keepalive ?? null,
        peer_config: `${peer}\n`,
      },
      secret: { private_key: clamp(d).toString('base64') },
    };
  },
  privateView: (s, m) => ({
    private_key: s.private_key,
    interface_config:
      [
        '[Interface]',
        `PrivateKey = ${s.private_key}`,
        ...(m.address.length ? [`Address = ${m.address.join(', ')}`] : []),
        ...(m.listen_port ? [`ListenPort = ${m.listen_port}`] : []),
      ].join('\n') + '\n',
  }),
};

// ---------------------------------------------------------------- the generic handlers
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyKind = KindDescriptor<any, any, any>;
const KINDS: Readonly<Record<string, AnyKind>> = { age, dkim, 'jwt-signing': jwtSigning, minisign, piv, smime, wireguard };

/** The kind a route serves, from its literal path `/api/v1/keys/<kind>/...`. */
const kindOfPath = (path: string): AnyKind => {
  const kind = KINDS[path.split('/')[4] ?? ''];
  if (!kind) throw new Error(`no key kind for ${path}`);
  return kind;
};

function generateHandler(kind: AnyKind): LambdaHandler {
  return defineHandler({
    summary: kind.summary,
    description: kind.description,
    responses: { 201: generatedKindKey(kind.kind) },
    errors: ['already_exists', ...(kind.kind === 'smime' ? (['bad_request'] as const) : [])],
    body: kind.body,
    async handler({ ctx, body }) {
      const { meta, secret } = await kind.generate(ctx, body, {
        description: body.description ?? '',
        tags: body.tags ?? [],
        source: 'generated',
        has_private_key: true,
        expires_at: null,
      });
      const rec = await createKey(ctx, kind.type, { name: body.name, meta, secret });
      return created({ key: { ...keyView(rec), kind: kind.kind } }, { ETag: etagOf(rec) });
    },
  });
}

export const generateAge = generateHandler(age);
export const generateDkim = generateHandler(dkim);
export const generateJwtSigning = generateHandler(jwtSigning);
export const generateMinisign = generateHandler(minisign);
export const generatePiv = generateHandler(piv);
export const generateSmime = generateHandler(smime);
export const generateWireguard = generateHandler(wireguard);

/** GET /api/v1/keys/{kind}/{id}: public parts; `?include_private=true` (export:read) adds the private view. */
export const get = defineHandler({
  summary: 'Read a key of a kind',
  description:
    'The key’s public parts and metadata; `?include_private=true` (needs export:read as well, audited) adds its kind’s private parts under `private`.',
  responses: { 200: KindKeyAnswer },
  errors: ['not_found', 'insufficient_scope'],
  params: IdParams,
  query: IncludePrivateQuery,
  async handler({ ctx, params, query, route }) {
    const kind = kindOfPath(route.path);
    if (query.include_private) requireExportScopes(ctx, kind.type);
    const stored = await getKey<Record<string, unknown>>(ctx, kind.type, params.id);
    const key: Record<string, unknown> = { ...keyView(stored.record), kind: kind.kind };
    if (query.include_private) {
      const secret = await exportSecret(ctx, kind.type, stored, `${kind.kind} private key`);
      key.private = kind.privateView(secret, stored.record.meta);
    }
    return ok({ key }, { ETag: etagOf(stored.record) });
  },
});

/**
 * GET /api/v1/keys/smime/{id}/pkcs12: key, certificate and CA chain as a password-protected
 * PKCS#12 (base64). The password comes in the `X-PKCS12-Password` header (printable ASCII,
 * 8–128 characters; a GET has no body and a query string ends up in access logs); without
 * it the service generates one and returns it beside the file.
 */
export const smimePkcs12 = defineHandler({
  summary: 'Export an S/MIME key as PKCS#12',
  description:
    'Key, certificate and CA chain as a password-protected PKCS#12 (base64). Send the password in `X-PKCS12-Password` (8–128 printable ASCII characters); without it the service generates one and returns it.',
  responses: { 200: SmimePkcs12 },
  errors: ['bad_request', 'not_found'],
  params: IdParams,
  async handler({ ctx, params, headers }) {
    const given = headers['x-pkcs12-password'];
    let password: string;
    let generated = false;
    if (given !== undefined) {
      const parsed = Pkcs12Password.safeParse(given);
      if (!parsed.success)
        throw badRequest('X-PKCS12-Password must be 8–128 printable ASCII characters', [
          { path: 'headers.x-pkcs12-password', message: parsed.error.issues[0]!.message },
        ]);
      password = parsed.data;
    } else {
      password = generatePassword();
      generated = true;
    }
    const stored = await getKey<SmimeMeta>(ctx, 'smime_key', params.id);
    const secret = await exportSecret<SmimeMeta, { private_key: string }>(ctx, 'smime_key', stored, 'pkcs12');
    const { meta } = stored.record;
    const chain = (meta.chain_pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
      (b) => new Uint8Array(new x509.X509Certificate(b).rawData),
    );
    const p12 = await buildPkcs12(
      password,
      [
        {
          alias: meta.email,
          privateKey: pkcs8Der(secret!.private_key),
          chain: [new Uint8Array(new x509.X509Certificate(meta.certificate_pem).rawData), ...chain],
        },
      ],
      [],
    );
    return ok({
      pkcs12: {
        id: params.id,
        format: 'pkcs12',
        filename: `${meta.email.replace(/[^A-Za-z0-9._-]+/g, '_')}.p12`,
        content_type: 'application/x-pkcs12',
        encoding: 'base64',
        content: p12.toString('base64'),
        friendly_name: meta.email,
        ...(generated ? { password } : {}),
      },
    });
  },
});

const generatePassword = () => randomString(24, UNAMBIGUOUS);
