import { hostname } from 'node:os';
import { type ApiClient, createApiClient, dataOf, etagOf, ifMatch, idempotency, unwrap } from '../client/index.js';
import { clientEphemeral, clientProof, SRP_VERSION } from './srp.js';
import { type CliConfig, configDir, DEFAULT_PROFILE, readConfig, readStored, type StoredApiKey, type StoredLogin, writeLogin } from './config.js';

/**
 * Every HTTP call of the CLI, on the typed client (client/: openapi-fetch over the types
 * generated from the OpenAPI document; its ApiError / OAuthError are the failures).
 *
 * Credentials, first found wins: `SECRETS_API_KEY` (an API key; the API at `SECRETS_API_URL`
 * or the stored login's), else the stored CLI login (cli/config.ts), whose access token is
 * renewed with its rotating refresh token when it is about to expire.
 */
export const CLIENT_ID = 'secrets-cli';
const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A failure the user can fix: one line saying what to do. */
export class CliError extends Error {
  override readonly name = 'CliError';
}

const USER_AGENT = 'secrets-cli';
const anonymous = (apiUrl: string): ApiClient => createApiClient({ baseUrl: apiUrl, headers: { 'User-Agent': USER_AGENT } });

/**
 * The API address the user gave, checked: the mistakes people make answer with the fix
 * (no scheme, the `/api/v1` prefix included, not a URL at all) instead of a fetch error
 * or a 404 from the server.
 */
export function checkApiUrl(raw: string, source = 'SECRETS_API_URL'): string {
  const url = raw.trim();
  if (!/^https?:\/\//i.test(url)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw new CliError(`${source} must be an http:// or https:// address, not "${url}"`);
    throw new CliError(`${source} "${url}" has no scheme: use https://${url} (or http://${url} for a local server)`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`${source} "${url}" is not a URL: give the API's address, e.g. https://api.example.com`);
  }
  const path = parsed.pathname.replace(/\/+$/, '');
  if (/\/api\/v1$/.test(path)) {
    const fixed = `${parsed.origin}${path.slice(0, -'/api/v1'.length)}`;
    throw new CliError(`${source} ends in /api/v1: give the API's address without it (${fixed}); the CLI adds the /api/v1 paths`);
  }
  return `${parsed.origin}${path}`;
}

/** Where the CLI is and which profile it uses (the config folder is explicit for the tests of config.ts). */
export interface Setup {
  readonly env: NodeJS.ProcessEnv;
  readonly profile: string;
  readonly dir: string;
}

export const setupOf = (profile: string, env: NodeJS.ProcessEnv = process.env): Setup => ({ env, profile, dir: configDir(env) });

export function apiUrlOf(env: NodeJS.ProcessEnv, stored?: { api_url: string }, config?: CliConfig, profile = DEFAULT_PROFILE): string {
  if (env.SECRETS_API_URL) return checkApiUrl(env.SECRETS_API_URL);
  const fromProfile = config?.profiles[profile]?.api_url;
  if (fromProfile) return checkApiUrl(fromProfile, `the API address of profile ${profile}`);
  if (stored?.api_url) return checkApiUrl(stored.api_url, `the API address of profile ${profile}`);
  throw new CliError(
    profile === DEFAULT_PROFILE
      ? 'no API address: set SECRETS_API_URL (e.g. https://api.example.com) or run `secrets login --api-url <url>`'
      : `no API address for profile ${profile}: run \`secrets profile set ${profile} --api-url <url>\``,
  );
}

export const apiUrlOfSetup = (s: Setup) => apiUrlOf(s.env, readStored(s.dir, s.profile), readConfig(s.dir), s.profile);

/**
 * An API key as the user pasted it, checked before it is sent: a key is `scm_<prefix>_<secret>`
 * (an access token, three base64url parts, is taken too); anything else is a copy mistake,
 * answered here rather than with the server's "malformed Authorization header".
 */
export function checkApiKey(raw: string, source = 'SECRETS_API_KEY'): string {
  const key = raw.trim();
  if (/^scm_[a-z2-7]{8}_[A-Za-z0-9_-]{43}$/.test(key) || /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(key)) return key;
  throw new CliError(
    `${source} is not an API key (keys look like scm_xxxxxxxx_… in one piece): copy the whole key again, or use \`secrets login\` to sign in instead`,
  );
}

// ------------------------------------------------------------------ CLI login (RFC 8628)

export interface DeviceAuthorization {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete: string;
  readonly expires_in: number;
  readonly interval: number;
}

