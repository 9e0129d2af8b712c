import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Principal } from '../auth/principal.js';
import { onDocumentClient } from '../store/client.js';
import type { Tenant } from '../store/tenants.js';

/**
 * Speculative handler runs (docs/architecture.md, "The request path"). Once the credential
 * is found (its item names the account, the scopes and the user), the handler starts beside
 * the read of the account and the rate-limit write instead of after them, so its first
 * reads share their round trip. What keeps that safe:
 *
 * - no write before admission: the run happens in a request scope (AsyncLocalStorage) that
 *   holds the admission promise; every DynamoDB write of the library's client
 *   (guardWrites) and every transaction (lib/store/tx.ts) awaits it first, and fails if
 *   admission failed or the run was abandoned;
 * - no answer before admission: defineHandler awaits admission before it answers, and a
 *   failed admission (unknown or suspended account, rate limit, IP allow-list) gives
 *   exactly the answer it gives without speculation; the run's own result is dropped;
 * - nothing the account decides is guessed: the principal of a speculative run throws
 *   NotAdmittedYet when the handler reads its `tenant` (or `operator`) before the account
 *   read returned; the run is then abandoned and the handler runs again after admission,
 *   as it would have without speculation.
 */
export class NotAdmittedYet extends Error {
  constructor() {
    super('the account is still being read');
  }
}

interface Scope {
  /** Writes wait for this; undefined: admitted (or no speculation). */
  readonly gate?: Promise<void>;
  abandoned: boolean;
  /** The handler read what only admission knows (the account): run it again after admission. */
  missed: boolean;
}

const als = new AsyncLocalStorage<Scope>();
const RESOLVED = Promise.resolve();

export class RunAbandoned extends Error {
  constructor() {
    super('speculative run abandoned: a write of it was not issued');
  }
}

/** What a write awaits before it is issued: the current run's admission (resolved outside a speculative run). */
export async function admitted(): Promise<void> {
  const scope = als.getStore();
  if (!scope?.gate) return RESOLVED;
  await scope.gate;
  if (scope.abandoned) throw new RunAbandoned();
}

/**
 * Runs the handler speculatively under `gate`. Resolves to the run's outcome (never rejects)
 * and whether it read what only admission knows (`missed`: run it again after admission).
 */
export async function speculate<T>(gate: Promise<void>, run: () => Promise<T>): Promise<{ outcome: { value: T } | { error: unknown }; missed: boolean }> {
  const scope: Scope = { gate, abandoned: false, missed: false };
  gate.catch(() => undefined); // a failed admission is answered by the caller, not here
  const outcome = await als.run(scope, () => run().then((value) => ({ value }), (error: unknown) => ({ error })));
  return { outcome, missed: scope.missed };
}

/** The run read what admission decides: it is abandoned (none of its writes lands) and runs again after admission. */
function markMissed(): never {
  const scope = als.getStore();
  if (scope) {
    scope.missed = true;
    scope.abandoned = true;
  }
  throw new NotAdmittedYet();
}

/**
 * The principal of a speculative run: the credential's facts at once, the account (and so
 * `operator`) once its read returned; before that, reading them ends the speculation.
 */
export function speculativePrincipal(
  facts: Pick<Principal, 'kind' | 'tenantId' | 'id' | 'user' | 'scopes' | 'client'>,
  tenantRead: Promise<Tenant | undefined>,
  operatorScope: string,
): Principal {
  let tenant: Tenant | undefined;
  tenantRead.then(
    (t) => {
      if (t?.status === 'active') tenant = t;
    },
    () => undefined,
  );
  return {
    ...facts,
    get tenant(): Tenant {
      return tenant ?? markMissed();
    },
    get operator(): boolean {
      if (!facts.scopes.includes(operatorScope)) return false;
      return (tenant ?? markMissed()).operator;
    },
  };
}

/** DynamoDB operations that change the table: each awaits admitted() in a speculative run. */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand', 'ExecuteStatementCommand', 'ExecuteTransactionCommand', 'BatchExecuteStatementCommand']);

const guarded = new WeakSet<object>();

/** Makes every write of `client` wait for the current run's admission (once per client). */
export function guardWrites(client: DynamoDBDocumentClient): void {
  if (guarded.has(client)) return;
  guarded.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (WRITES.has(String(context.commandName))) await admitted();
      return next(args);
    },
    { step: 'initialize', name: 'admissionGate', priority: 'high' },
  );
}

// every client of the table, the function's own and each tenant's, gates its writes
onDocumentClient(guardWrites);
