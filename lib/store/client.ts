import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import { config } from '../config.js';
import { guardWrites } from '../core/admission.js';
import { observeClient } from '../core/metrics.js'; // X-Ray subsegment per call (issue 25)
import { tenantCredentials } from '../tenancy/credentials.js';
import { partitionAccesses, partitionKeys } from '../tenancy/leading-keys.js';
import { isLookupPartition, markLookupWrites, screenLookupReads } from '../tenancy/lookups.js';
import { meterAllows } from '../tenancy/meter.js';
import { currentScope } from '../tenancy/scope.js';
import { isAccountPartition, meterPk, tenantPk } from './keys.js';

/**
 * The table's document clients (docs/architecture.md, "Tenancy in IAM"): the function's own
 * (service) client, and one client per tenant holding that tenant's STS session
 * (lib/tenancy/credentials.ts), all module singletons reused across warm invocations and
 * sharing one connection pool. `db()` picks: inside a tenant scope whose tenant
 * authentication has named, the tenant's client; otherwise the service client.
 *
 * The rule the tenant role's `dynamodb:LeadingKeys` condition enforces in AWS is enforced
 * here too (so the local runtimes, whose DynamoDB ignores credentials, fail the same way):
 * - a tenant client touches only the partition `T#<its tenant>`, the global lookup
 *   partitions of lib/tenancy/lookups.ts, and its account's metering partition
 *   `METER#<its tenant>` with what lib/tenancy/meter.ts allows there (reads, and UpdateItem
 *   naming only the metering attributes);
 * - inside a tenant scope, the service client touches no account partition (`T#`, `METER#`)
 *   except the projected read of the account item (authentication's account check).
 * Every client also puts the owner mark on the lookup items it writes and drops, on read,
 * lookup items whose mark does not name the account they name (lib/tenancy/lookups.ts).
 */
let service: DynamoDBDocumentClient | undefined;
const tenants = new Map<string, DynamoDBDocumentClient>();
/** Tenant clients kept per container (the least recently created goes first). */
const MAX_TENANT_CLIENTS = 500;
let handler: NodeHttpHandler | undefined;

/** What every document client gets when it is made: first its writes wait for the request's admission (lib/core/admission.ts). */
const clientHooks: ((client: DynamoDBDocumentClient) => void)[] = [guardWrites];

/** Applies `hook` to every document client, made or to be made (the request path registers the admission gate). */
export function onDocumentClient(hook: (client: DynamoDBDocumentClient) => void): void {
  clientHooks.push(hook);
  if (service) hook(service);
  for (const client of tenants.values()) hook(client);
}

class TenantAccessDenied extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AccessDeniedException';
  }
}

function create(
  credentials: DynamoDBClient['config']['credentials'] | undefined,
  check: (command: string, input: Record<string, unknown>) => void,
  session?: string,
): DynamoDBDocumentClient {
  const cfg = config();
  const local = cfg.DYNAMODB_ENDPOINT !== undefined;
  // A Lambda container serves one request at a time: 64 sockets are ample. The local runtimes
  // serve every concurrent request (and the stream relay) from one process: with 64, a burst of
  // 300 requests queued its table calls past the 2 s connection timeout (500s in
  // test/api/limits-contention.test.ts); DynamoDB Local takes 512 connections. DynamoDB's
  // endpoints accept a connection in milliseconds, so 2 s means a network fault; DynamoDB Local is
  // one Java process, and on a loaded 2-core machine it took longer than 2 s to accept the 300th
  // of a burst of new connections (test/integration/ratelimit-bucket.test.ts at load 15): 10 s there.
  handler ??= new NodeHttpHandler({
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets: local ? 512 : 64 }),
    httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
    connectionTimeout: local ? 10_000 : 2000,
    requestTimeout: 5000,
  });
  const base = new DynamoDBClient({
    region: cfg.AWS_REGION,
    ...(local ? { endpoint: cfg.DYNAMODB_ENDPOINT } : {}),
    ...(credentials ? { credentials } : local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
    requestHandler: handler,
  });
  // No logger is configured, so the SDK's is a no-op, but its middleware still builds a filtered
  // copy of every input and answer (each item of a query) to hand to it: without it a client
  // spends 0.82-0.83 of the CPU on the same calls (scripts/bench/sdk-logger.ts, medians of 5 and 9 rounds).
  base.middlewareStack.remove('loggerMiddleware');
  const client = observeClient(base);
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      check(String(context.commandName), args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name: 'tenantPartitions', priority: 'high' },
  );
  // the owner marks of the lookup items (lib/tenancy/lookups.ts): put on every lookup item
  // written, checked (and removed) on every lookup item read
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const command = String(context.commandName);
      const out = await next({ ...args, input: markLookupWrites(command, args.input as Record<string, any>, session) });
      screenLookupReads(command, out.output as Record<string, any>);
      return out;
    },
    { step: 'initialize', name: 'lookupOwnerMarks', priority: 'normal' },
  );
  for (const hook of clientHooks) hook(doc);
  return doc;
}

const isAccountRead = (command: string, input: Record<string, unknown>) => {
  const key = input.Key as { pk?: unknown; sk?: unknown } | undefined;
  return (
    command === 'GetItemCommand' &&
    typeof key?.pk === 'string' &&
    key.pk.startsWith('T#') &&
    key.sk === 'TENANT' &&
    typeof input.ProjectionExpression === 'string'
  );
};

/** The function's own client: credential lookups, the account read, and everything outside a tenant scope. */
export function serviceDb(): DynamoDBDocumentClient {
  service ??= create(undefined, (command, input) => {
    if (!currentScope()) return;
    const touched = partitionKeys(command, input);
    if (touched?.some(isAccountPartition) === false) return;
    if (isAccountRead(command, input)) return;
    throw new TenantAccessDenied(`${command} on tenant data outside the tenant's credentials`);
  });
  return service;
}

/** The client holding `tenantId`'s STS session (the function's own credentials where no tenant role is configured). */
function tenantDb(tenantId: string): DynamoDBDocumentClient {
  let client = tenants.get(tenantId);
  if (!client) {
    const own = tenantPk(tenantId);
    const meter = meterPk(tenantId);
    client = create(
      config().TENANT_ROLE_ARN ? () => tenantCredentials(tenantId) : undefined,
      (command, input) => {
        const touched = partitionAccesses(command, input);
        if (touched?.every((a) => a.pk === own || isLookupPartition(a.pk) || (a.pk === meter && meterAllows(a)))) return;
        throw new TenantAccessDenied(`${command} outside tenant ${tenantId}'s partition`);
      },
      tenantId,
    );
    if (tenants.size >= MAX_TENANT_CLIENTS) tenants.delete(tenants.keys().next().value as string);
    tenants.set(tenantId, client);
  }
  return client;
}

/** The document client for the current scope: the tenant's once authentication named it, else the service client. */
export function db(): DynamoDBDocumentClient {
  const tenantId = currentScope()?.tenantId;
  return tenantId === undefined ? serviceDb() : tenantDb(tenantId);
}

export const tableName = (): string => config().TABLE_NAME;

/** Readiness: one read of a fixed item that need not exist; resolves when the table answers. */
export async function probeTable(): Promise<void> {
  await db().send(new GetCommand({ TableName: tableName(), Key: { pk: 'SYS', sk: 'READY' } }));
}
