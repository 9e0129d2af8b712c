import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { PDFDocument } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CATALOG, type CatalogEntry } from '../../lib/catalog.js';
import type { Route } from '../../lib/routes.js';
import { generateDeviceKey, signedFetch, type DeviceKey } from '../../scripts/agent-client.js';
import { api, baseUrl, type ApiResponse, newAccount, rootKey, type TestAccount, unique } from '../helpers/api.js';
import { useRuntimeConfig } from '../helpers/in-process.js';
import {
  CALLERS,
  type Caller,
  describeOutcome,
  ENDS_CREDENTIAL,
  entryOf,
  expectedOutcome,
  HANDLER_RULES,
  OTHER_USER_SCOPES,
  CREATOR_KEY_SCOPES,
  OWNER_SCOPES,
  OWNER_TOKEN_SCOPES,
  type Outcome,
  probedScopes,
  probesValidation,
  ROUTES,
  SELF_AUTH_READS,
  variantOf,
  variantsOf,
} from './authz-matrix.data.js';
import { FIXTURES } from './credential-fixtures.js';
import { librarySession } from './sign-in.helpers.js';
import { setQuota } from './webhooks.helpers.js';
import { scaled } from '../helpers/timeouts.js';

/**
 * Issue 32 item 3: every route of lib/routes.ts against every kind of caller, on real objects
 * of every family, the expected outcome derived as data (test/api/authz-matrix.data.ts). The
 * requests go out in beforeAll through a small pool (POOL in flight); each route's `it`
 * then checks its table and names every mismatch (route, caller, expected, actual).
 */

const POOL = 12;
const FULL = process.env.AUTHZ_MATRIX_FULL === '1';
/** AUTHZ_MATRIX_ROUTES=<text>[,<text>…]: only the routes whose key contains one of them (a quick look at a few; npm test runs them all). */
const ONLY = process.env.AUTHZ_MATRIX_ROUTES?.split(',').filter(Boolean);
const SELECTED = ONLY ? ROUTES.filter((r) => ONLY.some((o) => r.key.includes(o))) : ROUTES;
const FAKE_ID = '01900000-0000-7000-8000-00000000dead';

interface Objects {
  containerId: string;
  secretId: string;
  secretName: string;
  passwordId: string;
  /** The password the non-admin owner created in its own session (the owner callers' password routes name it). */
  ownPasswordId: string;
  shareId: string;
  tempGrantId: string;
  tempToken: string;
  sshKeyId: string;
  gpgKeyId: string;
  opensslKeyId: string;
  ageKeyId: string;
  certificateId: string;
  apiTokenId: string;
  /** One real object of every typed collection the generic CRUD serves (catalogue type -> id), created by A's admin. */
  typed: Record<string, string>;
  variableName: string;
  profileId: string;
  deviceId: string;
  skeyId: string;
  documentId: string;
}

let a: TestAccount;
let o: Objects;
const credentials = new Map<string, string>(); // caller id -> bearer credential
let device: { id: string; key: DeviceKey };
let pdfBase64: string;

interface Case {
  route: Route;
  caller: Caller;
  expected: Outcome;
  /** A weaker variant of the route (HANDLER_RULES `variants`); undefined: its strongest. */
  variant?: string;
}
interface Result extends Case {
  status: number;
  code: string | null;
  /** How long the answer took, and the id the runtime logged it under: a 5xx says which line of the runtime's log holds its cause. */
  ms: number;
  requestId: string | null;
}
const results = new Map<string, Result[]>();
const anonymousStatus = new Map<string, number>();
let logicalSize = 0;

