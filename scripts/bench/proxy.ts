/**
 * A counting proxy in front of DynamoDB Local for the benchmarks (npm run bench:trips,
 * npm run bench:partitions): the runtime's handlers talk to it (DYNAMODB_CLIENT_ENDPOINT),
 * it forwards every call after LATENCY_MS and records what the call was, when it started
 * and answered, and which items (and gsi1 partition keys) a write touched.
 */
import { createServer, type IncomingMessage, type ServerResponse, request as httpRequest } from 'node:http';
import { freePort } from '../local/ports.js';

/**
 * Added to every call by the proxy, as a network would: DynamoDB Local answers in about a
 * millisecond, less than the CPU a request spends between two calls, so without it calls
 * meant to overlap would often be seen one after the other.
 */
const LATENCY_MS = Number(process.env.TRIPS_LATENCY_MS ?? 10);

export interface Call {
  readonly op: string;
  readonly what: string;
  readonly start: number;
  end: number;
  readonly background: boolean;
  /** The items a write puts, updates or deletes (`pk|sk`), with the gsi1 partition key it writes, if any. */
  readonly writes: readonly { readonly key: string; readonly gsi?: string }[];
}

/** What a call touches, in short: `GetItem T#…/SECRET#name`, `UpdateItem METER#…/USAGE#<day>`, `Query gsi1 AUDIT#3`. */
function describe(op: string, body: Record<string, any>): { what: string; background: boolean } {
  if (op.startsWith('DynamoDBStreams')) return { what: op, background: true };
  const key = body.Key as Record<string, { S?: string }> | undefined;
  const short = (s: string | undefined) => (s ?? '?').replace(/^(T|METER)#[0-9a-f-]{36}/, '$1#…').replace(/^(KEY|DEVICE)#[0-9a-f-]{16,}/, '$1#…');
  // the audit sealer (the stream relay) reads chain heads and ranges of audit entries
  // the stream relay reads and deletes outbox items (lib/events/relay.ts)
  if (key)
    return {
      what: `${short(key.pk?.S)}/${short(key.sk?.S)}`,
      background: key.pk?.S === 'SYS' || key.sk?.S === 'AUDITCHAIN' || (key.sk?.S ?? '').startsWith('OUTBOX#'),
    };
  if (op === 'Query') {
    const values = (body.ExpressionAttributeValues ?? {}) as Record<string, { S?: string }>;
    const pk = values[':pk']?.S ?? '?';
    const listing = body.IndexName === 'gsi1' && /^(OUTBOX|AUDIT|LEASES|TENANTS)(#|$)/.test(pk);
    const sealer = Object.values(values).some((v) => /^(AUDIT|OUTBOX)#/.test(v.S ?? ''));
    return { what: `${body.IndexName ?? 'table'} ${short(pk)}`, background: listing || sealer };
  }
  // the sealer's transaction moves the account's chain head
  if (op === 'TransactWriteItems')
    return { what: `${(body.TransactItems as unknown[]).length} items`, background: JSON.stringify(body.TransactItems).includes('"AUDITCHAIN"') };
  if (op === 'BatchGetItem')
    return { what: `${Object.values(body.RequestItems as Record<string, { Keys: unknown[] }>)[0]?.Keys.length ?? 0} keys`, background: false };
  return { what: '', background: false };
}

/** An HTTP proxy to DynamoDB Local that records every call with its start and end. */
export async function countingProxy(targetPort: number, latencyMs = LATENCY_MS) {
  const calls: Call[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers['x-amz-target'] ?? '');
      const op = target.startsWith('DynamoDBStreams') ? target : (target.split('.')[1] ?? target);
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        // not JSON: counted as is
      }
      const call: Call = { op, ...describe(op, parsed), writes: writesOf(op, parsed), start: performance.now(), end: Number.POSITIVE_INFINITY };
      calls.push(call);
      setTimeout(() => forward(body, call, req, res), latencyMs);
    });
  });
  const forward = (body: Buffer, call: Call, req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
      up.on('end', () => {
        call.end = performance.now();
      });
    });
    upstream.on('error', () => {
      call.end = performance.now();
      res.destroy();
    });
    upstream.end(body);
  };
  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return { port, calls, close: () => server.close() };
}

/** The longest chain of calls each started after the previous one answered. */
export function depthOf(calls: readonly Pick<Call, 'start' | 'end'>[]): number {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let d = 1;
    for (let j = 0; j < i; j++) if (sorted[j]!.end <= sorted[i]!.start) d = Math.max(d, depth[j]! + 1);
    depth.push(d);
  }
  return Math.max(0, ...depth);
}

type Attr = { S?: string };
const keyOf = (item: Record<string, Attr> | undefined) => `${item?.pk?.S ?? '?'}|${item?.sk?.S ?? '?'}`;

/** The gsi1 partition key an UpdateItem sets (`SET #x = :v` with #x naming gsi1pk). */
function gsiOfUpdate(u: Record<string, any>): string | undefined {
  const names = (u.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (u.ExpressionAttributeValues ?? {}) as Record<string, Attr>;
  for (const [alias, name] of Object.entries(names)) {
    if (name !== 'gsi1pk') continue;
    const m = new RegExp(`${alias}\\s*=\\s*(:[A-Za-z0-9_]+)`).exec(String(u.UpdateExpression ?? ''));
    if (m) return values[m[1]!]?.S;
  }
  return undefined;
}

/** The items a write call touches. */
export function writesOf(op: string, body: Record<string, any>): Call['writes'] {
  const put = (p: Record<string, any>) => ({ key: keyOf(p.Item), ...(p.Item?.gsi1pk?.S ? { gsi: p.Item.gsi1pk.S as string } : {}) });
  const update = (u: Record<string, any>) => {
    const gsi = gsiOfUpdate(u);
    return { key: keyOf(u.Key), ...(gsi ? { gsi } : {}) };
  };
  switch (op) {
    case 'PutItem':
      return [put(body)];
    case 'UpdateItem':
      return [update(body)];
    case 'DeleteItem':
      return [{ key: keyOf(body.Key) }];
    case 'TransactWriteItems':
      return (body.TransactItems as Record<string, any>[]).flatMap((t) =>
        t.Put ? [put(t.Put)] : t.Update ? [update(t.Update)] : t.Delete ? [{ key: keyOf(t.Delete.Key) }] : [],
      );
    case 'BatchWriteItem':
      return Object.values(body.RequestItems as Record<string, Record<string, any>[]>).flatMap((rs) =>
        rs.map((r) => (r.PutRequest ? put(r.PutRequest) : { key: keyOf(r.DeleteRequest?.Key) })),
      );
    default:
      return [];
  }
}
