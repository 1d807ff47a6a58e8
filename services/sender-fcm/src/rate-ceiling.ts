import { sleep } from "@herald/runtime";
import type { Logger } from "@herald/runtime";

/** A reservation answer: how many sends were granted, and when the current window ends. */
export interface Reservation {
  granted: number;
  windowEndsInMs: number;
}

/** Where the per-window counts live: Redis (shared by every replica) or this process. */
export interface BudgetStore {
  reserve(key: string, want: number, limit: number, windowMs: number): Promise<Reservation>;
}

/** Counts kept in this process only: the fallback while Redis is away. */
export class LocalBudgetStore implements BudgetStore {
  private readonly used = new Map<string, { window: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async reserve(key: string, want: number, limit: number, windowMs: number): Promise<Reservation> {
    const now = this.now();
    const window = Math.floor(now / windowMs);
    let slot = this.used.get(key);
    if (!slot || slot.window !== window) this.used.set(key, (slot = { window, count: 0 }));
    const granted = Math.max(0, Math.min(want, limit - slot.count));
    slot.count += granted;
    return { granted, windowEndsInMs: (window + 1) * windowMs - now };
  }
}

export interface RateCeilingOptions {
  perMinute: number;
  /** Length of a budget window; the per-minute ceiling is scaled to it. */
  windowMs: number;
  store: BudgetStore;
  log: Pick<Logger, "warn" | "info">;
  fallback?: BudgetStore;
  /** How long to use the fallback after the store failed before asking it again. */
  fallbackMs?: number;
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface AppBudget {
  /** Reserved in the store and not used yet; valid until `validUntil` (the window's end). */
  tokens: number;
  validUntil: number;
  /** The window is used up: no point asking again before this. */
  blockedUntil: number;
  refill?: Promise<void>;
}

/** Sends per window: the per-minute ceiling scaled to the window, at least one. */
export const windowLimit = (perMinute: number, windowMs: number): number =>
  Math.max(1, Math.floor((perMinute * windowMs) / 60_000));

/**
 * Sends reserved per store call: a twentieth of the window's budget, between 1 and 100.
 * Bigger chunks mean fewer Redis calls; what a replica reserved and did not use is lost
 * when the window ends, so chunks stay small against the budget.
 */
export const chunkSize = (limit: number): number => Math.min(100, Math.max(1, Math.floor(limit / 20)));

/**
 * A per-app send-rate ceiling shared by every sender replica: fixed windows counted in
 * the store, reserved in chunks so most sends never leave the process. A send that
 * finds the window used up waits for the next one; nothing is ever dropped. When the
 * store fails, each replica falls back to counting on its own (so N replicas may send
 * up to N times the ceiling) and says so in the log.
 */
export class RateCeiling {
  private readonly apps = new Map<string, AppBudget>();
  private readonly limit: number;
  private readonly chunk: number;
  private readonly fallback: BudgetStore;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private degradedUntil = 0;

  constructor(private readonly opts: RateCeilingOptions) {
    this.limit = windowLimit(opts.perMinute, opts.windowMs);
    this.chunk = chunkSize(this.limit);
    this.now = opts.now ?? Date.now;
    this.fallback = opts.fallback ?? new LocalBudgetStore(this.now);
    this.sleep = opts.sleep ?? sleep;
  }

  /** Resolves when `appId` may send one more message. */
  async acquire(appId: string, signal: AbortSignal): Promise<void> {
    const b = this.budget(appId);
    for (;;) {
      signal.throwIfAborted();
      const now = this.now();
      if (b.tokens > 0 && now < b.validUntil) {
        b.tokens--;
        return;
      }
      if (now < b.blockedUntil) {
        await this.sleep(b.blockedUntil - now, signal);
        continue;
      }
      b.refill ??= this.refill(appId, b).finally(() => (b.refill = undefined));
      await b.refill;
    }
  }

  private budget(appId: string): AppBudget {
    let b = this.apps.get(appId);
    if (!b) {
      // Apps come and go; drop budgets that hold nothing once the map grows large.
      if (this.apps.size >= 10_000) this.prune();
      this.apps.set(appId, (b = { tokens: 0, validUntil: 0, blockedUntil: 0 }));
    }
    return b;
  }

  private async refill(appId: string, b: AppBudget): Promise<void> {
    const started = this.now();
    const r = await this.reserve(appId);
    if (r.granted > 0) {
      b.tokens = r.granted;
      b.validUntil = started + r.windowEndsInMs;
    } else {
      b.tokens = 0;
      b.blockedUntil = started + r.windowEndsInMs;
    }
  }

  private async reserve(appId: string): Promise<Reservation> {
    const { windowMs } = this.opts;
    if (this.now() >= this.degradedUntil) {
      try {
        const r = await this.opts.store.reserve(appId, this.chunk, this.limit, windowMs);
        if (this.degradedUntil > 0) {
          this.degradedUntil = 0;
          this.opts.log.info("rate ceiling store answers again; the ceiling is shared across replicas");
        }
        return r;
      } catch (err) {
        if (this.degradedUntil === 0) {
          this.opts.log.warn(
            { err: (err as Error).message },
            "rate ceiling store unavailable; enforcing the ceiling per replica until it answers",
          );
        }
        this.degradedUntil = this.now() + (this.opts.fallbackMs ?? 5_000);
      }
    }
    return this.fallback.reserve(appId, this.chunk, this.limit, windowMs);
  }

  private prune(): void {
    const now = this.now();
    for (const [id, b] of this.apps) {
      if (!b.refill && (b.tokens === 0 || now >= b.validUntil) && now >= b.blockedUntil) this.apps.delete(id);
    }
  }
}
