import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { CallContext } from '../auth/principal.js';
import { badRequest, conflict } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { describeKey, generateKeyPair, privatePkcs8Pem, publicSpkiPem, spkiFingerprint, type KeySpec } from '../pki/keys.js';
import {
  certPem,
  certPublicKey,
  dnEscape,
  EXTENDED_KEY_USAGES,
  KEY_USAGES,
  pem,
  sanExtension,
  sansOf,
  sha256Hex,
  signingAlgorithm,
  toPublicCryptoKey,
  toSigningKey,
  usagesOf,
  x509,
  type ExtendedKeyUsageName,
  type KeyUsageName,
  type SanInput,
} from '../pki/x509.js';
import { openSecret, updateResource } from '../resources/store.js';
import { TxConditionFailed } from '../store/tx.js';
import { createKey, type KeyView } from '../keys/common.js';
import { obtainCertificate, revokeAtDirectory, type AcmeSettings } from './acme.js';
import { issueFromCa, republishCa, REVOCATION_REASONS, revocationPut } from './ca.js';
import type { CertKeyAlgorithm, EnrollBody, RenewBody, RevokeBody, Sans, Subject } from './schemas.js';
import { TYPE, certView, readCert, type CertMeta, type CertSecret, type EarlierSerial } from './service.js';

/** Issuing a certificate (the account CA, or an ACME directory), renewing and revoking it. */
const DEFAULT_VALIDITY_DAYS = 90;
const SPECS: Record<CertKeyAlgorithm, KeySpec> = {
  'rsa-2048': { kind: 'rsa', bits: 2048 },
  'rsa-3072': { kind: 'rsa', bits: 3072 },
  'rsa-4096': { kind: 'rsa', bits: 4096 },
  'ec-p256': { kind: 'ec', curve: 'P-256' },
  'ec-p384': { kind: 'ec', curve: 'P-384' },
  ed25519: { kind: 'ed25519' },
};

const algorithmName = (k: KeyObject): CertKeyAlgorithm => {
  const f = describeKey(k);
  return f.algorithm === 'RSA' ? (`rsa-${f.bits}` as CertKeyAlgorithm) : f.algorithm === 'EC' ? (`ec-p${f.bits}` as CertKeyAlgorithm) : 'ed25519';
};

function checkSubjectKey(k: KeyObject): void {
  const f = describeKey(k);
  if (f.algorithm === 'X25519') throw badRequest('X25519 keys cannot be certified for signatures: use RSA, EC or Ed25519');
  if (f.algorithm === 'RSA' && f.bits < 2048) throw badRequest('RSA keys shorter than 2048 bits are refused');
}

function subjectDn(subject: Subject): string {
  const parts: string[] = [];
  if (subject.common_name) parts.push(`CN=${dnEscape(subject.common_name)}`);
  if (subject.organizational_unit) parts.push(`OU=${dnEscape(subject.organizational_unit)}`);
  if (subject.organization) parts.push(`O=${dnEscape(subject.organization)}`);
  if (subject.locality) parts.push(`L=${dnEscape(subject.locality)}`);
  if (subject.state) parts.push(`ST=${dnEscape(subject.state)}`);
  if (subject.country) parts.push(`C=${subject.country}`);
  return parts.join(', ');
}

const cnOf = (dn: string): string | null => {
  try {
    return new x509.Name(dn).getField('CN')[0] ?? null;
  } catch {
    return null;
  }
};

const isDnsName = (s: string) => /^(\*\.)?([A-Za-z0-9_-]+\.)+[A-Za-z0-9-]+$/.test(s) || s === 'localhost';

function parseCsr(text: string): { csr: x509.Pkcs10CertificateRequest; publicKey: KeyObject } {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(text.trim());
  } catch {
    throw badRequest('csr is not a valid PEM-encoded PKCS#10 certificate request', undefined, 'invalid_csr');
  }
  const publicKey = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
  return { csr, publicKey };
}

