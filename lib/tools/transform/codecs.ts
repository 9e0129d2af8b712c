import { base32, base64, base64urlnopad, hex } from '@scure/base';
import * as qp from 'libqp';
import { badRequest } from '../../core/errors.js';

/**
 * The encodings of /api/v1/transform/encode and /decode, over well-kept implementations:
 * RFC 4648 base64, base64url (unpadded, as JOSE uses it), base16 and base32 from
 * @scure/base; RFC 3986 percent-encoding; RFC 7468 PEM; RFC 2045 quoted-printable (libqp).
 * JWTs are decoded only, never verified (decode.ts marks them so).
 */
export const FORMATS = ['base64', 'base64url', 'hex', 'base32', 'url', 'pem', 'quoted-printable', 'jwt'] as const;
export type Format = (typeof FORMATS)[number];

const fail = (format: string, why: string) =>
  badRequest(`the input is not valid ${format}: ${why}`, [{ path: 'body.input', message: `not ${format}` }]);

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** RFC 3986 §2.1: every byte outside the unreserved set as %XX (UTF-8 for text). */
function percentEncode(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && UNRESERVED.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function percentDecode(text: string): Buffer {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '%') {
      const h = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(h)) throw fail('url', `"%" at ${i} is not followed by two hex digits`);
      out.push(Number.parseInt(h, 16));
      i += 2;
    } else out.push(...Buffer.from(c === '+' ? ' ' : c, 'utf8'));
  }
  return Buffer.from(out);
}

const PEM_RE = /^-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)\r?\n?-----END \1-----\s*$/;

export function encodeBytes(format: Exclude<Format, 'jwt'>, bytes: Buffer, pemLabel: string): string {
  switch (format) {
    case 'base64':
      return base64.encode(bytes);
    case 'base64url':
      return base64urlnopad.encode(bytes);
    case 'hex':
      return hex.encode(bytes);
    case 'base32':
      return base32.encode(bytes);
    case 'url':
      return percentEncode(bytes);
    case 'pem':
      return `-----BEGIN ${pemLabel}-----\n${(base64.encode(bytes).match(/.{1,64}/g) ?? []).join('\n')}\n-----END ${pemLabel}-----\n`;
    case 'quoted-printable':
      return qp.wrap(qp.encode(bytes), 76);
  }
}

export function decodeText(format: Exclude<Format, 'jwt'>, input: string): { bytes: Buffer; label?: string } {
  const compact = input.replace(/\s+/g, '');
  try {
    switch (format) {
      case 'base64':
        return { bytes: Buffer.from(base64.decode(compact)) };
      case 'base64url':
        return { bytes: Buffer.from(base64urlnopad.decode(compact.replace(/=+$/, ''))) };
      case 'hex':
        return { bytes: Buffer.from(hex.decode(compact.replace(/^0x/i, '').toLowerCase())) };
      case 'base32':
        return { bytes: Buffer.from(base32.decode(compact.toUpperCase())) };
      case 'url':
        return { bytes: percentDecode(input) };
      case 'pem': {
        const m = PEM_RE.exec(input.trim());
        if (!m) throw fail('pem', 'expected -----BEGIN <LABEL>----- base64 -----END <LABEL>----- with the same label (RFC 7468)');
        return { bytes: Buffer.from(base64.decode(m[2]!.replace(/\s+/g, ''))), label: m[1]! };
      }
      case 'quoted-printable':
        if (/=(?![0-9A-Fa-f]{2}|\r?\n)/.test(input)) throw fail('quoted-printable', '"=" must start =XX or a soft line break');
        return { bytes: qp.decode(input) };
    }
  } catch (error) {
    if (error instanceof Error && error.name === 'HttpError') throw error;
    throw fail(format, error instanceof Error ? error.message : 'it does not decode');
  }
}

/** A JWT's header and claims, decoded and NOT verified. */
export function decodeJwt(input: string) {
  const parts = input.trim().split('.');
  if (parts.length !== 3 && parts.length !== 5) throw fail('jwt', 'a JWS has three dot-separated parts (a JWE five)');
  const json = (seg: string, what: string) => {
    try {
      const v = JSON.parse(Buffer.from(base64urlnopad.decode(seg)).toString('utf8')) as unknown;
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      throw fail('jwt', `the ${what} is not base64url JSON`);
    }
  };
  const header = json(parts[0]!, 'header');
  if (parts.length === 5) return { header, payload: null, encrypted: true, signature_present: false };
  return { header, payload: json(parts[1]!, 'payload'), encrypted: false, signature_present: parts[2]!.length > 0 };
}

/** Text when the bytes are UTF-8 without control characters other than whitespace, else null. */
export function asText(bytes: Buffer): string | null {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return null;
  return /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text) ? null : text;
}
