import { AsyncLocalStorage } from 'node:async_hooks';
import { keyProvider } from '../crypto/envelope.js';
import type { KeyProvider } from '../crypto/provider.js';
import { db } from '../store/client.js';

/**
 * Per-request counters of dependency calls for POST /api/v1/diagnostics/trace: every DynamoDB
 * HTTP attempt (an SDK middleware in the deserialize step, so retries count) and every key
 * provider call (KMS GenerateDataKey/Decrypt, or the local keyring), attributed to the
 * running trace through AsyncLocalStorage. Installed once per process, by the trace only.
 */
export interface Calls {
  dynamodb: string[];
  keyProvider: string[];
  /** The enclosing measurement (a phase inside the total): a call counts in both. */
  readonly parent?: Calls;
}

function record(kind: 'dynamodb' | 'keyProvider', name: string): void {
  for (let c = current.getStore(); c; c = c.parent) c[kind].push(name);
}

const current = new AsyncLocalStorage<Calls>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      record('dynamodb', String(context.commandName).replace(/Command$/, ''));
      return next(args);
    },
    { step: 'deserialize', name: 'diagnosticsRoundTrips' },
  );
  const provider: KeyProvider = keyProvider();
  const wrap = <K extends 'generateDataKey' | 'decryptDataKey'>(name: K) => {
    const original = provider[name].bind(provider) as KeyProvider[K];
    (provider as { -readonly [P in K]: KeyProvider[K] })[name] = (async (...args: Parameters<KeyProvider[K]>) => {
      record('keyProvider', `${provider.name}:${name}`);
      return (original as (...a: Parameters<KeyProvider[K]>) => ReturnType<KeyProvider[K]>)(...args);
    }) as KeyProvider[K];
  };
  wrap('generateDataKey');
  wrap('decryptDataKey');
}

/** Runs `fn` with fresh counters; returns its result, the calls it made and its duration. */
export async function counted<T>(fn: () => Promise<T>): Promise<{ value: T; calls: Calls; ms: number }> {
  install();
  const parent = current.getStore();
  const calls: Calls = { dynamodb: [], keyProvider: [], ...(parent ? { parent } : {}) };
  const started = performance.now();
  const value = await current.run(calls, fn);
  return { value, calls, ms: Math.round((performance.now() - started) * 100) / 100 };
}