async function verifyCsr(csr: x509.Pkcs10CertificateRequest): Promise<void> {
  let valid = false;
  try {
    valid = await csr.verify();
  } catch {
    valid = false;
  }
  if (!valid) throw badRequest('the csr signature does not verify (proof of possession failed)', undefined, 'invalid_csr');
}

interface Profile {
  subject: string;
  sans: Required<SanInput>;
  keyUsage: KeyUsageName[];
  extendedKeyUsage: ExtendedKeyUsageName[];
  validityDays: number;
}

function extensionsFor(p: Profile): x509.Extension[] {
  const ku = p.keyUsage.reduce((acc, n) => acc | KEY_USAGES[n], 0);
  const exts: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true), new x509.KeyUsagesExtension(ku, true)];
  if (p.extendedKeyUsage.length > 0) exts.push(new x509.ExtendedKeyUsageExtension(p.extendedKeyUsage.map((n) => EXTENDED_KEY_USAGES[n])));
  const san = sanExtension(p.sans);
  // RFC 5280 4.2.1.6: the SAN extension is critical when the subject is empty
  if (san) exts.push(p.subject ? san : new x509.SubjectAlternativeNameExtension(san.names.toJSON(), true));
  return exts;
}

function defaultKeyUsage(key: KeyObject): KeyUsageName[] {
  return key.asymmetricKeyType === 'rsa' ? ['digital_signature', 'key_encipherment'] : ['digital_signature'];
}

/** Subject and SANs: the body's, else the CSR's; a DNS-like common name joins the SANs. */
function profileOf(
  body: Pick<EnrollBody, 'subject' | 'sans' | 'key_usage' | 'extended_key_usage' | 'validity_days'>,
  key: KeyObject,
  csr?: x509.Pkcs10CertificateRequest,
): Profile {
  const subject = body.subject ? subjectDn(body.subject) : (csr?.subject ?? '');
  const fromCsr = csr ? sansOf(csr.extensions) : { dns: [], ip: [], email: [], uri: [] };
  const s: Sans = body.sans ?? fromCsr;
  const sans = { dns: [...(s.dns ?? [])], ip: [...(s.ip ?? [])], email: [...(s.email ?? [])], uri: [...(s.uri ?? [])] };
  const cn = cnOf(subject);
  if (cn && isDnsName(cn) && !sans.dns.includes(cn)) sans.dns.unshift(cn);
  if (!subject && Object.values(sans).every((l) => l.length === 0))
    throw badRequest('a certificate needs a subject common name or at least one subject alternative name');
  return {
    subject,
    sans,
    keyUsage: body.key_usage ?? defaultKeyUsage(key),
    extendedKeyUsage: body.extended_key_usage ?? ['server_auth', 'client_auth'],
    validityDays: body.validity_days ?? DEFAULT_VALIDITY_DAYS,
  };
}

function certMeta(
  cert: x509.X509Certificate,
  chainPem: string,
  base: {
    source: 'issued' | 'acme';
    caId: string | null;
    csrPem: string | null;
    acme: AcmeSettings | null;
    hasPrivate: boolean;
    description: string;
    tags: string[];
    validityDays: number | null;
  },
): CertMeta {
  const pub = certPublicKey(cert);
  const facts = describeKey(pub);
  const u = usagesOf(cert);
  return {
    algorithm: facts.algorithm.toLowerCase(),
    bits: facts.bits,
    curve: facts.curve,
    fingerprint: sha256Hex(cert.rawData),
    public_key_fingerprint: spkiFingerprint(pub),
    public_key: publicSpkiPem(pub),
    expires_at: cert.notAfter.toISOString(),
    has_private_key: base.hasPrivate,
    source: base.source,
    description: base.description,
    tags: base.tags,
    serial_number: cert.serialNumber.toLowerCase(),
    subject: cert.subject,
    common_name: cnOf(cert.subject),
    issuer: cert.issuer,
    sans: sansOf(cert.extensions),
    key_usage: u.key_usage,
    extended_key_usage: u.extended_key_usage,
    not_before: cert.notBefore.toISOString(),
    not_after: cert.notAfter.toISOString(),
    status: 'active',
    revoked_at: null,
    revocation_reason: null,
    certificate_pem: certPem(cert),
    chain_pem: chainPem,
    ca_id: base.caId,
    csr_pem: base.csrPem,
    acme: base.acme,
    validity_days: base.validityDays,
  };
}

