import { createPrivateKey, type KeyObject } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import type { CallContext } from '../auth/principal.js';
import { badRequest, HttpError, serviceUnavailable } from '../core/errors.js';
import { generateKeyPair, privatePkcs8Pem } from '../pki/keys.js';
import { certPem, derInteger, dnEscape, pem, randomSerial, sha256Hex, signingAlgorithm, toPublicCryptoKey, toSigningKey, x509 } from '../pki/x509.js';
import { config } from '../config.js';
import { logger } from '../core/logger.js';
import { tableName } from '../store/client.js';
import { pkiPublisher, pkiUrls } from './publish.js';
import { keys } from '../store/keys.js';
import { queryAll } from '../store/pagination.js';
import { createResource, openSecret, readResource, type ResourceRecord } from '../resources/store.js';

/**
 * The account's certificate authority: a root (ECDSA P-384, 10 years, path length 1) and
 * an intermediate (ECDSA P-256, 5 years, path length 0) created on first use, stored as
 * one `certificate_authority` resource whose id is derived from the tenant id (so two
 * concurrent first uses create it once). The certificates are public metadata; both
 * private keys are sealed and never leave the service. The intermediate signs end-entity
 * certificates and the CRL.
 */
export const CA_TYPE = 'certificate_authority';
const CA_NAMESPACE = '3f0b7d2e-6a0c-4b1e-9a57-5d1c0e6f2a91';
const ROOT_YEARS = 10;
const INTERMEDIATE_YEARS = 5;
/** How long a CRL is current; it is re-signed on every download. */
const CRL_VALIDITY_HOURS = 24;

interface CaCertInfo {
  readonly certificate_pem: string;
  readonly subject: string;
  readonly serial_number: string;
  readonly not_before: string;
  readonly not_after: string;
  readonly fingerprint: string;
}

export interface CaMeta {
  readonly algorithm: string;
  readonly bits: number;
  readonly curve: string;
  /** SHA-256 of the intermediate certificate (the issuer of every account certificate). */
  readonly fingerprint: string;
  readonly public_key: string;
  readonly expires_at: string;
  readonly has_private_key: false;
  readonly source: 'generated';
  readonly description: string;
  readonly tags: string[];
  readonly root: CaCertInfo;
  readonly intermediate: CaCertInfo;
}
interface CaSecret {
  readonly root_key: string;
  readonly intermediate_key: string;
}

export const caIdOf = (tenantId: string) => uuidv5(tenantId, CA_NAMESPACE);

const years = (n: number) => new Date(Date.now() + n * 365.25 * 86400_000);

function info(c: x509.X509Certificate): CaCertInfo {
  return {
    certificate_pem: certPem(c),
    subject: c.subject,
    serial_number: c.serialNumber.toLowerCase(),
    not_before: c.notBefore.toISOString(),
    not_after: c.notAfter.toISOString(),
    fingerprint: sha256Hex(c.rawData),
  };
}

async function buildCa(tenantName: string, tenantId: string): Promise<{ meta: CaMeta; secret: CaSecret }> {
  const root = await generateKeyPair({ kind: 'ec', curve: 'P-384' });
  const inter = await generateKeyPair({ kind: 'ec', curve: 'P-256' });
  const org = `O=${dnEscape(tenantName)}, OU=${dnEscape(tenantId)}`;
  const notBefore = new Date(Date.now() - 60_000);
  const rootSigner = await toSigningKey(root.privateKey);
  const rootPub = await toPublicCryptoKey(root.publicKey);
  const rootCert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${dnEscape(tenantName)} Root CA, ${org}`,
    issuer: `CN=${dnEscape(tenantName)} Root CA, ${org}`,
    notBefore,
    notAfter: years(ROOT_YEARS),
    publicKey: rootPub,
    signingKey: rootSigner,
    signingAlgorithm: signingAlgorithm(root.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(rootPub),
    ],
  });
  const interPub = await toPublicCryptoKey(inter.publicKey);
  const interCert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${dnEscape(tenantName)} Intermediate CA, ${org}`,
    issuer: rootCert.subject,
    notBefore,
    notAfter: years(INTERMEDIATE_YEARS),
    publicKey: interPub,
    signingKey: rootSigner,
    signingAlgorithm: signingAlgorithm(root.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(interPub),
      await x509.AuthorityKeyIdentifierExtension.create(rootCert),
    ],
  });
  const meta: CaMeta = {
    algorithm: 'ec',
    bits: 256,
    curve: 'P-256',
    fingerprint: sha256Hex(interCert.rawData),
    public_key: pem(inter.publicKey.export({ type: 'spki', format: 'der' }), 'PUBLIC KEY'),
    expires_at: interCert.notAfter.toISOString(),
    has_private_key: false,
    source: 'generated',
    description: 'the account certificate authority (root and intermediate)',
    tags: [],
    root: info(rootCert),
    intermediate: info(interCert),
  };
  return { meta, secret: { root_key: privatePkcs8Pem(root.privateKey), intermediate_key: privatePkcs8Pem(inter.privateKey) } };
}

