/**
 * A small in-process cache with per-entry expiry and a hard size bound: when full, the
 * oldest entry goes. Enough for the gateway's short-lived lookups (API keys, apps), where
 * the backing service stays the source of truth.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * The cached value, or the one `load` gives, kept for `ttlOf(value)` ms. Concurrent misses
   * of one key share a single load, so an entry expiring under load costs one lookup, not
   * one per waiting request.
   */
  getOrLoad(key: string, load: () => Promise<V>, ttlOf: (value: V) => number): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = this.loading.get(key);
    if (!pending) {
      pending = load().then(
        (value) => {
          this.loading.delete(key);
          this.set(key, value, ttlOf(value));
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

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0 || this.maxEntries <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
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

  get size(): number {
    return this.entries.size;
  }
}
