/**
 * The one per-container cache of data keys a KMS call produced (plaintext in this process's
 * memory), so a warm container makes no KMS call per request. Used by the envelope's tenant
 * data keys (lib/crypto/envelope.ts), the audit queue's MAC keys (lib/audit/queue-key.ts) and
 * the shared tenant sessions' sealing keys (lib/authn/tenant-sessions.ts). What it guarantees:
 *
 * - **expiry:** a key is served for `ttlMs` from the moment its call answered, then fetched
 *   again (`Infinity`: until evicted);
 * - **bound:** at most `max` keys; past it the oldest goes first;
 * - **eviction on failure:** a failed call is not kept, the next caller tries again;
 * - **in-flight dedupe:** callers asking for a key while its call is in flight share that one
 *   call. A caller whose shared call failed (the failure may be another request's own: a
 *   refused admission, lib/core/admission.ts) tries once with its own call.
 *
 * A cache does not decide who may use a key: callers check their scope before asking
 * (lib/tenancy/scope.ts), as each did before this cache was shared.
 */
interface KeyCacheOptions {
  /** Keys held at most. */
  readonly max: number;
  /** How long a key is served after its call answered, read at each call (configuration may change in tests). */
  readonly ttlMs: number | (() => number);
  /** The clock (tests). */
  readonly now?: () => number;
}

interface Entry<V> {
  readonly value: Promise<V>;
  /** Infinity while the call is in flight. */
  expires: number;
}

export class KeyCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  readonly #max: number;
  readonly #ttl: () => number;
  readonly #now: () => number;

  constructor(options: KeyCacheOptions) {
    const { ttlMs } = options;
    this.#max = options.max;
    this.#ttl = typeof ttlMs === 'function' ? ttlMs : () => ttlMs;
    this.#now = options.now ?? (() => Date.now()); // read at each call: a test's fake clock replaces Date.now
  }

  /** The key held for `id` while it lasts, else the one `make` fetches (one call for concurrent callers). */
  async get(id: string, make: () => Promise<V>): Promise<V> {
    const hit = this.#entries.get(id);
    if (hit) {
      if (hit.expires > this.#now()) {
        try {
          return await hit.value;
        } catch {
          // the call this one joined failed: it is no longer held (below); try once with a call of its own
        }
      } else if (this.#entries.get(id) === hit) this.#entries.delete(id);
    }
    return this.#fetch(id, make);
  }

  #fetch(id: string, make: () => Promise<V>): Promise<V> {
    const entry: Entry<V> = { value: make(), expires: Number.POSITIVE_INFINITY };
    if (this.#entries.size >= this.#max && !this.#entries.has(id)) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.delete(id); // a new entry goes last in the eviction order
    this.#entries.set(id, entry);
    entry.value.then(
      () => {
        entry.expires = this.#now() + this.#ttl();
      },
      () => {
        if (this.#entries.get(id) === entry) this.#entries.delete(id);
      },
    );
    return entry.value;
  }

  /** Keys held, in flight included. */
  get size(): number {
    return this.#entries.size;
  }

  /** Forgets every key (tests). */
  clear(): void {
    this.#entries.clear();
  }
}
