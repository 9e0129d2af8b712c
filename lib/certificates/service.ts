import type { CallContext } from '../auth/principal.js';
import { notFound } from '../core/errors.js';
import type { KeyUsageName, SanInput } from '../pki/x509.js';
import { readResource, type ResourceRecord } from '../resources/store.js';
import { keyView, listKeys, type KeyView } from '../keys/common.js';
import type { KeyMetaBase } from '../catalog.js';
import type { ListQuery } from '../keys/schemas.js';
import type { AcmeSettings } from './acme.js';
import { caIdOf, caView, CA_TYPE, readCa, type CaMeta } from './ca.js';

/**
 * Certificates: issued by the account CA (from a CSR, or for a key generated here) or
 * obtained from an external ACME directory. A certificate resource is the managed
 * certificate: renewal writes a new version (new serial, same or new key) and keeps the
 * previous ones in its history; revocation marks it and, for the account CA, adds its
 * serial and every unexpired earlier serial to the CRL in the same transaction, then
 * publishes the CRL (lib/certificates/publish.ts).
 */
export const TYPE = 'certificate';

export interface CertMeta extends KeyMetaBase {
  readonly serial_number: string;
  readonly subject: string;
  readonly common_name: string | null;
  readonly issuer: string;
  readonly sans: Required<SanInput>;
  readonly key_usage: KeyUsageName[];
  readonly extended_key_usage: string[];
  readonly not_before: string;
  readonly not_after: string;
  readonly status: 'active' | 'revoked';
  readonly revoked_at: string | null;
  readonly revocation_reason: string | null;
  readonly certificate_pem: string;
  /** The issuing chain without the certificate itself (intermediate, then root). */
  readonly chain_pem: string;
  readonly ca_id: string | null;
  /** The request of a CSR-issued certificate (reused to renew with the same key). */
  readonly csr_pem: string | null;
  readonly acme: AcmeSettings | null;
  readonly validity_days: number | null;
  readonly public_key_fingerprint: string;
  /**
   * The serials this certificate was issued under before its current one (renewals), while
   * unexpired: revoking the certificate revokes them too. ACME ones keep their PEM (the
   * directory revokes by certificate).
   */
  readonly earlier_serials?: readonly EarlierSerial[];
}
export interface EarlierSerial {
  readonly serial_number: string;
  readonly not_after: string;
  readonly ca_id: string | null;
  readonly certificate_pem?: string;
}
export interface CertSecret {
  readonly private_key: string;
}

/** The public view, with the state as of now (`expired` once past not_after). */
export function certView(rec: ResourceRecord<CertMeta>): KeyView {
  const v = keyView(rec);
  const expired = rec.meta.status === 'active' && Date.parse(rec.meta.not_after) <= Date.now();
  return {
    ...v,
    status: expired ? 'expired' : rec.meta.status,
    days_until_expiry: Math.floor((Date.parse(rec.meta.not_after) - Date.now()) / 86400_000),
  };
}

export async function readCert(ctx: CallContext, id: string) {
  const stored = await readResource<CertMeta>(ctx.principal.tenantId, TYPE, id);
  if (!stored) throw notFound('certificate');
  return stored;
}

/** A certificate, or the account CA when `id` is the CA's id. */
export async function getCertificate(ctx: CallContext, id: string): Promise<{ view: Record<string, unknown>; etag: string }> {
  if (id === caIdOf(ctx.principal.tenantId)) {
    const ca = await readCa(ctx.principal.tenantId);
    if (ca) return { view: { certificate_authority: caView(ca) }, etag: `"${ca.id}.${ca.version}"` };
  }
  const { record } = await readCert(ctx, id);
  return { view: { certificate: certView(record) }, etag: `"${record.id}.${record.version}"` };
}

export async function listCertificates(ctx: CallContext, query: ListQuery) {
  const page = await listKeys<CertMeta>(ctx, TYPE, query);
  const items = page.items.map((v) => {
    const expired = v.status === 'active' && Date.parse(v.not_after as string) <= Date.now();
    return {
      ...v,
      status: expired ? 'expired' : v.status,
      days_until_expiry: Math.floor((Date.parse(v.not_after as string) - Date.now()) / 86400_000),
    };
  });
  const ca = await readCa(ctx.principal.tenantId);
  return { items, nextCursor: page.nextCursor, ca: ca ? caView(ca) : null };
}

export { CA_TYPE, type CaMeta };