export async function startLogin(apiUrl: string): Promise<DeviceAuthorization> {
  const query = { client_id: CLIENT_ID, name: `secrets CLI on ${hostname()}`.slice(0, 128) };
  return unwrap(await anonymous(apiUrl).GET('/api/v1/auth/cli/login', { params: { query } })) as DeviceAuthorization;
}

export interface LoginTokens {
  readonly access_token: string;
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly session_id: string;
  readonly scope: string;
}

/** One poll; throws the OAuthError (authorization_pending, slow_down, …) until approved. */
export async function pollLogin(apiUrl: string, deviceCode: string): Promise<LoginTokens> {
  const body = { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, client_id: CLIENT_ID };
  return unwrap(await anonymous(apiUrl).POST('/api/v1/auth/cli/token', { body })) as LoginTokens;
}

/** RFC 7009: ends the session of this token (no error for a token already dead). */
export async function revokeLogin(apiUrl: string, token: string): Promise<void> {
  unwrap(await anonymous(apiUrl).POST('/api/v1/auth/cli/revoke', { body: { token, token_type_hint: 'refresh_token', client_id: CLIENT_ID } }));
}

export const storedFrom = (apiUrl: string, t: LoginTokens, now = Date.now()): StoredLogin => ({
  api_url: apiUrl,
  access_token: t.access_token,
  access_expires_at: now + t.expires_in * 1000,
  refresh_token: t.refresh_token,
  session_id: t.session_id,
  scope: t.scope,
});

// ------------------------------------------------------------------ authenticated calls

export interface Connection {
  readonly apiUrl: string;
  readonly api: ApiClient;
  readonly via: 'api_key' | 'login';
}

const notSignedIn = (profile: string) =>
  new CliError(
    profile === DEFAULT_PROFILE
      ? 'not logged in: run `secrets login` (or set SECRETS_API_KEY to an API key)'
      : `not logged in with profile ${profile}: run \`secrets --profile ${profile} login\` (or set SECRETS_API_KEY to an API key)`,
  );

const keyClient = (apiUrl: string, key: string) => createApiClient({ baseUrl: apiUrl, token: key, headers: { 'User-Agent': USER_AGENT } });

/**
 * The credential to call with, first found wins: `SECRETS_API_KEY`, the profile's stored API
 * key, the profile's stored login (its access token renewed when about to expire).
 */
export async function connect(setup: Setup): Promise<Connection> {
  const { env, profile, dir } = setup;
  const stored = readStored(dir, profile);
  const config = readConfig(dir);
  if (env.SECRETS_API_URL) checkApiUrl(env.SECRETS_API_URL); // an address mistake first: it is what to fix first
  if (env.SECRETS_API_KEY) {
    const apiUrl = apiUrlOf(env, stored, config, profile);
    return { apiUrl, via: 'api_key', api: keyClient(apiUrl, checkApiKey(env.SECRETS_API_KEY)) };
  }
  if (!stored) throw notSignedIn(profile);
  const apiUrl = apiUrlOf(env, stored, config, profile);
  if ('api_key' in stored)
    return { apiUrl, via: 'api_key', api: keyClient(apiUrl, checkApiKey(stored.api_key, `the API key of profile ${profile}`)) };
  let login = stored;
  if (login.access_expires_at - Date.now() < 60_000) {
    const res = await anonymous(apiUrl).POST('/api/v1/auth/refresh', { body: { refresh_token: login.refresh_token } });
    if (res.response.status === 401) throw new CliError('your CLI session has ended (signed out or expired): run `secrets login`');
    login = storedFrom(apiUrl, dataOf(res) as LoginTokens);
    writeLogin(login, dir, profile);
  }
  return { apiUrl, via: 'login', api: createApiClient({ baseUrl: apiUrl, token: login.access_token, headers: { 'User-Agent': USER_AGENT } }) };
}

/** Checks an API key against the API (before it is stored) and gives what to store. */
export async function apiKeyLogin(apiUrl: string, key: string): Promise<StoredApiKey> {
  const who = await whoami({ apiUrl, via: 'api_key', api: keyClient(apiUrl, key) });
  if (!who.accepted) throw new CliError(`the API refused this key: ${who.explanation ?? 'check it'}; create a new one if it was revoked`);
  return { api_url: apiUrl, api_key: key };
}

/**
 * Password sign-in (SRP-6a, RFC 5054, as the sign-in page does it: the password never leaves this
 * process): step 1 sends A, step 2 the proof M1; the server's proof M2 is checked before the
 * session is kept.
 */
