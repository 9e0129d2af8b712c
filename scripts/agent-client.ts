/**
 * A tiny agent client: generates a device key pair and signs requests the way the service
 * verifies them (RFC 9421 HTTP Message Signatures + RFC 9530 Content-Digest; README,
 * "Agents"). Used by the tests; also a command line:
 *
 *   tsx scripts/agent-client.ts keygen [ed25519|ecdsa-p256-sha256] > device-key.json
 *   tsx scripts/agent-client.ts call <base url> <device id> <device-key.json> <METHOD> <path> [json body]
 *
 * keygen prints {"algorithm", "public_jwk", "private_jwk"}: send public_jwk as `public_key`
 * when enrolling; keep private_jwk on the device.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { serializeInnerList, type InnerList } from 'structured-headers';

export type Algorithm = 'ed25519' | 'ecdsa-p256-sha256';

export interface DeviceKey {
  readonly algorithm: Algorithm;
  readonly privateKey: KeyObject;
  /** The public half, as a JWK: what enrolment sends. */
  readonly publicJwk: JsonWebKey;
}

export function generateDeviceKey(algorithm: Algorithm = 'ed25519'): DeviceKey {
  const pair = algorithm === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { algorithm, privateKey: pair.privateKey, publicJwk: pair.publicKey.export({ format: 'jwk' }) };
}

/** RFC 3986 percent-encoding of everything but unreserved characters. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** A query string in the canonical form the service rebuilds: names sorted, values in order. */
export function canonicalQuery(query: Record<string, string | string[]> = {}): string {
  const pairs: string[] = [];
  for (const name of Object.keys(query).sort()) for (const v of ([] as string[]).concat(query[name]!)) pairs.push(`${enc(name)}=${enc(v)}`);
  return pairs.length > 0 ? `?${pairs.join('&')}` : '';
}

export interface SignInput {
  readonly method: string;
  /** Absolute URL; its query must already be canonical (see canonicalQuery). */
  readonly url: string;
  readonly body?: string | Uint8Array;
  readonly keyId: string;
  readonly key: Pick<DeviceKey, 'algorithm' | 'privateKey'>;
  /** Overrides for tests and special clients. */
  readonly created?: number;
  readonly nonce?: string;
  readonly label?: string;
  readonly components?: readonly string[];
  readonly includeAlg?: boolean;
}

export interface Signed {
  readonly headers: Record<string, string>;
  /** The exact signature base that was signed (for debugging a client). */
  readonly base: string;
}

/** Signs one request: returns the Content-Digest, Signature-Input and Signature headers. */
export function signRequest(input: SignInput): Signed {
  const url = new URL(input.url);
  const body = input.body === undefined ? Buffer.alloc(0) : Buffer.from(input.body);
  const contentDigest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
  const components = input.components ?? ['@method', '@path', '@query', 'content-digest'];
  const params = new Map<string, string | number>([
    ['created', input.created ?? Math.floor(Date.now() / 1000)],
    ['nonce', input.nonce ?? randomBytes(16).toString('base64url')],
    ['keyid', input.keyId],
  ]);
  if (input.includeAlg !== false) params.set('alg', input.key.algorithm);
  const inner: InnerList = [components.map((c) => [c, new Map()]), params];
  const paramsValue = serializeInnerList(inner);
  const headers: Record<string, string> = { 'content-digest': contentDigest };
  const value = (c: string): string => {
    if (c === '@method') return input.method.toUpperCase();
    if (c === '@path') return url.pathname;
    if (c === '@query') return url.search === '' ? '?' : url.search;
    if (c === '@authority') return url.host.toLowerCase();
    const h = headers[c];
    if (h === undefined) throw new Error(`no header "${c}" to sign`);
    return h;
  };
  const base = [...components.map((c) => `"${c}": ${value(c)}`), `"@signature-params": ${paramsValue}`].join('\n');
  const data = Buffer.from(base, 'utf8');
  const signature =
    input.key.algorithm === 'ed25519' ? sign(null, data, input.key.privateKey) : sign('sha256', data, { key: input.key.privateKey, dsaEncoding: 'ieee-p1363' });
  const label = input.label ?? 'sig1';
  headers['signature-input'] = `${label}=${paramsValue}`;
  headers.signature = `${label}=:${signature.toString('base64')}:`;
  return { headers, base };
}

/** Sends a signed JSON request and returns status and parsed body. */
export async function signedFetch(
  baseUrl: string,
  device: { id: string; key: Pick<DeviceKey, 'algorithm' | 'privateKey'> },
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const url = `${baseUrl.replace(/\/+$/, '')}${path}`;
  const text = body === undefined ? undefined : JSON.stringify(body);
  const { headers } = signRequest({ method, url, body: text, keyId: device.id, key: device.key });
  const res = await fetch(url, { method, headers: { ...headers, ...(text !== undefined ? { 'content-type': 'application/json' } : {}) }, body: text });
  const raw = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === 'keygen') {
    const key = generateDeviceKey((rest[0] as Algorithm | undefined) ?? 'ed25519');
    process.stdout.write(`${JSON.stringify({ algorithm: key.algorithm, public_jwk: key.publicJwk, private_jwk: key.privateKey.export({ format: 'jwk' }) }, null, 2)}\n`);
    return;
  }
  if (cmd === 'call' && rest.length >= 5) {
    const [base, deviceId, keyFile, method, path, body] = rest as [string, string, string, string, string, string | undefined];
    const stored = JSON.parse(readFileSync(keyFile, 'utf8')) as { algorithm: Algorithm; private_jwk: JsonWebKey };
    const key = { algorithm: stored.algorithm, privateKey: createPrivateKey({ key: stored.private_jwk, format: 'jwk' }) };
    const res = await signedFetch(base, { id: deviceId, key }, method, path, body === undefined ? undefined : JSON.parse(body));
    process.stdout.write(`${res.status} ${JSON.stringify(res.body, null, 2)}\n`);
    if (res.status >= 400) process.exitCode = 1;
    return;
  }
  process.stderr.write('usage: agent-client.ts keygen [ed25519|ecdsa-p256-sha256]\n       agent-client.ts call <base url> <device id> <key.json> <METHOD> <path> [json body]\n');
  process.exitCode = 2;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  });
}