/** A CSR for a key held here (ACME orders need one signed by the certificate's key). */
async function csrFor(key: { privateKey: KeyObject; publicKey: KeyObject }, subject: string, sans: Required<SanInput>): Promise<string> {
  const san = sanExtension(sans);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject || undefined,
    keys: { privateKey: await toSigningKey(key.privateKey), publicKey: await toPublicCryptoKey(key.publicKey) },
    signingAlgorithm: signingAlgorithm(key.privateKey),
    extensions: san ? [san] : [],
  });
  return pem(csr.rawData, 'CERTIFICATE REQUEST');
}

interface Issued {
  cert: x509.X509Certificate;
  chain: string;
  caId: string | null;
}

async function issue(ctx: CallContext, p: Profile, publicKey: KeyObject, notBefore?: string): Promise<Issued> {
  const start = notBefore ? new Date(notBefore) : new Date(Date.now() - 60_000);
  const now = Date.now();
  if (start.getTime() < now - 86400_000 || start.getTime() > now + 90 * 86400_000)
    throw badRequest('not_before must lie between one day ago and 90 days ahead');
  const notAfter = new Date(start.getTime() + p.validityDays * 86400_000);
  const { cert, chain, ca } = await issueFromCa(ctx, {
    subjectPublicKey: publicKey,
    subject: p.subject,
    extensions: extensionsFor(p),
    notBefore: start,
    notAfter,
  });
  return { cert, chain, caId: ca.id };
}

async function viaAcme(ctx: CallContext, settings: AcmeSettings, csrPem: string): Promise<Issued> {
  const { certificate, chain } = await obtainCertificate(ctx, settings, csrPem);
  return { cert: new x509.X509Certificate(certificate), chain, caId: null };
}

function acmeDomains(p: Profile): void {
  if (p.sans.dns.length === 0) throw badRequest('an ACME certificate needs at least one DNS name (sans.dns or subject.common_name)');
  if (p.sans.ip.length + p.sans.email.length + p.sans.uri.length > 0) throw badRequest('an ACME certificate may name DNS names only');
}

export async function enroll(ctx: CallContext, body: EnrollBody): Promise<KeyView> {
  let publicKey: KeyObject;
  let privateKey: KeyObject | undefined;
  let csr: x509.Pkcs10CertificateRequest | undefined;
  if (body.csr) {
    ({ csr, publicKey } = parseCsr(body.csr));
    checkSubjectKey(publicKey);
    await verifyCsr(csr);
  } else {
    const pair = await generateKeyPair(SPECS[body.key_algorithm ?? 'ec-p256']);
    ({ publicKey, privateKey } = pair);
  }
  const profile = profileOf(body, publicKey, csr);
  let issued: Issued;
  let csrPem: string | null = body.csr ? csr!.toString('pem') + '\n' : null;
  if (body.acme) {
    acmeDomains(profile);
    if (csr) {
      // the directory issues exactly the CSR's names, which must all be subjectAltNames
      if (body.subject || body.sans) throw badRequest('with a csr, an ACME certificate takes its names from the csr: omit subject and sans');
      const listed = sansOf(csr.extensions).dns;
      if (profile.sans.dns.some((d) => !listed.includes(d)))
        throw badRequest('the csr must list every DNS name, the common name included, as a subjectAltName', undefined, 'invalid_csr');
    }
    if (!csrPem) csrPem = await csrFor({ privateKey: privateKey!, publicKey }, profile.subject, profile.sans);
    issued = await viaAcme(ctx, body.acme, csrPem);
  } else {
    issued = await issue(ctx, profile, publicKey, body.not_before);
  }
  const meta = certMeta(issued.cert, issued.chain, {
    source: body.acme ? 'acme' : 'issued',
    caId: issued.caId,
    csrPem,
    acme: body.acme ?? null,
    hasPrivate: privateKey !== undefined,
    description: body.description ?? '',
    tags: body.tags ?? [],
    validityDays: body.acme ? null : profile.validityDays,
  });
  const rec = await createKey<CertMeta, CertSecret>(
    ctx,
    TYPE,
    { name: body.name, meta, secret: privateKey ? { private_key: privatePkcs8Pem(privateKey) } : undefined },
    [],
    (r) => ({
      type: 'certificate.issued',
      data: { id: r.id, serial: meta.serial_number, subject: meta.subject, not_after: meta.not_after, source: meta.source },
    }),
  );
  return certView(rec);
}

