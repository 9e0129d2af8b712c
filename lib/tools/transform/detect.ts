import { asText, decodeJwt, decodeText } from './codecs.js';
import { HIGH_ENTROPY, SECRET_RULES } from './rules.js';

/**
 * POST /api/v1/transform/detect: which formats the input is (each with what it decodes to),
 * and which parts look like secrets (rules.ts). A finding shows where it is and a redacted
 * preview — never the secret itself.
 */
interface Finding {
  readonly rule: string;
  readonly description: string;
  readonly severity: string;
  readonly start: number;
  readonly end: number;
  readonly preview: string;
  readonly entropy?: number;
}

const redact = (s: string) => (s.length <= 8 ? `${'*'.repeat(s.length)}` : `${s.slice(0, 4)}…(${s.length} characters)`);

export function shannon(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length);
  return Math.round(bits * 100) / 100;
}

export function findSecrets(input: string): Finding[] {
  const found: Finding[] = [];
  for (const rule of SECRET_RULES) {
    for (const m of input.matchAll(rule.pattern)) {
      const secret = m[rule.group ?? 0]!;
      const start = m.index + m[0].indexOf(secret);
      found.push({
        rule: rule.id,
        description: rule.description,
        severity: rule.severity,
        start,
        end: start + secret.length,
        preview: redact(secret),
      });
    }
  }
  const covered = (s: number, e: number) => found.some((f) => s < f.end && e > f.start);
  for (const m of input.matchAll(HIGH_ENTROPY.token)) {
    const t = m[0];
    const alphabet = /^[0-9a-fA-F]+$/.test(t) ? 'hex' : 'base64';
    const bits = shannon(t);
    if (bits >= HIGH_ENTROPY.minBits[alphabet] && !covered(m.index, m.index + t.length)) {
      found.push({
        rule: HIGH_ENTROPY.id,
        description: HIGH_ENTROPY.description,
        severity: HIGH_ENTROPY.severity,
        start: m.index,
        end: m.index + t.length,
        preview: redact(t),
        entropy: bits,
      });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

interface FormatGuess {
  readonly format: string;
  readonly decodes_to?: 'text' | 'binary';
  readonly detail?: Record<string, unknown>;
}

const decodesTo = (bytes: Buffer): 'text' | 'binary' => (asText(bytes) === null ? 'binary' : 'text');

function tryDecode(format: 'base64' | 'base64url' | 'hex' | 'base32' | 'url' | 'quoted-printable' | 'pem', input: string) {
  try {
    return decodeText(format, input);
  } catch {
    return undefined;
  }
}

/** The formats the whole input is in (several can hold: `deadbeef` is hex and base64). */
export function detectFormats(input: string): FormatGuess[] {
  const s = input.trim();
  const out: FormatGuess[] = [];
  const pem = /-----BEGIN [A-Z0-9 ]+-----/.test(s) ? tryDecode('pem', s) : undefined;
  if (pem) out.push({ format: 'pem', decodes_to: 'binary', detail: { label: pem.label, der_bytes: pem.bytes.length } });
  if (/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(s)) {
    try {
      const jwt = decodeJwt(s);
      if (typeof jwt.header.alg === 'string') out.push({ format: 'jwt', detail: { alg: jwt.header.alg, verified: false } });
    } catch {
      /* not a JWT */
    }
  }
  if (/^(0x)?([0-9a-fA-F]{2})+$/.test(s)) out.push({ format: 'hex', decodes_to: decodesTo(decodeText('hex', s).bytes) });
  if (s.length % 8 === 0 && /^[A-Z2-7]+=*$/.test(s)) {
    const b = tryDecode('base32', s);
    if (b) out.push({ format: 'base32', decodes_to: decodesTo(b.bytes) });
  }
  if (s.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(s)) {
    const b = tryDecode('base64', s);
    if (b) out.push({ format: 'base64', decodes_to: decodesTo(b.bytes) });
  }
  if (/^[A-Za-z0-9_-]+$/.test(s) && /[-_]/.test(s) && s.length % 4 !== 1) {
    const b = tryDecode('base64url', s);
    if (b) out.push({ format: 'base64url', decodes_to: decodesTo(b.bytes) });
  }
  if (/%[0-9A-Fa-f]{2}/.test(s)) {
    const b = tryDecode('url', s);
    if (b) out.push({ format: 'url', decodes_to: decodesTo(b.bytes) });
  }
  if (/=[0-9A-F]{2}|=\r?\n/.test(s) && !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) {
    const b = tryDecode('quoted-printable', s);
    if (b) out.push({ format: 'quoted-printable', decodes_to: decodesTo(b.bytes) });
  }
  if (/^[[{]/.test(s)) {
    try {
      JSON.parse(s);
      out.push({ format: 'json' });
    } catch {
      /* not JSON */
    }
  }
  return out;
}
