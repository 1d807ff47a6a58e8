export interface BoundedCacheOptions<V> {
  /** The most entries kept; storing one more evicts the one stored longest ago. 0: nothing is kept. */
  maxEntries: number;
  /**
   * How long a stored value stays fresh, in ms from when it is stored: one number, or one
   * per value, e.g. shorter for a negative answer, or a token's own expiry minus a margin
   * (`(t) => t.expiresAt - margin - now()`). 0 or less: the value is not stored.
   */
  ttlMs: number | ((value: V) => number);
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * The one in-process cache of the services: string keys, a hard size bound with
 * insertion-order eviction (when full, the entry stored longest ago goes; storing a key
 * again makes it the newest, reading it does not), expiry per entry, and single-flight
 * loading: concurrent `get(key, load)` calls for a missing key share one `load`, so an
 * entry expiring under load costs one lookup, not one per waiting caller. A failed load
 * stores nothing (and leaves what was stored as it was): the next call loads again.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Promise<V>>();
  private readonly now: () => number;

  constructor(private readonly opts: BoundedCacheOptions<V>) {
    this.now = opts.now ?? Date.now;
  }

  /** The fresh value of key, without loading; an expired entry is dropped. */
  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** The fresh value of key, else the one `load` gives (joining a load of key already running). */
  get(key: string, load: () => Promise<V>): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return Promise.resolve(entry.value);
    return this.refresh(key, load);
  }

  /**
   * Loads key anew even when a fresh value is stored (e.g. a token due for renewal that
   * stays usable should the renewal fail), joining a load of key already running.
   */
  refresh(key: string, load: () => Promise<V>): Promise<V> {
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load().then(
        (value) => {
          this.loading.delete(key);
          this.set(key, value);
          return value;
        },
        (err: unknown) => {
          this.loading.delete(key);
          throw err;
        },
      );
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Stores value for ttlMs (default: the cache's TTL for it). */
  set(key: string, value: V, ttlMs?: number): void {
    const ttl = ttlMs ?? (typeof this.opts.ttlMs === "number" ? this.opts.ttlMs : this.opts.ttlMs(value));
    if (!(ttl > 0) || this.opts.maxEntries <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttl });
    while (this.entries.size > this.opts.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches, e.g. all cache lines of a revoked key. */
  deleteWhere(match: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (match(entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries stored, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }
}
