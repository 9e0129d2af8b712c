/**
 * Benchmark: POST /api/v1/crypto/sign with an EC P-256 key on the runtime's SoftHSM2
 * token, through the local gateway, next to its floor measured in the same run: the same
 * DynamoDB calls made bare through the SDK (API-key auth item; the account item and the
 * usage/rate-limit write in parallel; the key record; the audit entry) around raw pkcs11js
 * signs (SHA-256 in process + CKM_ECDSA) on the same token with the same number of pooled
 * sessions, at the same concurrency. Reports throughput, p50/p99 and the API/floor
 * throughput ratio (target: >= 0.75).
 *
 *   npm run bench:sign      (BENCH_SECONDS=10 BENCH_CONCURRENCY=16 PKCS11_POOL_SIZE=4 by default)
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { p256 } from '@noble/curves/nist.js';
import pkcs11js from 'pkcs11js';
import type { Handle } from 'pkcs11js';
import { generateApiKey, hashApiKey } from '../../lib/auth/api-keys.js';
import { keys } from '../../lib/store/keys.js';
import { softHsmModule, softHsmPaths } from '../local/softhsm.js';
import { closedLoop, fmt, http, startRuntime, type Result } from './harness.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const POOL = Number(process.env.PKCS11_POOL_SIZE ?? 4);
const TABLE = 'secrets';
const MESSAGE_BYTES = 256;

/** Raw pkcs11js on the same token: `POOL` logged-in sessions, one operation each at a time. */
function rawToken(dataDir: string, label: string) {
  const paths = softHsmPaths(dataDir);
  process.env.SOFTHSM2_CONF = paths.conf;
  const { pin } = JSON.parse(readFileSync(paths.pins, 'utf8')) as { pin: string };
  const lib = new pkcs11js.PKCS11();
  lib.load(softHsmModule()!);
  lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK }); // signs run on worker threads
  const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === 'secrets-api');
  if (!slot) throw new Error('token secrets-api not found');
  const free: Handle[] = [];
  for (let i = 0; i < POOL; i++) free.push(lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION));
  lib.C_Login(free[0]!, pkcs11js.CKU_USER, pin);
  lib.C_FindObjectsInit(free[0]!, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  const [key] = lib.C_FindObjects(free[0]!, 1);
  lib.C_FindObjectsFinal(free[0]!);
  if (!key) throw new Error(`key ${label} not found`);
  const waiters: Array<(s: Handle) => void> = [];
  const acquire = () => new Promise<Handle>((ok) => (free.length ? ok(free.pop()!) : waiters.push(ok)));
  const release = (s: Handle) => (waiters.length ? waiters.shift()!(s) : free.push(s));
  return {
    async sign(message: Buffer): Promise<Buffer> {
      const digest = createHash('sha256').update(message).digest();
      const s = await acquire();
      try {
        lib.C_SignInit(s, { mechanism: pkcs11js.CKM_ECDSA }, key);
        const raw = await lib.C_SignAsync(s, digest, Buffer.alloc(1024));
        return Buffer.from(p256.Signature.fromBytes(raw, 'compact').toBytes('der'));
      } finally {
        release(s);
      }
    },
    close() {
      lib.C_Finalize();
    },
  };
}