export async function readCa(tenantId: string): Promise<ResourceRecord<CaMeta> | undefined> {
  return (await readResource<CaMeta>(tenantId, CA_TYPE, caIdOf(tenantId)))?.record;
}

/** The account CA, created on first use. */
async function ensureCa(ctx: CallContext): Promise<ResourceRecord<CaMeta>> {
  const tid = ctx.principal.tenantId;
  const existing = await readCa(tid);
  if (existing) return existing;
  const { meta, secret } = await buildCa(ctx.principal.tenant.name, tid);
  try {
    return await createResource<CaMeta, CaSecret>(ctx, { type: CA_TYPE, id: caIdOf(tid), name: 'account-ca', meta, secret }, (rec) => ({
      action: 'certificate_authority.create',
      resource: { type: CA_TYPE, id: rec.id, name: rec.name },
      detail: { root_fingerprint: meta.root.fingerprint, intermediate_fingerprint: meta.intermediate.fingerprint },
    }));
  } catch (error) {
    // created concurrently by another request: use that one
    if (error instanceof HttpError && error.code === 'already_exists') return (await readCa(tid))!;
    throw error;
  }
}

async function intermediateSigner(tenantId: string): Promise<{ ca: ResourceRecord<CaMeta>; key: KeyObject; cert: x509.X509Certificate }> {
  const stored = await readResource<CaMeta>(tenantId, CA_TYPE, caIdOf(tenantId));
  if (!stored) throw new Error('the account CA does not exist');
  const secret = await openSecret<CaSecret>(tenantId, stored.record, stored.sealed);
  return {
    ca: stored.record,
    key: createPrivateKey(secret!.intermediate_key),
    cert: new x509.X509Certificate(stored.record.meta.intermediate.certificate_pem),
  };
}

interface IssueRequest {
  readonly subjectPublicKey: KeyObject;
  /** RFC 4514 string. */
  readonly subject: string;
  readonly extensions: readonly x509.Extension[];
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** Issues an end-entity certificate from the account intermediate. */
export async function issueFromCa(
  ctx: CallContext,
  req: IssueRequest,
): Promise<{ cert: x509.X509Certificate; chain: string; ca: ResourceRecord<CaMeta> }> {
  await ensureCa(ctx);
  const { ca, key, cert: issuer } = await intermediateSigner(ctx.principal.tenantId);
  if (req.notAfter > issuer.notAfter)
    throw badRequest(`the certificate cannot outlive the account intermediate CA (until ${issuer.notAfter.toISOString()})`);
  const pub = await toPublicCryptoKey(req.subjectPublicKey);
  // where relying parties check revocation and find the issuer (RFC 5280 §4.2.1.13, §4.2.2.1)
  const urls = pkiUrls(ca.id);
  const published = urls
    ? [new x509.CRLDistributionPointsExtension([urls.crl]), new x509.AuthorityInfoAccessExtension({ caIssuers: urls.issuer })]
    : [];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: req.subject,
    issuer: issuer.subject,
    notBefore: req.notBefore,
    notAfter: req.notAfter,
    publicKey: pub,
    signingKey: await toSigningKey(key),
    signingAlgorithm: signingAlgorithm(key),
    extensions: [
      ...req.extensions,
      await x509.SubjectKeyIdentifierExtension.create(pub),
      await x509.AuthorityKeyIdentifierExtension.create(issuer),
      ...published,
    ],
  });
  // the files the certificate names exist (and the CRL is fresh) before it is handed out
  try {
    await publishCa(ctx.principal.tenantId);
  } catch (error) {
    throw serviceUnavailable('publishing the CA certificate and CRL failed; retry the request', error);
  }
  return { cert, chain: ca.meta.intermediate.certificate_pem + ca.meta.root.certificate_pem, ca };
}

