import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';

/**
 * Whether a sign-in session still admits its access tokens: one consistent GetItem, no
 * cache, so a sign-out or a revoked token family refuses the very next request. The bearer
 * path (lib/auth/jwt.ts) calls it for every access token that names a session (`sid`).
 */
type SessionState = 'active' | 'revoked' | 'expired' | 'missing';

export async function sessionState(tenantId: string, sessionId: string, now = Date.now()): Promise<SessionState> {
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.session(tenantId, sessionId),
      ConsistentRead: true,
      ProjectionExpression: '#s, expires_at',
      ExpressionAttributeNames: { '#s': 'status' },
    }),
  );
  if (!out.Item) return 'missing';
  if (out.Item.status !== 'active') return 'revoked';
  return Date.parse(String(out.Item.expires_at)) > now ? 'active' : 'expired';
}