async function main() {
  const rootKey = generateApiKey().key;
  const rt = await startRuntime(rootKey);
  try {
    const tenant = await http('POST', `${rt.baseUrl}/api/v1/admin/tenants`, { authorization: `Bearer ${rootKey}` }, JSON.stringify({ name: 'bench', admin_email: 'bench@example.test' }));
    const created = JSON.parse(tenant.text).data;
    const apiKey: string = created.api_key.key;
    const tid: string = created.tenant.id;
    const auth = { authorization: `Bearer ${apiKey}` };
    const made = await http('POST', `${rt.baseUrl}/api/v1/code-signing-keys`, auth, JSON.stringify({ name: 'bench-p256', backend: 'pkcs11', algorithm: 'EC_P256' }));
    if (made.status !== 201) throw new Error(`key creation failed: ${made.status} ${made.text}`);
    const signingKey = JSON.parse(made.text).data.code_signing_key as { id: string; key_handle: string };

    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: rt.dynamoEndpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) }),
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    );
    const token = rawToken(rt.dataDir, signingKey.key_handle);
    const hash = hashApiKey(apiKey);
    const day = new Date().toISOString().slice(0, 10);
    const message = randomBytes(MESSAGE_BYTES);
    const body = JSON.stringify({ backend: 'pkcs11', key_id: signingKey.id, message: message.toString('base64'), purpose: 'benchmark' });

    /** Where the floor's time goes: total ms per step (printed with the results). */
    const spent: Record<string, { ms: number; n: number }> = {};
    const timed = async <T>(step: string, p: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await p();
      } finally {
        const s = (spent[step] ??= { ms: 0, n: 0 });
        s.ms += performance.now() - t0;
        s.n++;
      }
    };
    const floor = async () => {
      // authentication: the key's auth item, then the account item beside the usage/rate-limit write
      await timed('auth item', () => doc.send(new GetCommand({ TableName: TABLE, Key: keys.apiKeyAuth(hash), ConsistentRead: true })));
      await timed('account + usage', () =>
        Promise.all([
          doc.send(new GetCommand({ TableName: TABLE, Key: keys.tenant(tid), ConsistentRead: true })),
          doc.send(new UpdateCommand({ TableName: TABLE, Key: keys.usageDay(tid, day), UpdateExpression: 'ADD requests :one', ExpressionAttributeValues: { ':one': 1 } })),
        ]),
      );
      // the key record, the device, the audit entry
      await timed('key record', () => doc.send(new GetCommand({ TableName: TABLE, Key: keys.resource(tid, 'code_signing_key', signingKey.id), ConsistentRead: true })));
      const signature = await timed('pkcs11 sign', () => token.sign(message));
      const id = `bench-${randomBytes(8).toString('hex')}`;
      await timed('audit put', () =>
        doc.send(
          new PutCommand({
            TableName: TABLE,
            Item: {
              ...keys.audit(tid, id),
              id,
              at: new Date().toISOString(),
              tenant_id: tid,
              action: 'crypto.sign',
              outcome: 'success',
              resource: { type: 'code_signing_key', id: signingKey.id, name: 'bench-p256' },
              detail: { purpose: 'benchmark', backend: 'pkcs11', algorithm: 'ECDSA_P256_SHA256', message_sha256: createHash('sha256').update(message).digest('hex'), message_bytes: message.length, sig: signature.length },
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
    };
    const apiSign = async () => {
      const r = await http('POST', `${rt.baseUrl}/api/v1/crypto/sign`, auth, body);
      if (r.status !== 200) throw new Error(`sign ${r.status} ${r.text}`);
    };

    const opts = { concurrency: CONCURRENCY, seconds: SECONDS, warmupSeconds: 2 };
    const results: Result[] = [];
    results.push(await closedLoop('hsm    raw pkcs11js sign only', () => token.sign(message).then(() => undefined), opts));
    // Interleave floor and API so drift on a shared machine hits both alike.
    results.push(await closedLoop('floor  sign (bare SDK + pkcs11js)', floor, opts));
    results.push(await closedLoop('api    POST /api/v1/crypto/sign', apiSign, opts));
    results.push(await closedLoop('floor  sign (bare SDK + pkcs11js)', floor, opts));
    results.push(await closedLoop('api    POST /api/v1/crypto/sign', apiSign, opts));
    token.close();

    const [, f1, a1, f2, a2] = results as [Result, Result, Result, Result, Result];
    const f = (f1.throughput + f2.throughput) / 2;
    const a = (a1.throughput + a2.throughput) / 2;
    process.stdout.write(`\nsign benchmark: EC P-256, ${MESSAGE_BYTES}-byte messages, ${CONCURRENCY} concurrent clients, ${POOL} PKCS#11 sessions, ${SECONDS} s per phase, DynamoDB Local + SoftHSM2, ${new Date().toISOString()}\n`);
    for (const r of results) process.stdout.write(`${fmt(r)}\n`);
    process.stdout.write(`floor mean ms per step: ${Object.entries(spent).map(([k, v]) => `${k} ${(v.ms / v.n).toFixed(1)}`).join(', ')}\n`);
    process.stdout.write(`ratio api/floor (mean of two rounds): ${(a / f).toFixed(2)}   (target >= 0.75)\n`);
  } finally {
    rt.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
