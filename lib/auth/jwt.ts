import { SignJWT, jwtVerify, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client.js';
import { keys } from '../store/keys.js';
import { queryFirst } from '../store/pagination.js';
import { newId, nowIso, UUID_RE } from '../ids.js';
import { openJson, sealJson } from '../crypto/envelope.js';

/**
 * Access tokens (JWT, ES256) signed by a per-tenant token-signing key. The public JWK is
 * stored as is (it joins the tenant's JWKS); the private JWK is sealed with the tenant's
 * data key. Login flows issue these; authentication verifies them with jose.
 */
export const TOKEN_ISSUER = 'secrets-api';
export const TOKEN_AUDIENCE = 'secrets-api';
const ALG = 'ES256';

interface AccessClaims {
  readonly tenantId: string;
  readonly subject: string;
  readonly scopes: string[];
  readonly tokenId: string;
}

async function currentSigningKey(tenantId: string): Promise<{ kid: string; privateJwk: JWK }> {
  const item = await queryFirst({ pk: keys.tenant(tenantId).pk, sk: { prefix: keys.tokenKeyPrefix }, newestFirst: true });
  if (item) {
    const kid = item.kid as string;
    return { kid, privateJwk: await openJson<JWK>({ tenantId, type: 'token_key', id: kid, version: 1 }, item.private as Uint8Array) };
  }
  const kid = newId();
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.tokenKey(tenantId, kid),
        kid,
        public: publicJwk,
        private: await sealJson({ tenantId, type: 'token_key', id: kid, version: 1 }, privateJwk),
        created_at: nowIso(),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { kid, privateJwk };
}

export async function issueAccessToken(
  tenantId: string,
  subject: string,
  scopes: readonly string[],
  ttlSeconds = 900,
): Promise<string> {
  const { kid, privateJwk } = await currentSigningKey(tenantId);
  return new SignJWT({ tid: tenantId, scope: scopes.join(' ') })
    .setProtectedHeader({ alg: ALG, kid, typ: 'at+jwt' })
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(subject)
    .setJti(newId())
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(await importJWK(privateJwk, ALG));
}

/** Verifies signature, issuer, audience and lifetime; undefined when any check fails. */
export async function verifyAccessToken(token: string): Promise<AccessClaims | undefined> {
  try {
    const header = decodeProtectedHeader(token);
    const unverified = decodeJwt(token);
    const tid = unverified.tid;
    if (header.alg !== ALG || typeof header.kid !== 'string' || typeof tid !== 'string' || !UUID_RE.test(tid)) return undefined;
    const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.tokenKey(tid, header.kid), ConsistentRead: true }));
    if (!out.Item) return undefined;
    const key = await importJWK(out.Item.public as JWK, ALG);
    const { payload } = await jwtVerify(token, key, {
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      algorithms: [ALG],
      typ: 'at+jwt',
      clockTolerance: 5,
      requiredClaims: ['exp', 'sub', 'jti'],
    });
    if (payload.tid !== tid || typeof payload.scope !== 'string') return undefined;
    return { tenantId: tid, subject: payload.sub!, scopes: payload.scope.split(' ').filter(Boolean), tokenId: payload.jti! };
  } catch {
    return undefined;
  }
}