export async function passwordLogin(apiUrl: string, tenantId: string, email: string, password: string): Promise<LoginTokens> {
  const eph = clientEphemeral();
  const step1 = dataOf(
    await anonymous(apiUrl).POST('/api/v1/auth/zkp/verify', {
      body: { tenant_id: tenantId, email, client_public: eph.public, srp_version: SRP_VERSION } as never,
    }),
  ) as { challenge_id: string; salt: string; server_public: string };
  let session: { proof: string; expectedServerProof: string };
  try {
    session = clientProof({
      identity: email,
      password,
      salt: step1.salt,
      serverPublic: step1.server_public,
      secret: eph.secret,
    });
  } catch {
    throw new CliError('the server sent an invalid SRP value (B mod N = 0): check SECRETS_API_URL (it may not be your service)');
  }
  const step2 = dataOf(
    await anonymous(apiUrl).POST('/api/v1/auth/zkp/verify', { body: { challenge_id: step1.challenge_id, client_proof: session.proof } as never }),
  ) as LoginTokens & { server_proof: string };
  if (step2.server_proof.toLowerCase() !== session.expectedServerProof)
    throw new CliError('the server could not prove it knows your password verifier: check SECRETS_API_URL (it may not be your service)');
  return step2;
}

export async function whoami(c: Connection) {
  return dataOf(await c.api.GET('/api/v1/diagnostics/auth', {})) as {
    accepted: boolean;
    credential?: { kind: string; id: string; account_id: string; user: string | null; scopes: string[] };
    explanation?: string;
  };
}

// ------------------------------------------------------------------ secrets

export interface Secret {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly data?: Record<string, unknown>;
  readonly version: number;
  readonly updated_at?: string;
}

export async function listSecrets(c: Connection): Promise<Secret[]> {
  const all: Secret[] = [];
  let cursor: string | undefined;
  do {
    const page = dataOf(await c.api.GET('/api/v1/secrets', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } })) as {
      secrets: Secret[];
      next_cursor: string | null;
    };
    all.push(...page.secrets);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}

/** The secret and its ETag (the version to send back with a change). */
export async function getSecret(c: Connection, name: string): Promise<{ secret: Secret; etag: string | null }> {
  const res = await c.api.GET('/api/v1/secrets/{name}', { params: { path: { name } } });
  return { secret: (dataOf(res) as { secret: Secret }).secret, etag: etagOf(res) };
}

/**
 * Creates the secret, or changes its value when it exists: the change names the version it
 * read (If-Match: `etag` when given, else the ETag of a fresh read), so a concurrent change
 * is refused (409 stale_etag) instead of silently overwritten.
 */
export async function setSecret(
  c: Connection,
  name: string,
  data: Record<string, string>,
  etag?: string,
): Promise<{ secret: Secret; etag: string | null; created: boolean }> {
  let version = etag;
  if (version === undefined) {
    const read = await c.api.GET('/api/v1/secrets/{name}', { params: { path: { name } } });
    if (read.response.status === 404) {
      const res = await c.api.POST('/api/v1/secrets', { body: { name, data } as never, headers: idempotency() });
      return { secret: (dataOf(res) as { secret: Secret }).secret, etag: etagOf(res), created: true };
    }
    unwrap(read);
    version = etagOf(read) ?? undefined;
    // the server requires If-Match on every update (428 without it): never a blind write
    if (version === undefined) throw new CliError(`the server answered no ETag for ${name}: cannot update it safely`);
  }
  const res = await c.api.PUT('/api/v1/secrets/{name}', {
    params: { path: { name }, header: ifMatch(version) },
    body: { data } as never,
  });
  return { secret: (dataOf(res) as { secret: Secret }).secret, etag: etagOf(res), created: false };
}

export async function deleteSecret(c: Connection, name: string, etag?: string): Promise<void> {
  dataOf(await c.api.DELETE('/api/v1/secrets/{name}', { params: { path: { name } }, headers: etag ? ifMatch(etag) : {} }));
}

// ------------------------------------------------------------------ variables, signing

/** POST /api/v1/variables/resolve: the named variables' values (each from its credential field). */
export async function resolveVariables(c: Connection, names: string[]): Promise<Record<string, string>> {
  const out = dataOf(await c.api.POST('/api/v1/variables/resolve', { body: { names } })) as { values: Record<string, string> };
  return out.values;
}

export async function sign(c: Connection, input: { backend: string; key_id: string; message: Buffer; purpose: string }) {
  const body = { backend: input.backend, key_id: input.key_id, message: input.message.toString('base64'), purpose: input.purpose };
  return dataOf(await c.api.POST('/api/v1/crypto/sign', { body: body as never })) as {
    signature: string;
    algorithm: string;
    key_id: string;
    audit_id: string;
  };
}

// ------------------------------------------------------------------ versions (the history routes)

