import https from 'node:https';
import acme from 'acme-client';
import { v5 as uuidv5 } from 'uuid';
import type { CallContext } from '../auth/principal.js';
import { config } from '../config.js';
import { BlockedDestination, checkUrl, guardedLookup } from '../events/ssrf.js';
import { outboundTimeoutMs } from '../events/timeouts.js';
import { badRequest, HttpError } from '../core/errors.js';
import { generateKeyPair, privatePkcs8Pem } from '../pki/keys.js';
import { createResource, openSecret, readResource } from '../resources/store.js';
import { deleteChallenge, putChallenge, readChallenge } from './store.js';

/**
 * Certificates from an external ACME directory (RFC 8555) with acme-client, validated by
 * http-01: the key authorization of each pending challenge is stored as a global lookup
 * item `ACME#<token>` (the validation request carries only the token) with a TTL, and
 * `GET /.well-known/acme-challenge/{token}` answers it. The order runs within one request:
 * the whole operation (account registration and order, or revocation) has one deadline,
 * ACME_TIMEOUT_MS from its start (within API Gateway's 29 s); past it every connection of the
 * operation is closed, no further request is sent, and the answer is a 502 `acme_failed`
 * saying the ACME server did not answer in time.
 *
 * Outbound safety: the directory must be https; every connection (directory, order,
 * finalize, certificate URLs the server returns) goes through the SSRF guard of
 * lib/events/ssrf.ts (public unicast addresses only; loopback only with the development
 * flag ACME_ALLOW_LOOPBACK), with no redirects and no environment proxies. A private ACME
 * CA may be trusted with `directory_ca_pem` (like cert-manager's caBundle).
 *
 * The ACME account is one per account and directory: a sealed `acme_account` resource
 * (key sealed, account URL public) whose id derives from (tenant, directory URL).
 */
export interface AcmeSettings {
  readonly directory_url: string;
  readonly email?: string;
  readonly directory_ca_pem?: string;
}

const ACCOUNT_TYPE = 'acme_account';
const ACCOUNT_NAMESPACE = '8c1d5e52-2f1a-4d0b-8a44-7b3f4e9c6d10';
const CHALLENGE_TTL_SECONDS = 3600;

const acmeError = (message: string, cause?: unknown) => new HttpError(502, 'acme_failed', message, { expose: true, cause });

function checkDirectoryUrl(raw: string): URL {
  let url: URL;
  try {
    url = checkUrl(raw, config().ACME_ALLOW_LOOPBACK);
  } catch (error) {
    if (error instanceof BlockedDestination) throw badRequest(`acme.directory_url refused: ${error.message}`);
    throw error;
  }
  if (url.protocol !== 'https:') throw badRequest('acme.directory_url must be an https URL');
  return url;
}

/**
 * The account's ACME account at a directory: its key (sealed) and account URL, registered
 * on first use (terms of service agreed, contact e-mail when given) and reused after.
 */
async function account(ctx: CallContext, settings: AcmeSettings, op: Operation): Promise<{ key: string; url: string }> {
  const tid = ctx.principal.tenantId;
  const directoryUrl = settings.directory_url;
  const id = uuidv5(`${tid}\n${directoryUrl}`, ACCOUNT_NAMESPACE);
  const open = async () => {
    const stored = await readResource<{ account_url: string }>(tid, ACCOUNT_TYPE, id);
    if (!stored) return undefined;
    const secret = await openSecret<{ private_key: string }>(tid, stored.record, stored.sealed);
    return { key: secret!.private_key, url: stored.record.meta.account_url };
  };
  const existing = await open();
  if (existing) return existing;
  const pair = await generateKeyPair({ kind: 'ec', curve: 'P-256' });
  const key = privatePkcs8Pem(pair.privateKey);
  const c = client(settings, op, key);
  try {
    await c.createAccount({ termsOfServiceAgreed: true, ...(settings.email ? { contact: [`mailto:${settings.email}`] } : {}) });
  } catch (error) {
    if (op.signal.aborted) throw op.signal.reason;
    throw acmeError(`ACME account registration failed: ${describe(error)}`, error);
  }
  const url = c.getAccountUrl();
  try {
    await createResource(
      ctx,
      {
        type: ACCOUNT_TYPE,
        id,
        name: new URL(directoryUrl).host,
        meta: { directory_url: directoryUrl, account_url: url, algorithm: 'ec', curve: 'P-256' },
        secret: { private_key: key },
      },
      (rec) => ({
        action: 'acme_account.create',
        resource: { type: ACCOUNT_TYPE, id: rec.id, name: rec.name },
        detail: { directory_url: directoryUrl, account_url: url },
      }),
    );
    return { key, url };
  } catch (error) {
    // registered concurrently by another request: use the stored one
    if (error instanceof HttpError && error.code === 'already_exists') return (await open())!;
    throw error;
  }
}

/** One ACME operation's connections: its guarded agent and the signal its deadline aborts. */
interface Operation {
  readonly agent: https.Agent;
  readonly signal: AbortSignal;
}

