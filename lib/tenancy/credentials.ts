import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { config } from '../config.js';
import { admitted } from '../core/admission.js';
import { logger } from '../core/logger.js';

/**
 * A tenant's credentials: an STS session of the tenant-access role (config TENANT_ROLE_ARN)
 * tagged `tenant_id`, whose policy resolves `${aws:PrincipalTag/tenant_id}` in its
 * `dynamodb:LeadingKeys` and `kms:EncryptionContext:tenant_id` conditions
 * (infra/grants.ts). One AssumeRole per tenant per container while the session lasts:
 * sessions are kept until REFRESH_MARGIN_MS before they expire (the first call of a tenant
 * in a container pays one STS round trip; `npm run bench` measures it). docs/capacity.md
 * ("STS: AssumeRole within its quota") models the calls per second this makes.
 */
export interface SessionCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

/**
 * The longest session a chained AssumeRole may ask for (a Lambda execution role assuming the
 * tenant-access role is role chaining: at most one hour, whatever the role's
 * MaxSessionDuration, which infra/grants.ts sets to the same hour). 900 s sessions made
 * six times the STS calls for the same traffic (docs/capacity.md); a session lives only in
 * the container's memory, never in a log, the table or a response.
 */
export const TENANT_SESSION_SECONDS = 3600;
// above the SDK's own refresh window (5 minutes before expiry), so a cached session is never handed out stale
export const REFRESH_MARGIN_MS = 360_000;
/**
 * Sessions kept per container, least recently used dropped first: a container serving more
 * tenants than this re-assumes on every return of an evicted one. About 2 KB each (the
 * session token dominates), so 10,000 sessions are about 20 MB of a 512 MB function.
 */
export const MAX_SESSIONS = 10_000;

/**
 * Where a role's sessions are shared between its containers and functions (lib/authn/
 * tenant-sessions.ts installs the table's, sealed): a container's first call for a tenant
 * takes the role's session from there while it has more than REFRESH_MARGIN_MS +
 * MIN_SHARED_MS left, and only otherwise assumes the role and leaves the new session there.
 * With it STS sees one call per role and account per session (docs/capacity.md).
 */
export interface SessionStore {
  get(roleArn: string, tenantId: string): Promise<SessionCredentials | undefined>;
  put(roleArn: string, tenantId: string, session: SessionCredentials): Promise<void>;
}
/** The encryption context's purpose of a sealed shared session (lib/authn/tenant-sessions.ts, infra/grants.ts `TenantSessionKey`). */
export const TENANT_SESSION_PURPOSE = 'tenant-session';
/** A shared session with less than this left beyond the margin is not worth taking. */
const MIN_SHARED_MS = 120_000;

const sessions = new Map<string, Promise<SessionCredentials>>();
let sts: STSClient | undefined;
let assumed = 0;
let shared = 0;
let store: SessionStore | undefined;

/** Installs the store sessions are shared through (undefined: each container assumes for itself). */
export function shareSessionsThrough(s: SessionStore | undefined): void {
  store = s;
}

function stsClient(): STSClient {
  if (!sts) {
    const cfg = config();
    sts = new STSClient({
      region: cfg.AWS_REGION,
      ...(cfg.STS_ENDPOINT ? { endpoint: cfg.STS_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      maxAttempts: 3,
    });
  }
  return sts;
}

/** RoleSessionName allows [\w+=,.@-], at most 64 characters: the tenant id fits as it is. */
const sessionName = (tenantId: string) => `tenant-${tenantId}`.replace(/[^\w+=,.@-]/g, '_').slice(0, 64);

async function assume(roleArn: string, tenantId: string): Promise<SessionCredentials> {
  assumed++;
  const out = await stsClient().send(
    new AssumeRoleCommand({
      RoleArn: roleArn,
      RoleSessionName: sessionName(tenantId),
      Tags: [{ Key: 'tenant_id', Value: tenantId }],
      TransitiveTagKeys: ['tenant_id'],
      DurationSeconds: TENANT_SESSION_SECONDS,
    }),
  );
  const c = out.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new Error('STS AssumeRole returned no credentials');
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: new Date(c.Expiration) };
}

/** The role's session for the tenant from the shared store, else a new one, left in the store for the role's other containers. */
async function obtain(roleArn: string, tenantId: string): Promise<SessionCredentials> {
  if (store) {
    const found = await store.get(roleArn, tenantId).catch((error: unknown) => {
      logger.warn('tenant session store unreadable; assuming the role', { error: error instanceof Error ? error.name : 'unknown' });
      return undefined;
    });
    if (found && found.expiration.getTime() - Date.now() > REFRESH_MARGIN_MS + MIN_SHARED_MS) {
      shared++;
      return found;
    }
  }
  const fresh = await assume(roleArn, tenantId);
  // not awaited: the request's admission (lib/core/admission.ts) may itself wait for this
  // session (the limiter's write). Sealed and written only once the request is admitted, so a
  // refused request spends no KMS call on it; a lost write costs one AssumeRole later
  if (store) {
    const shared = store;
    admitted().then(
      () =>
        shared.put(roleArn, tenantId, fresh).catch((error: unknown) => {
          logger.warn('tenant session not shared', { error: error instanceof Error ? error.name : 'unknown' });
        }),
      () => undefined, // refused or abandoned: nothing is sealed or written
    );
  }
  return fresh;
}

/** The tenant's session, from this container's cache while it has more than the margin left. */
export function tenantCredentials(tenantId: string): Promise<SessionCredentials> {
  const roleArn = config().TENANT_ROLE_ARN;
  if (!roleArn) return Promise.reject(new Error('TENANT_ROLE_ARN is not configured'));
  const cached = sessions.get(tenantId);
  if (cached) {
    // most recently used last: the Map's insertion order is the eviction order
    sessions.delete(tenantId);
    sessions.set(tenantId, cached);
    return cached;
  }
  if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
  const session = obtain(roleArn, tenantId);
  sessions.set(tenantId, session);
  const forget = () => {
    if (sessions.get(tenantId) === session) sessions.delete(tenantId);
  };
  session.then((s) => {
    // dropped before it runs out; an unref'd timer does not keep the process alive
    setTimeout(forget, Math.max(0, s.expiration.getTime() - Date.now() - REFRESH_MARGIN_MS)).unref();
  }, forget);
  return session;
}

/** AssumeRole calls this container made (bench and tests). */
export const assumedSessions = (): number => assumed;
/** Sessions this container took from the shared store instead (bench and tests). */
export const sharedSessions = (): number => shared;