export interface VersionMeta {
  readonly version: number;
  readonly name: string;
  readonly created_at: string;
  readonly created_by: string | null;
  readonly current: boolean;
}

/** GET /api/v1/secret/{id}/history: the kept versions, newest first (metadata only). */
export async function secretVersions(
  c: Connection,
  id: string,
): Promise<{ versions: VersionMeta[]; keep_versions: number; current_version: number }> {
  return dataOf(await c.api.GET('/api/v1/{type}/{id}/history', { params: { path: { type: 'secret', id } } })) as never;
}

/** GET /api/v1/secret/{id}/history/{version}: one version's value. */
export async function secretVersion(
  c: Connection,
  id: string,
  version: number,
): Promise<{ version: number; data: Record<string, string>; created_at: string }> {
  const v = (
    dataOf(
      await c.api.GET('/api/v1/{type}/{id}/history/{version}', { params: { path: { type: 'secret', id, version: String(version) } } }),
    ) as never as {
      version: { version: number; data?: Record<string, string>; value_redacted: boolean; missing_scopes?: string[]; created_at: string };
    }
  ).version;
  if (v.value_redacted || !v.data)
    throw new CliError(`version ${version} is redacted for this credential: it needs ${(v.missing_scopes ?? ['secrets:read']).join(' ')}`);
  return { version: v.version, data: v.data, created_at: v.created_at };
}

/** PUT with the fields given (they replace the value), conditional on the version read. */
export async function putSecretData(
  c: Connection,
  name: string,
  data: Record<string, string>,
  etag: string,
): Promise<{ secret: Secret; etag: string | null }> {
  const res = await c.api.PUT('/api/v1/secrets/{name}', { params: { path: { name }, header: ifMatch(etag) }, body: { data } as never });
  return { secret: (dataOf(res) as { secret: Secret }).secret, etag: etagOf(res) };
}

// ------------------------------------------------------------------ containers, typed collections

export interface Container {
  readonly id: string;
  readonly name: string;
}

async function listAll<T>(c: Connection, path: string, key: string): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const res = await c.api.GET(path as '/api/v1/containers', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } as never });
    const page = dataOf(res) as unknown as Record<string, unknown> & { next_cursor?: string | null };
    all.push(...((page[key] as T[] | undefined) ?? []));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return all;
}

export const listContainers = (c: Connection) => listAll<Container>(c, '/api/v1/containers', 'containers');

/**
 * The typed collections a person reads by name (docs/api.md, "Typed credentials"): the
 * credential collections, passwords and crypto wallets. test/unit/cli.test.ts checks the
 * list against the catalogue (lib/catalog.ts), which the CLI does not bundle.
 */
export const COLLECTIONS = [
  'computer-credentials',
  'code-signing-keys',
  'crypto-wallets',
  'disk-credentials',
  'integrations',
  'jks-keystores',
  'ldap-bind-credentials',
  'ntlm',
  'passwords',
  'radius-credentials',
  'root-credentials',
  'service-config',
  'social-credentials',
  'software-licenses',
  'totp-tokens',
  'vpn-credentials',
  'wifi-credentials',
  'windows-credentials',
  'yubikeys',
] as const;

export type Item = Record<string, unknown> & { id: string; name?: string };

export function checkCollection(name: string): string {
  if ((COLLECTIONS as readonly string[]).includes(name)) return name;
  throw new CliError(`no collection "${name}": use one of ${COLLECTIONS.join(', ')} (\`secrets credentials types\`)`);
}

export const listCollection = (c: Connection, collection: string) =>
  listAll<Item>(c, `/api/v1/${checkCollection(collection)}`, collection.replace(/-/g, '_'));

/** One item, by id or by name (a name is looked up in the list first). */
export async function getItem(c: Connection, collection: string, idOrName: string): Promise<Item> {
  checkCollection(collection);
  let id = idOrName;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrName)) {
    const found = (await listCollection(c, collection)).filter((i) => i.name === idOrName || i.title === idOrName);
    if (found.length === 0) throw new CliError(`no item named "${idOrName}" in ${collection}: \`secrets credentials list ${collection}\` shows them`);
    if (found.length > 1)
      throw new CliError(`${found.length} items of ${collection} are named "${idOrName}": give the id (${found.map((f) => f.id).join(', ')})`);
    id = found[0]!.id;
  }
  const res = await c.api.GET(`/api/v1/${collection}/{id}` as '/api/v1/passwords/{id}', { params: { path: { id } } });
  const data = dataOf(res) as unknown as Record<string, Item>;
  const item = Object.values(data)[0];
  if (!item) throw new CliError(`the API answered no item for ${collection}/${id}`);
  return item;
}
