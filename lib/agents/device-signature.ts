import { createHash, timingSafeEqual, verify as verifySignatureBytes } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseDictionary, serializeInnerList, type BareItem, type InnerList } from 'structured-headers';
import { publicKeyObject, type DeviceAlgorithm, type PublicJwk } from '../crypto/device-public-key.js';
import { type GrantPrefetch, prefetchGrantedHead } from './grants.js';
import { claimNonce, getDeviceAuth, getProfile, type DeviceAuthRecord, type ProfileRecord } from './store.js';
import { forbidden, HttpError } from '../core/errors.js';
import { UUID_RE } from '../ids.js';
import { readAccount, type Tenant } from '../store/tenants.js';
import { identifyTenant } from '../tenancy/scope.js';
import type { Principal } from '../auth/principal.js';

/**
 * Signed device requests: HTTP Message Signatures (RFC 9421) with the body bound by
 * `Content-Digest` (RFC 9530). The scheme, exactly (README "Agents"):
 *
 *   Content-Digest:  sha-256=:<base64 of SHA-256(body bytes)>:     (empty body: digest of "")
 *   Signature-Input: sig1=("@method" "@path" "@query" "content-digest");created=<unix s>;nonce="<nonce>";keyid="<device id>";alg="ed25519"
 *   Signature:       sig1=:<base64 signature over the signature base>:
 *
 * - covered components: at least @method, @path, @query and content-digest (others allowed:
 *   @authority and plain header fields, without component parameters);
 * - `created` within SIGNATURE_MAX_AGE_SECONDS in the past and SIGNATURE_CLOCK_SKEW_SECONDS in
 *   the future; `expires`, if present, in the future;
 * - `nonce`: 16–128 characters of [A-Za-z0-9_-], never reused by the same device inside
 *   the window (a conditional put of a TTL item);
 * - `keyid`: the device id; `alg`, if present, must match the device key
 *   (`ed25519`, or `ecdsa-p256-sha256` with the raw 64-byte r||s signature);
 * - @query is the query exactly as the client sent it ("?" plus the query string, "?"
 *   without one; RFC 9421 §2.2.7), in the client's order and percent-encoding. API Gateway
 *   hands a Lambda the decoded parameters only (grouped by name, in the order they first
 *   appear), so the service rebuilds the query as common clients write it: in that order
 *   or sorted by name, percent-encoded per RFC 3986 (`encodeQueryPart`), by
 *   encodeURIComponent, as a WHATWG URL leaves it, or form-encoded (URLSearchParams, space
 *   as "+"), an empty value as `name=` or bare `name`; the signature must verify over one of
 *   these. A query that repeats a name with another name in between (`a=1&b=2&a=3`)
 *   cannot be rebuilt: sign such a query with the repeats together;
 * - several signatures: the first member of Signature-Input is the one verified.
 */
export const SIGNATURE_MAX_AGE_SECONDS = 60;
export const SIGNATURE_CLOCK_SKEW_SECONDS = 10;
export const REQUIRED_COMPONENTS = ['@method', '@path', '@query', 'content-digest'] as const;
const NONCE_RE = /^[A-Za-z0-9_-]{16,128}$/;
const SUPPORTED_DERIVED = new Set(['@method', '@path', '@query', '@authority']);

/** What a signature covers, taken from the proxy event. */
export interface SignedRequest {
  readonly method: string;
  /** The path as the client may have signed it: without and with an API Gateway stage or base path. */
  readonly paths: readonly string[];
  /** The `@query` values the client may have signed (queryCandidates), the received order in RFC 3986 form first. */
  readonly queries: readonly string[];
  /** Header values by lower-case name (several values of one field in order). */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
}

