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
}

const current = new AsyncLocalStorage<Calls>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      current.getStore()?.dynamodb.push(String(context.commandName ?? 'unknown').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'deserialize', name: 'diagnosticsRoundTrips' },
  );
  const provider: KeyProvider = keyProvider();
  const wrap = <K extends 'generateDataKey' | 'decryptDataKey'>(name: K) => {
    const original = provider[name].bind(provider) as KeyProvider[K];
    (provider as { -readonly [P in K]: KeyProvider[K] })[name] = (async (...args: Parameters<KeyProvider[K]>) => {
      current.getStore()?.keyProvider.push(`${provider.name}:${name}`);
      return (original as (...a: Parameters<KeyProvider[K]>) => ReturnType<KeyProvider[K]>)(...args);
    }) as KeyProvider[K];
  };
  wrap('generateDataKey');
  wrap('decryptDataKey');
}

/** Runs `fn` with fresh counters; returns its result, the calls it made and its duration. */
export async function counted<T>(fn: () => Promise<T>): Promise<{ value: T; calls: Calls; ms: number }> {
  install();
  const calls: Calls = { dynamodb: [], keyProvider: [] };
  const started = performance.now();
  const value = await current.run(calls, fn);
  return { value, calls, ms: Math.round((performance.now() - started) * 100) / 100 };
}