function client(settings: AcmeSettings, op: Operation, key: string, accountUrl?: string): acme.Client {
  const c = new acme.Client({
    directoryUrl: settings.directory_url,
    accountKey: key,
    ...(accountUrl ? { accountUrl } : {}),
    backoffAttempts: 10,
    backoffMin: 250,
    backoffMax: 2000,
  });
  // acme-client sends every request through HttpClient.request(url, method, axiosOptions):
  // this client's requests use the operation's guarded agent and signal, never follow
  // redirects or env proxies, and none starts once the deadline has passed.
  const http = (c as unknown as { http: { request: (u: string, m: string, o?: Record<string, unknown>) => Promise<unknown> } }).http;
  const request = http.request.bind(http);
  const timeout = outboundTimeoutMs('acme-request');
  http.request = (url, method, opts = {}) => {
    if (op.signal.aborted) return Promise.reject(op.signal.reason);
    return request(url, method, { ...opts, httpsAgent: op.agent, maxRedirects: 0, proxy: false, timeout, signal: op.signal });
  };
  return c;
}

/**
 * Runs one ACME operation under its deadline (ACME_TIMEOUT_MS): connections through the SSRF
 * guard (lib/events/ssrf.ts), all of them closed when the operation ends or the deadline
 * passes; a directory that accepts connections and never answers is a 502 naming the server.
 */
async function underDeadline<T>(settings: AcmeSettings, run: (op: Operation) => Promise<T>): Promise<T> {
  const ms = outboundTimeoutMs('acme-enrollment');
  const agent = new https.Agent({
    ...(settings.directory_ca_pem ? { ca: settings.directory_ca_pem } : {}),
    lookup: guardedLookup({ allowLoopback: config().ACME_ALLOW_LOOPBACK }) as unknown as https.AgentOptions['lookup'],
    keepAlive: false,
  });
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_ok, fail) => {
    timer = setTimeout(() => {
      const error = acmeError(
        `the ACME server ${new URL(settings.directory_url).host} did not answer within ${ms} ms: the CA is unreachable or too slow, try again later`,
      );
      controller.abort(error);
      agent.destroy();
      fail(error);
    }, ms);
  });
  try {
    return await Promise.race([run({ agent, signal: controller.signal }), deadline]);
  } finally {
    clearTimeout(timer);
    agent.destroy();
  }
}

const describe = (error: unknown) => {
  const e = error as { message?: string; cause?: { message?: string } };
  const text = (e.message ?? 'unknown error').replace(/\s+/g, ' ').slice(0, 500);
  return e.cause?.message && e.cause.message !== e.message ? `${text} (${e.cause.message.slice(0, 200)})` : text;
};

/** Runs a full ACME order for a CSR (http-01); returns the certificate and its chain as PEM. */
export async function obtainCertificate(ctx: CallContext, settings: AcmeSettings, csrPem: string): Promise<{ certificate: string; chain: string }> {
  checkDirectoryUrl(settings.directory_url);
  const bundle = await underDeadline(settings, (op) => order(ctx, settings, csrPem, op));
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw acmeError('the ACME server returned no certificate');
  return {
    certificate: `${blocks[0]}\n`,
    chain: blocks
      .slice(1)
      .map((b) => `${b}\n`)
      .join(''),
  };
}

/** The account, then the order (http-01) to its certificate bundle (PEM). */
async function order(ctx: CallContext, settings: AcmeSettings, csrPem: string, op: Operation): Promise<string> {
  const tid = ctx.principal.tenantId;
  const acct = await account(ctx, settings, op);
  const c = client(settings, op, acct.key, acct.url);
  const tokens: string[] = [];
  try {
    return await c.auto({
      csr: csrPem,
      ...(settings.email ? { email: settings.email } : {}),
      termsOfServiceAgreed: true,
      challengePriority: ['http-01'],
      // the directory validates against the public route; a self-check from here proves nothing
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        if (challenge.type !== 'http-01') throw new Error(`unsupported challenge ${challenge.type}`);
        tokens.push(challenge.token);
        await putChallenge(challenge.token, tid, keyAuthorization, CHALLENGE_TTL_SECONDS);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        await deleteChallenge(challenge.token);
      },
    });
  } catch (error) {
    if (op.signal.aborted) throw op.signal.reason;
    if (error instanceof HttpError) throw error;
    throw acmeError(`ACME enrollment failed: ${describe(error)}`, error);
  } finally {
    await Promise.all(tokens.map((t) => deleteChallenge(t).catch(() => undefined)));
  }
}

/** Revokes a certificate at the directory that issued it (RFC 8555 §7.6). */
export async function revokeAtDirectory(ctx: CallContext, settings: AcmeSettings, certificatePem: string, reasonCode: number): Promise<void> {
  await underDeadline(settings, async (op) => {
    const acct = await account(ctx, settings, op);
    try {
      await client(settings, op, acct.key, acct.url).revokeCertificate(certificatePem, { reason: reasonCode });
    } catch (error) {
      if (op.signal.aborted) throw op.signal.reason;
      if (error instanceof HttpError) throw error;
      throw acmeError(`ACME revocation failed: ${describe(error)}`, error);
    }
  });
}

/** The key authorization for a pending http-01 token, or undefined. */
export async function challengeAnswer(token: string): Promise<string | undefined> {
  const item = await readChallenge(token);
  if (!item || (typeof item.ttl === 'number' && item.ttl * 1000 < Date.now())) return undefined;
  return item.key_authorization as string;
}
