import { isIP } from 'node:net';
import * as z from 'zod/v4';

/** Field atoms shared by the type schemas. */
export const Text = (max = 256) => z.string().trim().min(1).max(max);
/** A secret string: kept exactly as given (no trimming: whitespace may be significant). */
export const Secret = (max = 4096) => z.string().min(1).max(max);

const HOSTNAME_RE = /^(?=.{1,253}$)([A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$/;
const isHost = (h: string) => isIP(h) !== 0 || HOSTNAME_RE.test(h);
export const Host = z.string().trim().min(1).max(253).refine(isHost, { message: 'a hostname or an IP address' });
export const IpAddress = z
  .string()
  .trim()
  .refine((h) => isIP(h) !== 0, { message: 'an IPv4 or IPv6 address' });
export const Port = z.number().int().min(1).max(65535);
export const Timestamp = z.iso.datetime({ offset: true });
export const HttpUrl = z.url({ protocol: /^https?$/ }).max(2048);
export const Email = z.email().max(254);
export const Hex = (bytes: number) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`), `${bytes} bytes as ${bytes * 2} hex digits`)
    .transform((s) => s.toLowerCase());
export const Base32Secret = z
  .string()
  .transform((s) => s.replace(/[\s-]/g, '').toUpperCase().replace(/=+$/, ''))
  .pipe(z.string().regex(/^[A-Z2-7]{16,512}$/, 'base32 (RFC 4648), at least 80 bits'));

const pemRe = (label: string) => new RegExp(`-----BEGIN ${label}-----[\\s\\S]+?-----END ${label}-----`);
/** One or more PEM blocks whose label matches `label` (a regex fragment). */
const Pem = (label: string, max = 64 * 1024) =>
  z
    .string()
    .max(max)
    .regex(pemRe(label), `PEM (-----BEGIN ${label.replace(/\\/g, '')}-----)`);
export const PrivateKeyPem = Pem('(?:RSA |EC |ENCRYPTED |OPENSSH )?PRIVATE KEY');
export const CertificatePem = Pem('CERTIFICATE');
export const RecoveryCodes = z.array(Secret(128)).min(1).max(50);