function must(res: ApiResponse, status: number, what: string): ApiResponse {
  if (res.status !== status) throw new Error(`matrix setup: ${what}: ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

/**
 * A query parameter no route's query schema knows (they are strict): a caller refused before
 * validation (probesValidation) gets it, so a route that validated its query before checking the caller's scopes would
 * answer 400 where 401 or 403 is due (authentication, then authorization, then validation).
 */
const UNKNOWN_QUERY = 'authz_matrix_probe=1';
/** A body no route takes (an array where every body is an object): what a refused caller sends, for the same reason. */
const UNKNOWN_BODY = ['authz-matrix: not the body of this route'];

/** The concrete path of `route` for a case: real objects of A, a fake id where an allowed mutation would change them. */
function concrete(route: Route, caller: Caller, expected: Outcome, variant?: string): string {
  const mutates = route.method !== 'GET';
  const real = !(mutates && expected.kind === 'allowed');
  const id = (v: string) => (real ? v : FAKE_ID);
  const p = route.path;
  const e = entryOf(route);
  const owner = caller.kind === 'owner-session' || caller.kind === 'owner-token';
  const byEntry: Record<string, string> = {
    ...o.typed,
    secret: o.secretName,
    container: o.containerId,
    password: owner ? o.ownPasswordId : o.passwordId,
    ssh_key: o.sshKeyId,
    gpg_key: o.gpgKeyId,
    openssl_key: o.opensslKeyId,
    age_key: o.ageKeyId,
    certificate: o.certificateId,
    api_token: o.apiTokenId,
  };
  const fill: Record<string, string> = {
    type: 'secret',
    id: id(
      p.startsWith('/api/v1/{type}')
        ? o.secretId
        : p.startsWith('/api/v1/agents/devices')
          ? o.deviceId
          : p.startsWith('/api/v1/agents/profiles')
            ? o.profileId
            : p.startsWith('/api/v1/skey-otps')
              ? o.skeyId
              : p.startsWith('/api/v1/documents')
                ? o.documentId
                : p.startsWith('/api/v1/admin/tenants')
                  ? a.tenantId
                  : ((e && byEntry[e.type]) ?? FAKE_ID),
    ),
    name: id(p.startsWith('/api/v1/variables') ? o.variableName : o.secretName),
    container: o.containerId,
    key: o.secretName,
    version: '1',
    share_id: id(o.shareId),
    grant_id: id(o.tempGrantId),
    token: o.tempToken,
    alias: 'matrix-secret',
    grant: FAKE_ID,
    page: '1',
    payment_provider: 'stripe',
    ...(variant !== undefined ? variantOf(route, variant)!.params : {}),
  };
  // the temp token's URL only for the temp token itself: another caller presents an unknown token
  let path = p.replace(/\{(\w+)\}/g, (_m, n: string) => fill[n] ?? FAKE_ID);
  if (route.auth === 'temp-token' && expected.kind !== 'allowed') path = path.replace(o.tempToken, 'not-a-real-token-0000000000000000');
  const query = variant !== undefined ? (variantOf(route, variant)!.query ?? '') : (HANDLER_RULES[route.key]?.query ?? '');
  if (!probesValidation(route, caller, expected)) return path + query;
  return `${path}${query}${query ? '&' : '?'}${UNKNOWN_QUERY}`;
}

/**
 * The body of a case: for a caller refused before validation (probesValidation), one no route
 * takes (UNKNOWN_BODY); else a body that passes validation on the routes
 * whose handler decides (so an allowed caller reaches the decision), else `{}`.
 */
function bodyFor(route: Route, caller: Caller, expected: Outcome, variant?: string): unknown {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  if (probesValidation(route, caller, expected)) return UNKNOWN_BODY;
  const own = variantOf(route, variant)?.body;
  if (own !== undefined) return own;
  switch (route.key) {
    case 'POST /api/v1/variables/resolve':
      return { names: [o.variableName] };
    case 'POST /api/v1/skey-otps/{id}/verify':
      return { otp: '0000000000000000' };
    case 'POST /api/v1/certificates/{id}/download':
      return variant === 'pem' ? { format: 'pem' } : { format: 'pkcs12', password: 'authz-matrix-p12' };
    case 'POST /api/v1/auth/webauthn/registration/finish':
      return {
        challenge_id: FAKE_ID,
        response: { id: 'AAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAA', type: 'public-key', response: { clientDataJSON: 'e30' } },
      };
    case 'POST /api/v1/documents':
      return { name: 'matrix', content_base64: pdfBase64 };
    case 'POST /api/v1/documents/{id}/grants':
      return { grantee_email: 'grantee@example.test', expires_at: new Date(Date.now() + 3600_000).toISOString() };
    default:
      return {};
  }
}

async function send(
  route: Route,
  caller: Caller,
  expected: Outcome,
  variant?: string,
): Promise<{ status: number; code: string | null; ms: number; requestId: string | null }> {
  const path = concrete(route, caller, expected, variant);
  const body = bodyFor(route, caller, expected, variant);
  const started = Date.now();
  const res =
    caller.kind === 'device'
      ? await signedFetch(baseUrl(), device, route.method, path, body)
      : await api(route.method, path, { key: credentials.get(caller.id) ?? null, body });
  const parsed = res.body as any;
  const code = typeof parsed?.code === 'string' ? parsed.code : typeof parsed?.error === 'string' ? parsed.error : null;
  return { status: res.status, code, ms: Date.now() - started, requestId: res.headers.get('x-request-id') };
}

/** Runs `tasks` with at most `n` in flight. */
async function pool<T>(tasks: readonly (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

async function makePdf(): Promise<string> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]);
  return Buffer.from(await doc.save()).toString('base64');
}

async function setup(): Promise<void> {
  useRuntimeConfig();
  const [acctA, b, c, s] = await Promise.all([newAccount('authz-a'), newAccount('authz-b'), newAccount('authz-c'), newAccount('authz-s')]);
  a = acctA;
  // the matrix's own accounts: no 429 from the account buckets while the pool runs
  await Promise.all([a, b, c].map((x) => setQuota(x.tenantId, { requests_per_minute: 1_000_000 })));

  // the other user of A: a user item of its own with a custom scope list, in a session
  const { db, tableName } = await import('../../lib/store/client.js');
  const { keys } = await import('../../lib/store/keys.js');
  const otherEmail = `${unique('other')}@example.test`;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.user(a.tenantId, otherEmail),
        email: otherEmail,
        role: 'viewer',
        scopes: [...OTHER_USER_SCOPES],
        source: 'admin',
        created_at: new Date().toISOString(),
        last_sign_in_at: null,
      },
    }),
  );

  // the non-admin creator of A: its own password, written in its own session, and a token it issued
  const ownerEmail = `${unique('owner')}@example.test`;
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.user(a.tenantId, ownerEmail),
        email: ownerEmail,
        role: 'viewer',
        scopes: [...OWNER_SCOPES],
        source: 'admin',
        created_at: new Date().toISOString(),
        last_sign_in_at: null,
      },
    }),
  );
  const ownerSession = (await librarySession(a.tenantId, ownerEmail)).access_token;
  const [ownPassword, ownerToken] = await Promise.all([
    api('POST', '/api/v1/passwords', { key: ownerSession, body: { name: unique('own-pw'), username: 'o', password: 'owner-password-1' } }).then((r) =>
      must(r, 201, 'POST /api/v1/passwords as the non-admin owner'),
    ),
    api('POST', '/api/v1/api-tokens', { key: ownerSession, body: { name: unique('owner-t'), scopes: [...OWNER_TOKEN_SCOPES] } }).then((r) =>
      must(r, 201, 'POST /api/v1/api-tokens as the non-admin owner'),
    ),
  ]);
  credentials.set('owner-session', ownerSession);
  credentials.set('owner-token', ownerToken.body.data.api_token.token as string);

  const scopedKeys = CALLERS.filter((x) => x.kind === 'scoped-key');
  const [keyValues, creatorKey, creatorSession, otherSession] = await Promise.all([
    pool(
      scopedKeys.map((x) => () => (x.scopes[0] === 'admin:*' ? Promise.resolve(a.adminKey) : a.key([...x.scopes]))),
      POOL,
    ),
    a.key([...CREATOR_KEY_SCOPES]),
    librarySession(a.tenantId, a.adminEmail),
    librarySession(a.tenantId, otherEmail),
  ]);
  scopedKeys.forEach((x, i) => credentials.set(x.id, keyValues[i]!));
  credentials.set('creator-key', creatorKey);
  credentials.set('creator-session', creatorSession.access_token);
  credentials.set('other-user-session', otherSession.access_token);
  credentials.set('share-recipient', b.adminKey);
  credentials.set('other-account', c.adminKey);
  credentials.set('operator', rootKey());
  credentials.set('suspended', s.adminKey);

  // real objects of every family, created by A's admin (the creator of all of them)
  const k = a.adminKey;
  const post = (path: string, body: unknown, status = 201) => api('POST', path, { key: k, body }).then((r) => must(r, status, `POST ${path}`));
  const containerId = (await post('/api/v1/containers', { name: unique('c') })).body.data.container.id as string;
  const secretName = unique('matrix-secret');
  const typedTypes = Object.keys(FIXTURES).filter((t) => t !== 'password');
  const typedObjects = pool(
    typedTypes.map((type) => () => {
      const e = (CATALOG as Record<string, CatalogEntry>)[type]!;
      return post(e.path, { name: unique(type), ...FIXTURES[type]!.create() }).then((r) => r.body.data[type].id as string);
    }),
    4,
  );
  const [secret, password, ssh, gpg, openssl, age, cert, token, skey, pdf] = await Promise.all([
    post('/api/v1/secrets', { name: secretName, data: { value: 'matrix' }, container_id: containerId }),
    post('/api/v1/passwords', { name: unique('pw'), username: 'u', password: 'matrix-password-1', url: 'https://example.test' }),
    post('/api/v1/ssh-keys/generate', { name: unique('ssh'), algorithm: 'ed25519' }),
    post('/api/v1/gpg-keys/generate', { name: unique('gpg'), algorithm: 'curve25519', user_ids: [{ name: 'Matrix', email: 'matrix@example.test' }] }),
    post('/api/v1/openssl-keys/generate', { name: unique('ossl'), algorithm: 'ec' }),
    post('/api/v1/keys/age/generate', { name: unique('age') }),
    post('/api/v1/certificates/enroll', { name: unique('cert'), subject: { common_name: 'matrix.example.test' } }),
    post('/api/v1/api-tokens', { name: unique('t'), scopes: ['secrets:read'] }),
    post('/api/v1/skey-otps', { name: unique('skey'), algorithm: 'sha1', count: 3, passphrase: 'matrix passphrase long enough' }),
    makePdf(),
  ]);
  pdfBase64 = pdf;
  const secretId = secret.body.data.secret.id as string;
  const passwordId = password.body.data.password.id as string;
  // a second version: version 1 is history now (GET /s/{container}/{key}/1 needs history:read as well)
  must(
    await api('PUT', `/api/v1/secrets/${secretName}`, { key: k, body: { data: { value: 'matrix-2' } }, headers: { 'if-match': '*' } }),
    200,
    'PUT secret (version 2)',
  );
  const [share, , temp, doc, variable] = await Promise.all([
    post(`/api/v1/secret/${secretId}/shares`, { shared_with_email: b.adminEmail, permission: 'read' }),
    post(`/api/v1/password/${passwordId}/shares`, { shared_with_email: b.adminEmail, permission: 'read' }),
    post(`/api/v1/secret/${secretId}/temp-access`, { duration_seconds: 600 }),
    post('/api/v1/documents', { name: 'matrix', content_base64: pdf }),
    api('PUT', `/api/v1/variables/MATRIX_VAR`, { key: k, body: { credential_id: secretId, field: 'value' } }).then((r) =>
      must(r, 201, 'PUT variable'),
    ),
  ]);
  void variable;
  const profileId = randomUUID();
  must(
    await api('PUT', `/api/v1/agents/profiles/${profileId}`, {
      key: k,
      body: { name: 'matrix', enabled: true, grants: [{ alias: 'matrix-secret', service: 'secret.read', resource: secretId }] },
    }),
    201,
    'PUT profile',
  );
  const deviceKey = generateDeviceKey('ed25519');
  const dev = await post('/api/v1/agents/devices', { name: unique('dev'), public_key: deviceKey.publicJwk, profile_id: profileId });
  device = { id: dev.body.data.device.id, key: deviceKey };
  const tempUrl = new URL(temp.body.data.url as string);
  o = {
    containerId,
    secretId,
    secretName,
    passwordId,
    shareId: share.body.data.share.id,
    tempGrantId: temp.body.data.grant?.id ?? temp.body.data.id ?? FAKE_ID,
    tempToken: tempUrl.pathname.split('/').pop()!,
    sshKeyId: ssh.body.data.ssh_key.id,
    gpgKeyId: gpg.body.data.gpg_key.id,
    opensslKeyId: openssl.body.data.openssl_key.id,
    ageKeyId: age.body.data.key.id,
    certificateId: cert.body.data.certificate.id,
    apiTokenId: token.body.data.api_token.id,
    typed: Object.fromEntries((await typedObjects).map((id, i) => [typedTypes[i]!, id])),
    ownPasswordId: ownPassword.body.data.password.id,
    variableName: 'MATRIX_VAR',
    profileId,
    deviceId: device.id,
    skeyId: skey.body.data.skey_otp.id,
    documentId: doc.body.data.document.id,
  };
  credentials.set('temp-token', o.tempToken);

  // the suspended account: suspended once its key exists
  must(await api('PATCH', `/api/v1/admin/tenants/${s.tenantId}/suspend`, { key: rootKey() }), 200, 'suspend');
}

function cases(): Case[] {
  const out: Case[] = [];
  ROUTES.forEach((route, index) => {
    if (!SELECTED.includes(route)) return;
    const probed = probedScopes(route, index, FULL);
    for (const variant of [undefined, ...variantsOf(route).map((v) => v.name)]) {
      for (const caller of CALLERS) {
        const expected = expectedOutcome(route, caller, variant); // throws for a route without a derivation
        logicalSize++;
        if (caller.kind === 'scoped-key' && !probed.has(caller.scopes[0]!)) continue;
        out.push({ route, caller, expected, ...(variant !== undefined ? { variant } : {}) });
      }
    }
  });
  return out;
}

beforeAll(async () => {
  const t0 = Date.now();
  await setup();
  const t1 = Date.now();
  const all = cases();
  // a self-authenticating route's reference: the anonymous caller's answer
  const anonymous = all.filter((c) => c.caller.kind === 'anonymous' && c.variant === undefined);
  const rest = all.filter((c) => !anonymous.includes(c) && !ENDS_CREDENTIAL.has(c.route.key));
  const last = all.filter((c) => !anonymous.includes(c) && ENDS_CREDENTIAL.has(c.route.key));
  console.log(
    `authorization matrix: ${SELECTED.length} routes × ${CALLERS.length} callers = ${logicalSize} cases; ${all.length} HTTP requests sent (${FULL ? 'every scope' : 'one key per scope class'}, ${POOL} in flight)`,
  );
  const run = (list: Case[]) =>
    pool(
      list.map((c) => async (): Promise<Result> => ({ ...c, ...(await send(c.route, c.caller, c.expected, c.variant)) })),
      POOL,
    );
  const first = await run(anonymous);
  for (const r of first) anonymousStatus.set(r.route.key, r.status);
  for (const r of [...first, ...(await run(rest)), ...(await run(last))]) {
    const list = results.get(r.route.key) ?? [];
    list.push(r);
    results.set(r.route.key, list);
  }
  console.log(`authorization matrix: setup ${((t1 - t0) / 1000).toFixed(1)} s, requests ${((Date.now() - t1) / 1000).toFixed(1)} s`);
}, scaled(600_000));

function mismatch(r: Result): string | null {
  const e = r.expected;
  const actual = `${r.status} ${r.code ?? ''}`.trim();
  const ok = (() => {
    switch (e.kind) {
      case 'allowed':
        return r.status !== 401 && r.status !== 403 && (r.status < 500 || (r.status === 501 && !r.route.handler));
      case 'refused':
        return r.status === e.status && r.code === e.code;
      case 'not-found':
        return r.status === 404 || (r.status === 400 && r.route.method !== 'GET' && r.route.method !== 'DELETE');
      case 'same-as-anonymous':
        return SELF_AUTH_READS.has(r.route.key) ? r.status < 500 || r.status === 501 : r.status === anonymousStatus.get(r.route.key);
    }
  })();
  if (ok) return null;
  const want = e.kind === 'same-as-anonymous' ? `${anonymousStatus.get(r.route.key)} (as without credentials)` : describeOutcome(e);
  // a 5xx is the runtime's own failure (on a busy machine, a function that ran out of time): say where its cause is
  const where =
    r.status >= 500
      ? ` after ${r.ms} ms (request ${r.requestId ?? 'without an id'}: its cause is in build/test-logs/local-${inject('runtime')}-runtime.log)`
      : '';
  return `${r.route.key}${r.variant !== undefined ? ` (${r.variant})` : ''} as ${r.caller.id}: expected ${want}, got ${actual}${where}`;
}

afterAll(() => {
  // AUTHZ_MATRIX_REPORT=<file>: every mismatch, one a line (for reading a failing run whole)
  const file = process.env.AUTHZ_MATRIX_REPORT;
  if (file) writeFileSync(file, [...results.values()].flat().map(mismatch).filter(Boolean).join('\n'));
});

describe.each(SELECTED.map((route) => ({ key: route.key, route })))('$key', ({ route }) => {
  it('answers every kind of caller as derived', () => {
    const list = results.get(route.key) ?? [];
    expect(list.length, `${route.key}: no case was sent`).toBeGreaterThan(0);
    expect(list.map(mismatch).filter(Boolean)).toEqual([]);
  });
});
