import type { CallContext } from '../auth/principal.js';
import { badRequest, forbidden, notFound } from '../core/errors.js';
import { buildPkcs12, pkcs8Der } from '../pki/pkcs12.js';
import { x509 } from '../pki/x509.js';
import { exportSecret } from '../keys/common.js';
import { caIdOf, currentCrl, readCa, republishCa } from './ca.js';
import type { DownloadFormat } from './schemas.js';
import { TYPE, readCert, type CertMeta, type CertSecret } from './service.js';

/** Downloads of a certificate (PEM, DER, chain, private key, PKCS#12) and of the account CA. */
interface Download {
  readonly format: DownloadFormat;
  readonly filename: string;
  readonly content_type: string;
  readonly encoding: 'text' | 'base64';
  readonly content: string;
  readonly [k: string]: unknown;
}

/** The public parts of a certificate: its PEM, its DER (base64) and its chain (PEM). */
function publicPart(format: 'pem' | 'der' | 'chain', names: Record<'pem' | 'der' | 'chain', string>, pem: string, chainPem: string): Download {
  const filename = names[format];
  if (format === 'der')
    return {
      format,
      filename,
      content_type: 'application/pkix-cert',
      encoding: 'base64',
      content: Buffer.from(new x509.X509Certificate(pem).rawData).toString('base64'),
    };
  return { format, filename, content_type: 'application/x-pem-file', encoding: 'text', content: format === 'pem' ? pem : chainPem };
}

const safeName = (n: string) => n.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64) || 'certificate';

async function crlDownload(tenantId: string, name: string): Promise<Download> {
  const crl = await currentCrl(tenantId);
  if (!crl) throw notFound('certificate authority');
  await republishCa(tenantId);
  return {
    format: 'crl',
    filename: `${safeName(name)}.crl.pem`,
    content_type: 'application/pkix-crl',
    encoding: 'text',
    content: crl.pem,
    this_update: crl.this_update,
    next_update: crl.next_update,
    revoked_count: crl.entries,
  };
}

/** The public downloads of the account CA: its root (pem/der), chain (intermediate + root), CRL. */
async function caDownload(ctx: CallContext, format: DownloadFormat): Promise<Download> {
  const ca = await readCa(ctx.principal.tenantId);
  if (!ca) throw notFound('certificate');
  switch (format) {
    case 'pem':
    case 'der':
    case 'chain':
      return publicPart(
        format,
        { pem: 'account-root-ca.pem', der: 'account-root-ca.der', chain: 'account-ca-chain.pem' },
        ca.meta.root.certificate_pem,
        ca.meta.intermediate.certificate_pem + ca.meta.root.certificate_pem,
      );
    case 'crl':
      return crlDownload(ctx.principal.tenantId, 'account-ca');
    default:
      throw forbidden('the private keys of the account CA are never exported', 'not_exportable');
  }
}

export async function download(
  ctx: CallContext,
  id: string,
  format: DownloadFormat,
  pkcs12?: { password: string; include_chain: boolean; friendly_name?: string },
): Promise<Download> {
  if (id === caIdOf(ctx.principal.tenantId) && (await readCa(ctx.principal.tenantId))) return caDownload(ctx, format);
  const stored = await readCert(ctx, id);
  const { meta, name } = stored.record;
  const cert = new x509.X509Certificate(meta.certificate_pem);
  const base = safeName(name);
  switch (format) {
    case 'pem':
    case 'der':
    case 'chain':
      return publicPart(
        format,
        { pem: `${base}.pem`, der: `${base}.der`, chain: `${base}.chain.pem` },
        meta.certificate_pem,
        meta.certificate_pem + meta.chain_pem,
      );
    case 'crl':
      if (!meta.ca_id)
        throw badRequest('this certificate was issued by an external ACME CA, which publishes its own revocation status', undefined, 'no_crl');
      return crlDownload(ctx.principal.tenantId, `${name}-issuer`);
    case 'key': {
      const secret = await exportSecret<CertMeta, CertSecret>(ctx, TYPE, stored, 'pkcs8 private key');
      if (!secret?.private_key)
        throw badRequest('this certificate was issued for a CSR: its private key never reached the service', undefined, 'no_private_key');
      return { format, filename: `${base}.key.pem`, content_type: 'application/x-pem-file', encoding: 'text', content: secret.private_key };
    }
    case 'pkcs12': {
      if (!pkcs12)
        throw badRequest('a PKCS#12 export needs a password: use POST /api/v1/certificates/{id}/download with {"format": "pkcs12", "password": ...}');
      const secret = await exportSecret<CertMeta, CertSecret>(ctx, TYPE, stored, 'pkcs12');
      if (!secret?.private_key)
        throw badRequest('this certificate was issued for a CSR: its private key never reached the service', undefined, 'no_private_key');
      const chain = pkcs12.include_chain
        ? (meta.chain_pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(
            (b) => new Uint8Array(new x509.X509Certificate(b).rawData),
          )
        : [];
      const p12 = await buildPkcs12(
        pkcs12.password,
        [{ alias: pkcs12.friendly_name ?? name, privateKey: pkcs8Der(secret.private_key), chain: [new Uint8Array(cert.rawData), ...chain] }],
        [],
      );
      return { format, filename: `${base}.p12`, content_type: 'application/x-pkcs12', encoding: 'base64', content: p12.toString('base64') };
    }
  }
}