export async function renew(ctx: CallContext, id: string, body: RenewBody): Promise<KeyView> {
  const tid = ctx.principal.tenantId;
  const stored = await readCert(ctx, id);
  const current = stored.record;
  if (current.meta.status === 'revoked') throw conflict('a revoked certificate cannot be renewed: enroll a new one', 'revoked');
  const opened = await openSecret<CertSecret>(tid, current, stored.sealed);
  const secret = opened?.private_key ? opened : undefined;
  const old = new x509.X509Certificate(current.meta.certificate_pem);

  // the key: a new CSR's, the current one, or a new one
  let publicKey: KeyObject;
  let privateKey: KeyObject | undefined;
  let csrPem: string | null = null;
  let csr: x509.Pkcs10CertificateRequest | undefined;
  if (body.csr) {
    ({ csr, publicKey } = parseCsr(body.csr));
    checkSubjectKey(publicKey);
    await verifyCsr(csr);
    csrPem = csr.toString('pem') + '\n';
  } else {
    const reuse = body.reuse_key ?? !secret;
    if (reuse) {
      publicKey = certPublicKey(old);
      privateKey = secret ? createPrivateKey(secret.private_key) : undefined;
      csrPem = current.meta.csr_pem;
    } else {
      if (!secret && !body.key_algorithm)
        throw badRequest('this certificate was issued for a CSR: send a new csr to renew with a new key, or reuse_key: true');
      ({ publicKey, privateKey } = await generateKeyPair(SPECS[body.key_algorithm ?? algorithmName(certPublicKey(old))]));
    }
  }

  const profile: Profile = {
    subject: old.subject,
    sans: sansOf(old.extensions),
    keyUsage: usagesOf(old).key_usage,
    extendedKeyUsage: usagesOf(old).extended_key_usage.filter((u): u is ExtendedKeyUsageName => u in EXTENDED_KEY_USAGES),
    validityDays: body.validity_days ?? current.meta.validity_days ?? DEFAULT_VALIDITY_DAYS,
  };
  let issued: Issued;
  if (current.meta.acme) {
    if (body.validity_days !== undefined) throw badRequest('the validity of an ACME certificate is set by the ACME directory');
    if (!csrPem) {
      if (!privateKey) throw badRequest('renewing through ACME needs a csr or a key held by the service');
      csrPem = await csrFor({ privateKey, publicKey }, profile.subject, profile.sans);
    }
    issued = await viaAcme(ctx, current.meta.acme, csrPem);
  } else {
    issued = await issue(ctx, profile, publicKey);
  }
  const keepSecret = privateKey ? { private_key: privatePkcs8Pem(privateKey) } : undefined;
  const now = Date.now();
  const earlier: EarlierSerial[] = [
    ...(current.meta.earlier_serials ?? []),
    {
      serial_number: current.meta.serial_number,
      not_after: current.meta.not_after,
      ca_id: current.meta.ca_id,
      ...(current.meta.acme ? { certificate_pem: current.meta.certificate_pem } : {}),
    },
  ].filter((e) => Date.parse(e.not_after) > now);
  const issuedMeta = certMeta(issued.cert, issued.chain, {
    source: current.meta.source === 'acme' ? 'acme' : 'issued',
    caId: issued.caId,
    csrPem,
    acme: current.meta.acme,
    hasPrivate: keepSecret !== undefined,
    description: current.meta.description,
    tags: current.meta.tags,
    validityDays: current.meta.acme ? null : profile.validityDays,
  });
  const meta: CertMeta = { ...issuedMeta, earlier_serials: earlier };
  const { record } = await updateResource<CertMeta, CertSecret>(
    ctx,
    TYPE,
    id,
    // a CSR-issued renewal has no private part: an empty secret replaces the previous key
    { meta, secret: keepSecret ?? ({} as CertSecret) },
    (rec) => ({
      action: 'certificate.renew',
      resource: { type: TYPE, id: rec.id, name: rec.name },
      detail: {
        version: rec.version,
        serial_number: meta.serial_number,
        previous_serial_number: current.meta.serial_number,
        new_key: meta.public_key_fingerprint !== current.meta.public_key_fingerprint,
      },
      event: {
        type: 'certificate.renewed',
        data: { id: rec.id, serial: meta.serial_number, subject: meta.subject, not_after: meta.not_after, version: rec.version },
      },
    }),
    { ifMatch: `"${current.id}.${current.version}"` },
  );
  return certView(record);
}