export const REVOCATION_REASONS = {
  unspecified: x509.X509CrlReason.unspecified,
  key_compromise: x509.X509CrlReason.keyCompromise,
  ca_compromise: x509.X509CrlReason.cACompromise,
  affiliation_changed: x509.X509CrlReason.affiliationChanged,
  superseded: x509.X509CrlReason.superseded,
  cessation_of_operation: x509.X509CrlReason.cessationOfOperation,
  certificate_hold: x509.X509CrlReason.certificateHold,
  privilege_withdrawn: x509.X509CrlReason.privilegeWithdrawn,
} as const;
type RevocationReason = keyof typeof REVOCATION_REASONS;

/** The revocation item of a serial, written in the same transaction as the certificate's revocation. */
export function revocationPut(
  tenantId: string,
  caId: string,
  entry: { serial_number: string; revoked_at: string; reason: RevocationReason; certificate_id: string },
) {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.certRevocation(tenantId, caId, entry.serial_number), ...entry },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

async function revocations(tenantId: string, caId: string) {
  const items = await queryAll({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.certRevocationPrefix(caId) } });
  return items as { serial_number: string; revoked_at: string; reason: RevocationReason }[];
}

/**
 * The account CRL (v2), signed by the intermediate now: every revoked serial with its
 * date and reason code, the authority key identifier, and a CRL number that grows with
 * time (milliseconds since the epoch), so a later CRL always has a larger number.
 */
export async function currentCrl(
  tenantId: string,
  validityHours = CRL_VALIDITY_HOURS,
): Promise<{ pem: string; der: Buffer; this_update: string; next_update: string; entries: number; ca_id: string } | undefined> {
  if (!(await readCa(tenantId))) return undefined;
  const { ca, key, cert } = await intermediateSigner(tenantId);
  const entries = await revocations(tenantId, ca.id);
  const thisUpdate = new Date();
  const nextUpdate = new Date(thisUpdate.getTime() + validityHours * 3600_000);
  const crl = await x509.X509CrlGenerator.create({
    issuer: cert.subject,
    thisUpdate,
    nextUpdate,
    signingKey: await toSigningKey(key),
    signingAlgorithm: signingAlgorithm(key),
    entries: entries.map((e) => ({ serialNumber: e.serial_number, revocationDate: new Date(e.revoked_at), reason: REVOCATION_REASONS[e.reason] })),
    extensions: [
      await x509.AuthorityKeyIdentifierExtension.create(cert),
      new x509.Extension('2.5.29.20', false, derInteger(BigInt(thisUpdate.getTime()))),
    ],
  });
  const der = Buffer.from(crl.rawData);
  return {
    pem: pem(der, 'X509 CRL'),
    der,
    this_update: thisUpdate.toISOString(),
    next_update: nextUpdate.toISOString(),
    entries: entries.length,
    ca_id: ca.id,
  };
}

/**
 * Publishes the account CA's CRL (valid PKI_CRL_VALIDITY_DAYS) and intermediate
 * certificate where issued certificates say they are (lib/certificates/publish.ts): on
 * every issuance and revocation and on every authenticated CRL download. Nothing when the
 * deployment publishes nothing. Returns whether it published.
 */
async function publishCa(tenantId: string): Promise<boolean> {
  const publisher = await pkiPublisher();
  if (!publisher) return false;
  const crl = await currentCrl(tenantId, config().PKI_CRL_VALIDITY_DAYS * 24);
  if (!crl) return false;
  const ca = (await readCa(tenantId))!;
  const issuer = new x509.X509Certificate(ca.meta.intermediate.certificate_pem);
  await Promise.all([
    publisher.put({ name: `${crl.ca_id}.crl`, body: crl.der, contentType: 'application/pkix-crl' }),
    publisher.put({ name: `${crl.ca_id}.crt`, body: new Uint8Array(issuer.rawData), contentType: 'application/pkix-cert' }),
  ]);
  return true;
}

/** publishCa where a failure must not fail the request (after a revocation is committed, on a download): logged; the next issuance, revocation or download publishes again. */
export async function republishCa(tenantId: string): Promise<boolean> {
  try {
    return await publishCa(tenantId);
  } catch (error) {
    logger.error('CRL publication failed', { tenant_id: tenantId, error: error as Error });
    return false;
  }
}

/** The public view of the account CA (never its keys). */
export function caView(rec: ResourceRecord<CaMeta>) {
  return {
    id: rec.id,
    type: rec.type,
    name: rec.name,
    ...rec.meta,
    chain_pem: rec.meta.intermediate.certificate_pem + rec.meta.root.certificate_pem,
    version: rec.version,
    created_at: rec.created_at,
    updated_at: rec.updated_at,
  };
}
