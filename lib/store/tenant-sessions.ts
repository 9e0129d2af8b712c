import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/v4';
import { serviceDb, tableName } from './client.js';
import { entity } from './entity.js';
import { keys } from './keys.js';

/**
 * The shared tenant sessions' items (lib/authn/tenant-sessions.ts): one per tenant-access role
 * and account, `TSESSION#<role name>#<tid>`, holding the role's STS session for that account
 * sealed under a data key of the envelope key (never in plaintext). Read and written with the
 * function's own credentials (infra/grants.ts `TenantSessionCache`: its role's partitions
 * only); DynamoDB's TTL removes an item once its session has expired.
 */
interface SealedSession {
  /** The data key, wrapped by the key provider. */
  readonly wrapped: Uint8Array;
  readonly iv: Uint8Array;
  /** AES-256-GCM ciphertext and tag of the session's JSON. */
  readonly sealed: Uint8Array;
  /** When the session expires (epoch seconds). */
  readonly expiresAt: number;
}

const SessionItem = entity(
  'tenant session',
  z.object({
    wrapped_key: z.instanceof(Uint8Array),
    iv: z.instanceof(Uint8Array),
    sealed: z.instanceof(Uint8Array),
    expires_at: z.number().int(),
  }),
);

export async function readSealedSession(roleName: string, tenantId: string): Promise<SealedSession | undefined> {
  // eventually consistent: a miss only costs the AssumeRole it would have cost anyway
  const out = await serviceDb().send(new GetCommand({ TableName: tableName(), Key: keys.tenantSession(roleName, tenantId) }));
  if (!out.Item) return undefined;
  const item = SessionItem.parse(out.Item);
  return { wrapped: item.wrapped_key, iv: item.iv, sealed: item.sealed, expiresAt: item.expires_at };
}

export async function writeSealedSession(roleName: string, tenantId: string, s: SealedSession): Promise<void> {
  await serviceDb().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.tenantSession(roleName, tenantId),
        wrapped_key: s.wrapped,
        iv: s.iv,
        sealed: s.sealed,
        expires_at: s.expiresAt,
        ttl: s.expiresAt,
      },
    }),
  );
}