export async function revoke(ctx: CallContext, id: string, body: RevokeBody): Promise<KeyView> {
  const tid = ctx.principal.tenantId;
  const stored = await readCert(ctx, id);
  const current = stored.record;
  if (current.meta.status === 'revoked') throw conflict('the certificate is already revoked', 'already_revoked');
  const revokedAt = new Date().toISOString();
  // every serial the certificate was issued under and that is still valid: the current one and the earlier ones of renewals
  const now = Date.now();
  const serials: EarlierSerial[] = [
    {
      serial_number: current.meta.serial_number,
      not_after: current.meta.not_after,
      ca_id: current.meta.ca_id,
      certificate_pem: current.meta.certificate_pem,
    },
    ...(current.meta.earlier_serials ?? []).filter((e) => Date.parse(e.not_after) > now),
  ];
  if (current.meta.acme) {
    await revokeAtDirectory(ctx, current.meta.acme, current.meta.certificate_pem, REVOCATION_REASONS[body.reason]);
    // earlier ACME certificates: best effort (the directory may have revoked or forgotten them)
    for (const s of serials.slice(1)) {
      if (!s.certificate_pem || s.ca_id) continue;
      await revokeAtDirectory(ctx, current.meta.acme, s.certificate_pem, REVOCATION_REASONS[body.reason]).catch((error: unknown) =>
        logger.warn('earlier ACME certificate not revoked at the directory', { serial_number: s.serial_number, error: error as Error }),
      );
    }
  }
  const extra = serials
    .filter((s): s is EarlierSerial & { ca_id: string } => s.ca_id !== null)
    .map((s) => revocationPut(tid, s.ca_id, { serial_number: s.serial_number, revoked_at: revokedAt, reason: body.reason, certificate_id: id }));
  const write = updateResource<CertMeta, CertSecret>(
    ctx,
    TYPE,
    id,
    (cur) => ({ meta: { ...cur.meta, status: 'revoked', revoked_at: revokedAt, revocation_reason: body.reason } }),
    (rec) => ({
      action: 'certificate.revoke',
      resource: { type: TYPE, id: rec.id, name: rec.name },
      detail: { serial_number: current.meta.serial_number, reason: body.reason, serials_revoked: serials.map((s) => s.serial_number) },
      event: {
        type: 'certificate.revoked',
        data: {
          id: rec.id,
          serial: current.meta.serial_number,
          subject: current.meta.subject,
          not_after: current.meta.not_after,
          reason: body.reason,
        },
      },
    }),
    { ifMatch: `"${current.id}.${current.version}"`, extraItems: extra },
  );
  try {
    const { record } = await write;
    if (extra.length > 0) await republishCa(tid);
    return certView(record);
  } catch (error) {
    // the serial's revocation item exists already: revoked concurrently
    if (error instanceof TxConditionFailed) throw conflict('the certificate is already revoked', 'already_revoked');
    throw error;
  }
}
