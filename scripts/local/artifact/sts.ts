import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { TENANT_SESSION_SECONDS } from '../../../lib/tenancy/credentials.js';

/**
 * The STS stand-in of the artifact runtime (STS has no local engine): answers the one call
 * the functions make, AssumeRole of their tenant-access role (lib/tenancy/credentials.ts),
 * and refuses any other request shape, so what ships is held to the request it must make:
 * RoleArn = the function's TENANT_ROLE_ARN (one of the assembly's roles), RoleSessionName
 * `tenant-<id>`, exactly one tag `tenant_id` = that id, TransitiveTagKeys [tenant_id],
 * DurationSeconds TENANT_SESSION_SECONDS (an hour, the chained maximum). The credentials it hands out name the tenant (their access key id is
 * derived from it), so a test can tell on the wire whose session signed a table request.
 */
export interface StsStandIn {
  readonly endpoint: string;
  /** AssumeRole requests answered (role, tenant). */
  readonly calls: { readonly roleArn: string; readonly tenantId: string }[];
  close(): Promise<void>;
}

/** The access key id of a tenant's session (ASIA + 16 hex characters of its id's hash). */
export const sessionKeyOf = (tenantId: string): string => `ASIA${createHash('sha256').update(tenantId).digest('hex').slice(0, 16).toUpperCase()}`;

const body = (req: IncomingMessage) =>
  new Promise<string>((ok) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
  });

const xmlError = (code: string, message: string) =>
  `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>local</RequestId></ErrorResponse>`;

export async function startSts(roles: (arn: string) => boolean): Promise<StsStandIn> {
  const calls: { roleArn: string; tenantId: string }[] = [];
  const server = createServer(async (req, res) => {
    const p = Object.fromEntries(new URLSearchParams(await body(req)));
    const tenantId = p['Tags.member.1.Value'] ?? '';
    const expected = {
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: p.RoleArn,
      RoleSessionName: `tenant-${tenantId}`,
      'Tags.member.1.Key': 'tenant_id',
      'Tags.member.1.Value': tenantId,
      'TransitiveTagKeys.member.1': 'tenant_id',
      DurationSeconds: String(TENANT_SESSION_SECONDS),
    };
    const shapeOk = tenantId !== '' && JSON.stringify(Object.entries(p).sort()) === JSON.stringify(Object.entries(expected).sort());
    if (!shapeOk || !p.RoleArn || !roles(p.RoleArn)) {
      res.writeHead(400, { 'content-type': 'text/xml' });
      res.end(xmlError(shapeOk ? 'AccessDenied' : 'ValidationError', `not the tenant AssumeRole the functions make: ${JSON.stringify(p)}`));
      return;
    }
    calls.push({ roleArn: p.RoleArn, tenantId });
    const expiration = new Date(Date.now() + TENANT_SESSION_SECONDS * 1000).toISOString();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${sessionKeyOf(tenantId)}</AccessKeyId><SecretAccessKey>local-${tenantId}</SecretAccessKey><SessionToken>local-session-${tenantId}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><Arn>${p.RoleArn}/tenant-${tenantId}</Arn><AssumedRoleId>AROALOCAL:tenant-${tenantId}</AssumedRoleId></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>local</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { endpoint, calls, close: () => new Promise((ok) => server.close(() => ok())) };
}