/** RFC 3986 percent-encoding of everything but unreserved characters. */
export const encodeQueryPart = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** What a WHATWG URL (fetch, `new URL`) leaves unencoded in a query, beyond encodeURIComponent's set: `'` it encodes. */
const URL_KEEPS = /%(2B|2F|3F|3A|40|24|2C|3B|5B|5D|7B|7D|7C|5C|5E|60)/g;
const whatwgQueryPart = (s: string) =>
  encodeURIComponent(s)
    .replace(URL_KEEPS, (m) => decodeURIComponent(m))
    .replace(/'/g, '%27');
/** application/x-www-form-urlencoded serialization (URLSearchParams): space as "+", only * - . _ and alphanumerics left. */
const formQueryPart = (s: string) =>
  encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
const ENCODERS: readonly ((s: string) => string)[] = [encodeQueryPart, encodeURIComponent, whatwgQueryPart, formQueryPart];

type QueryParams = Readonly<Record<string, readonly string[] | undefined>>;

function serializeQuery(params: QueryParams, names: readonly string[], encode: (s: string) => string, bareEmpty: boolean): string {
  const pairs: string[] = [];
  for (const name of names)
    for (const value of params[name] ?? []) pairs.push(value === '' && bareEmpty ? encode(name) : `${encode(name)}=${encode(value)}`);
  return `?${pairs.join('&')}`;
}

/** The canonical query: names sorted by code point, each name's values in order, RFC 3986 encoding (one of the candidates). */
export function canonicalQuery(params: QueryParams | null | undefined): string {
  return serializeQuery(params ?? {}, Object.keys(params ?? {}).sort(), encodeQueryPart, false);
}

/**
 * The `@query` values a client may have signed for these decoded parameters (see the module
 * comment): received or sorted order × the encoders × empty values with or without "=",
 * without duplicates; the first is the received order in RFC 3986 form.
 */
export function queryCandidates(params: QueryParams | null | undefined): string[] {
  const p = params ?? {};
  const received = Object.keys(p);
  const orders = [received, [...received].sort()];
  const hasEmpty = received.some((n) => p[n]?.includes(''));
  const out = new Set<string>();
  for (const bareEmpty of hasEmpty ? [false, true] : [false])
    for (const names of orders) for (const encode of ENCODERS) out.add(serializeQuery(p, names, encode, bareEmpty));
  return [...out];
}

export function signedRequestOf(event: APIGatewayProxyEvent): SignedRequest {
  const headers = new Map<string, string[]>();
  const multi = event.multiValueHeaders ?? {};
  const source: [string, readonly string[]][] =
    Object.keys(multi).length > 0
      ? Object.entries(multi).map(([k, v]) => [k, v ?? []])
      : Object.entries(event.headers ?? {}).map(([k, v]) => [k, v === undefined ? [] : [v]]);
  for (const [k, values] of source) {
    const name = k.toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), ...values]);
  }
  const query =
    event.multiValueQueryStringParameters ??
    (event.queryStringParameters
      ? Object.fromEntries(Object.entries(event.queryStringParameters).map(([k, v]) => [k, v === undefined ? [] : [v]]))
      : null);
  const paths = [...new Set([event.path, event.requestContext?.path].filter((p): p is string => typeof p === 'string' && p.length > 0))];
  return {
    method: event.httpMethod,
    paths,
    queries: queryCandidates(query),
    headers,
    body: event.body == null ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8'),
  };
}

/** A 401 for device requests: tells the client what to sign. */
export const signatureError = (message: string, code = 'invalid_signature') =>
  new HttpError(401, code, message, {
    headers: { 'Accept-Signature': 'sig1=("@method" "@path" "@query" "content-digest");created;nonce;keyid' },
  });

interface ParsedSignature {
  readonly label: string;
  readonly components: readonly string[];
  readonly created: number;
  readonly expires: number | undefined;
  readonly nonce: string | undefined;
  readonly keyid: string | undefined;
  readonly alg: string | undefined;
  readonly signature: Buffer;
  /** The serialized inner list: the value of `@signature-params`. */
  readonly paramsValue: string;
}

const headerValue = (req: SignedRequest, name: string): string | undefined => {
  const values = req.headers.get(name);
  return values && values.length > 0 ? values.map((v) => v.trim()).join(', ') : undefined;
};

/** Parses Signature-Input and Signature (RFC 8941 dictionaries); 401 on anything malformed. */
export function parseSignature(req: SignedRequest): ParsedSignature {
  const input = headerValue(req, 'signature-input');
  const sig = headerValue(req, 'signature');
  if (!input || !sig) throw signatureError('missing request signature: send Signature-Input and Signature (RFC 9421)', 'unauthorized');
  let inputs: ReturnType<typeof parseDictionary>;
  let sigs: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(input);
    sigs = parseDictionary(sig);
  } catch {
    throw signatureError('Signature-Input or Signature is not a valid structured field dictionary');
  }
  const first = [...inputs.entries()][0];
  if (!first) throw signatureError('Signature-Input has no signature');
  const [label, member] = first;
  if (!Array.isArray(member[0])) throw signatureError('the Signature-Input member must be an inner list of components');
  const inner = member as InnerList;
  const sigItem = sigs.get(label);
  if (!sigItem || Array.isArray(sigItem[0]) || !(sigItem[0] instanceof ArrayBuffer)) {
    throw signatureError(`Signature has no byte sequence labelled "${label}"`);
  }
  const components: string[] = [];
  for (const [value, params] of inner[0]) {
    if (typeof value !== 'string') throw signatureError('component identifiers must be strings');
    if (params.size > 0) throw signatureError(`component parameters are not supported ("${value}")`);
    if (value !== value.toLowerCase()) throw signatureError(`component names must be lower case ("${value}")`);
    if (components.includes(value)) throw signatureError(`component "${value}" is listed twice`);
    if (value.startsWith('@') && !SUPPORTED_DERIVED.has(value)) throw signatureError(`derived component "${value}" is not supported`);
    components.push(value);
  }
  const p = inner[1];
  const int = (name: string): number | undefined => {
    const v: BareItem | undefined = p.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw signatureError(`signature parameter "${name}" must be an integer`);
    return v;
  };
  const str = (name: string): string | undefined => {
    const v: BareItem | undefined = p.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw signatureError(`signature parameter "${name}" must be a string`);
    return v;
  };
  const created = int('created');
  if (created === undefined) throw signatureError('signature parameter "created" is required');
  return {
    label,
    components,
    created,
    expires: int('expires'),
    nonce: str('nonce'),
    keyid: str('keyid'),
    alg: str('alg'),
    signature: Buffer.from(sigItem[0]),
    paramsValue: serializeInnerList(inner),
  };
}

/** The signature base (RFC 9421 §2.5) for one candidate path and query (default: the first candidate). */
export function signatureBase(req: SignedRequest, parsed: ParsedSignature, path: string, query = req.queries[0] ?? '?'): string {
  const lines = parsed.components.map((c) => {
    let value: string | undefined;
    if (c === '@method') value = req.method.toUpperCase();
    else if (c === '@path') value = path;
    else if (c === '@query') value = query;
    else if (c === '@authority') value = headerValue(req, 'host')?.toLowerCase();
    else value = headerValue(req, c);
    if (value === undefined) throw signatureError(`covered component "${c}" is not in the request`);
    if (/[\r\n]/.test(value)) throw signatureError(`covered component "${c}" contains a line break`);
    return `"${c}": ${value}`;
  });
  lines.push(`"@signature-params": ${parsed.paramsValue}`);
  return lines.join('\n');
}

const DIGESTS: Record<string, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512' };

/** RFC 9530 Content-Digest against the actual body: every known algorithm listed must match. */
export function checkContentDigest(req: SignedRequest): void {
  const value = headerValue(req, 'content-digest');
  if (!value) throw signatureError('missing Content-Digest header (RFC 9530, sha-256 of the body)');
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(value);
  } catch {
    throw signatureError('Content-Digest is not a valid structured field dictionary');
  }
  let checked = 0;
  for (const [alg, member] of dict) {
    const hash = DIGESTS[alg];
    if (!hash) continue;
    if (Array.isArray(member[0]) || !(member[0] instanceof ArrayBuffer)) throw signatureError(`Content-Digest ${alg} must be a byte sequence`);
    const expected = createHash(hash).update(req.body).digest();
    const given = Buffer.from(member[0]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw signatureError('Content-Digest does not match the request body');
    checked++;
  }
  if (checked === 0) throw signatureError('Content-Digest must carry sha-256 (or sha-512)');
}

export function verifyBytes(jwk: PublicJwk, algorithm: DeviceAlgorithm, base: string, signature: Buffer): boolean {
  const key = publicKeyObject(jwk);
  const data = Buffer.from(base, 'utf8');
  if (algorithm === 'ed25519') return signature.length === 64 && verifySignatureBytes(null, data, key, signature);
  return signature.length === 64 && verifySignatureBytes('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
}

/** The checks that need no key: components, parameters, window, nonce format, digest. */
export function checkSignatureShape(req: SignedRequest, parsed: ParsedSignature, nowSeconds: number): { keyid: string; nonce: string } {
  const missing = REQUIRED_COMPONENTS.filter((c) => !parsed.components.includes(c));
  if (missing.length > 0) throw signatureError(`the signature must cover ${missing.map((c) => `"${c}"`).join(', ')}`);
  const { keyid, nonce } = parsed;
  if (keyid === undefined) throw signatureError('signature parameter "keyid" (the device id) is required');
  if (nonce === undefined) throw signatureError('signature parameter "nonce" is required');
  if (parsed.created < nowSeconds - SIGNATURE_MAX_AGE_SECONDS)
    throw signatureError(`signature is older than ${SIGNATURE_MAX_AGE_SECONDS} s: sign each request when sending it`);
  if (parsed.created > nowSeconds + SIGNATURE_CLOCK_SKEW_SECONDS)
    throw signatureError('signature "created" is in the future: check the device clock');
  if (parsed.expires !== undefined && parsed.expires <= nowSeconds) throw signatureError('signature has expired');
  if (!NONCE_RE.test(nonce)) throw signatureError('signature "nonce" must be 16-128 characters of A-Z a-z 0-9 _ -');
  checkContentDigest(req);
  return { keyid, nonce };
}

/**
 * Verifies the signature with a known key (no nonce claim): true when one of the request's
 * candidate paths and queries yields a base the signature verifies over (queries only
 * matter when @query is covered).
 */
export function signatureVerifies(req: SignedRequest, parsed: ParsedSignature, jwk: PublicJwk, algorithm: DeviceAlgorithm): boolean {
  if (parsed.alg !== undefined && parsed.alg !== algorithm) return false;
  const queries = parsed.components.includes('@query') ? req.queries : req.queries.slice(0, 1);
  return req.paths.some((path) => queries.some((query) => verifyBytes(jwk, algorithm, signatureBase(req, parsed, path, query), parsed.signature)));
}

/** What authentication learned about the device, kept for the request's handler. */
interface DeviceSession {
  readonly device: DeviceAuthRecord;
  readonly profile: ProfileRecord;
  /** The head of the requested alias's hinted resource, read beside the profile (lib/agents/grants.ts). */
  readonly prefetch?: GrantPrefetch | undefined;
}

const sessions = new WeakMap<Principal, DeviceSession>();

/** The device and profile read while authenticating this request's principal. */
export function deviceSession(principal: Principal): DeviceSession {
  const s = sessions.get(principal);
  if (!s) throw new Error('not a device principal');
  return s;
}

/**
 * Authenticates a signed device request. Key-free checks first; then the device's key (one
 * consistent read: a revoked device has no key); then the signature; only a verified request
 * claims its nonce (so nobody can burn a device's nonces); then the account and the
 * profile, both read consistently, so suspension, revocation and disabling apply to the
 * very next request. Beside them, the head the device's grant hints name for the
 * requested alias (`/agent/access/{alias}`), kept for the handler, which uses it only once
 * the profile confirms the grant.
 */
export async function authenticateSignedRequest(
  event: APIGatewayProxyEvent,
  nowMs = Date.now(),
  /** Told the account and device once the signature verifies (rate limiting per credential). */
  onIdentified?: (tenantId: string, credentialId: string, tenant: Promise<Tenant | undefined>) => void,
): Promise<Principal> {
  const now = Math.floor(nowMs / 1000);
  const req = signedRequestOf(event);
  const parsed = parseSignature(req);
  const { keyid, nonce } = checkSignatureShape(req, parsed, now);
  const device = UUID_RE.test(keyid) ? await getDeviceAuth(keyid) : undefined;
  if (!device) throw signatureError('unknown or revoked device key', 'unauthorized');
  if (!signatureVerifies(req, parsed, device.public_key, device.algorithm)) throw signatureError('signature does not verify');
  const tenantRead = readAccount(device.tenant_id);
  identifyTenant(device.tenant_id);
  const profileRead = getProfile(device.tenant_id, device.profile_id);
  const prefetch = prefetchGrantedHead(device, event.pathParameters?.alias);
  onIdentified?.(device.tenant_id, device.device_id, tenantRead);
  const keepUntil = Math.max(parsed.created, now) + SIGNATURE_MAX_AGE_SECONDS + SIGNATURE_CLOCK_SKEW_SECONDS;
  const claimed = await claimNonce(device.device_id, nonce, keepUntil, now);
  const [tenant, profile] = await Promise.all([tenantRead, profileRead]);
  if (!claimed) throw signatureError('nonce already used: every request needs a fresh nonce');
  if (!tenant) throw signatureError('unknown or revoked device key', 'unauthorized');
  if (tenant.status !== 'active') throw forbidden('account is suspended', 'tenant_suspended');
  if (!profile || !profile.enabled) throw forbidden("the device's agent profile is disabled", 'profile_disabled');
  const principal: Principal = {
    kind: 'device',
    tenantId: tenant.id,
    tenant,
    id: device.device_id,
    user: null,
    scopes: [],
    operator: false,
  };
  sessions.set(principal, { device, profile, prefetch });
  return principal;
}
