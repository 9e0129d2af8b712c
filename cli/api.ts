import { hostname } from 'node:os';
import { type ApiClient, createApiClient, dataOf, etagOf, ifMatch, idempotency, unwrap } from '../client/index.js';
import { readLogin, type StoredLogin, writeLogin } from './config.js';

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

export function apiUrlOf(env: NodeJS.ProcessEnv, stored?: StoredLogin): string {
  const url = env.SECRETS_API_URL || stored?.api_url;
  if (!url) throw new CliError('no API address: set SECRETS_API_URL (e.g. https://api.example.com) or run `secrets login --api-url <url>`');
  return url.replace(/\/+$/, '');
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

const notSignedIn = () => new CliError('not logged in: run `secrets login` (or set SECRETS_API_KEY to an API key)');

/** The credential to call with (renewing the stored login's access token when needed). */
export async function connect(env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const stored = readLogin();
  if (env.SECRETS_API_KEY) {
    const apiUrl = apiUrlOf(env, stored);
    return { apiUrl, via: 'api_key', api: createApiClient({ baseUrl: apiUrl, token: env.SECRETS_API_KEY, headers: { 'User-Agent': USER_AGENT } }) };
  }
  if (!stored) throw notSignedIn();
  const apiUrl = apiUrlOf(env, stored);
  let login = stored;
  if (login.access_expires_at - Date.now() < 60_000) {
    const res = await anonymous(apiUrl).POST('/api/v1/auth/refresh', { body: { refresh_token: login.refresh_token } });
    if (res.response.status === 401) throw new CliError('your CLI session has ended (signed out or expired): run `secrets login`');
    login = storedFrom(apiUrl, dataOf(res) as LoginTokens);
    writeLogin(login);
  }
  return { apiUrl, via: 'login', api: createApiClient({ baseUrl: apiUrl, token: login.access_token, headers: { 'User-Agent': USER_AGENT } }) };
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
  }
  const res = await c.api.PUT('/api/v1/secrets/{name}', {
    params: { path: { name } },
    body: { data } as never,
    headers: version ? ifMatch(version) : {},
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
