import { createHash, randomBytes, randomInt } from 'node:crypto';
import * as z from 'zod/v4';
import { HttpError } from '../core/errors.js';
import { transact, TxConditionFailed, type TxItem } from '../store/tx.js';

export { recordPollAt, statusUpdate, userCodePointerDelete, userCodePointerPut } from './store.js';

/**
 * The OAuth 2.0 Device Authorization Grant (RFC 8628) as two flows of the service use it:
 * agent enrolment (lib/agents/authorization.ts) and CLI login (lib/users/cli-login.ts).
 * What they share lives here: the codes (a secret device code stored only as its SHA-256, a
 * short user code a person types), the device authorization response, the polling rules
 * (interval, slow_down, expiry) and the RFC's error objects. Each flow keeps its own records
 * and its own way of deciding and issuing.
 */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** How long a device code and its user code live. */
const AUTHORIZATION_TTL_SECONDS = 600;
export const POLL_INTERVAL_SECONDS = 5;
const SLOW_DOWN_STEP_SECONDS = 5;

/** 20 consonants without vowels (no words) and without look-alikes: RFC 8628 §6.1. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;

/** An OAuth `client_id` (RFC 6749 Appendix A.1). */
export const ClientIdSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/, 'visible ASCII characters (RFC 6749 Appendix A.1)');

/** A device code as the device authorization response gave it. */
export const DeviceCodeSchema = z.string().min(16).max(128);

/** A user code as a person may type it (case, spaces and dashes are ignored). */
export const UserCodeSchema = z.string().min(1).max(32);

export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A fresh device code (256 random bits) and user code (8 letters, ~34.6 bits). */
function newCodes(): { deviceCode: string; userCode: string } {
  let userCode = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) userCode += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return { deviceCode: randomBytes(32).toString('base64url'), userCode };
}

/** `BCDFGHJK` → `BCDF-GHJK`, as shown to a person. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** What a person typed, normalised: case, spaces and dashes ignored; undefined when it cannot be a code. */
export function normaliseUserCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, '');
  return code.length === USER_CODE_LENGTH && [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

type OAuthErrorCode = 'invalid_grant' | 'expired_token' | 'access_denied' | 'slow_down' | 'authorization_pending';

/** RFC 8628 §3.5 / RFC 6749 §5.2 errors: on the OAuth routes the code is the `error` member, the message `error_description`. */
export const oauthError = (code: OAuthErrorCode, message: string) => new HttpError(400, code, message);

export interface DeviceAuthorizationResponse {
  readonly device_code: string;
  readonly user_code: string;
  readonly verification_uri: string;
  readonly verification_uri_complete: string;
  readonly expires_in: number;
  readonly interval: number;
}

/**
 * Stores a new authorization (the flow's `puts` for the codes it is given: the record under
 * the device code's hash, the user-code pointer conditional on no live holder) and answers
 * RFC 8628 §3.2. A user code still held by another live request is drawn again.
 */
export async function startDeviceAuthorization(
  puts: (codes: { codeHash: string; userCodeHash: string; expiresAt: number }) => TxItem[],
  verificationUri: string,
): Promise<DeviceAuthorizationResponse> {
  const expiresAt = Math.floor(Date.now() / 1000) + AUTHORIZATION_TTL_SECONDS;
  for (let attempt = 0; ; attempt++) {
    const { deviceCode, userCode } = newCodes();
    try {
      await transact(puts({ codeHash: sha256(deviceCode), userCodeHash: sha256(userCode), expiresAt }));
    } catch (error) {
      if (error instanceof TxConditionFailed && attempt < 4) continue;
      throw error;
    }
    const shown = formatUserCode(userCode);
    return {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${shown}`,
      expires_in: AUTHORIZATION_TTL_SECONDS,
      interval: POLL_INTERVAL_SECONDS,
    };
  }
}

/** What polling reads of an authorization, whatever the flow. */
interface PollState {
  readonly code_hash: string;
  readonly client_id: string | null;
  readonly status: string;
  /** Epoch seconds. */
  readonly expires_at: number;
  readonly interval: number;
  /** Epoch milliseconds of the last poll, 0 before the first. */
  readonly last_poll_at: number;
}

/**
 * One poll (RFC 8628 §3.4–3.5) up to the decision: refuses what cannot be issued (unknown,
 * another client's, already issued, expired, denied, still pending: `slow_down` when polled
 * sooner than the interval, which then grows by 5 s). Returns when the record is `approved`:
 * the flow then issues its token from the record returned.
 */
export async function checkPoll<T extends PollState>(
  rec: T | undefined,
  clientId: string | undefined,
  recordPoll: (key: { codeHash: string; previous: number; at: number; interval: number }) => Promise<boolean>,
  nowMs = Date.now(),
): Promise<T> {
  if (!rec) throw oauthError('invalid_grant', 'unknown device code');
  // RFC 6749 §4.1.3 by analogy: the code is bound to the client it was issued to
  if (rec.client_id !== null && clientId !== undefined && clientId !== rec.client_id)
    throw oauthError('invalid_grant', 'this device code was issued to another client_id');
  if (rec.status !== 'pending' && rec.status !== 'approved' && rec.status !== 'denied')
    throw oauthError('invalid_grant', 'this device code has already been used');
  if (Math.floor(nowMs / 1000) >= rec.expires_at) throw oauthError('expired_token', 'the device code has expired: start a new device authorization');
  if (rec.status === 'denied') throw oauthError('access_denied', 'the request was denied');
  if (rec.status === 'pending') {
    const tooSoon = rec.last_poll_at > 0 && nowMs - rec.last_poll_at < rec.interval * 1000;
    const interval = tooSoon ? rec.interval + SLOW_DOWN_STEP_SECONDS : rec.interval;
    const recorded = await recordPoll({ codeHash: rec.code_hash, previous: rec.last_poll_at, at: nowMs, interval });
    if (tooSoon || !recorded) throw oauthError('slow_down', `polling too fast: wait at least ${interval} s between polls`);
    throw oauthError('authorization_pending', 'the request has not been approved yet: poll again after the interval');
  }
  return rec;
}

/** Where a person goes to enter a user code: the public base URL, else this request's host, and `path`. */
export function publicUrl(headers: Readonly<Record<string, string>>, base: string | undefined, path: string): string {
  if (base) return `${base.replace(/\/+$/, '')}${path}`;
  const host = headers.host ?? 'localhost';
  const proto = headers['x-forwarded-proto'] ?? (/^(localhost|127\.|\[::1\])/.test(host) ? 'http' : 'https');
  return `${proto}://${host}${path}`;
}
