import { type Logger, sleep } from "@herald/runtime";
import type { ReceiptStore } from "./receipt-store.js";

/** Rows deleted per statement: small, so a prune never holds many locks or a long transaction. */
const PRUNE_BATCH = 1_000;
const INTERVAL_MS = 10 * 60_000;
/** A breath between statements, so pruning a large backlog leaves room for ingestion. */
const PAUSE_MS = 50;

/**
 * Deletes per-device receipts (receipt batches) and engagement rows older than the
 * retention period, in small batches, every ten minutes and at start-up. Campaign stats
 * are counters on the campaign row and stay. Every replica runs it; one at a time prunes
 * (ReceiptStore.prune's advisory lock), the others end their run when they find it taken.
 */
export class ReceiptRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly opts: { store: ReceiptStore; days: number; log: Logger; now?: () => Date; intervalMs?: number },
  ) {}

  start(): void {
    const tick = () => {
      this.running ??= this.runOnce()
        .catch((err: unknown) => this.opts.log.warn({ err }, "receipt pruning failed; will retry"))
        .finally(() => (this.running = undefined));
    };
    tick();
    this.timer = setInterval(tick, this.opts.intervalMs ?? INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
  }

  /** Prunes everything older than the period; answers what was deleted. */
  async runOnce(): Promise<{ batches: number; engagements: number }> {
    const now = this.opts.now?.() ?? new Date();
    const before = new Date(now.getTime() - this.opts.days * 86_400_000);
    const total = { batches: 0, engagements: 0 };
    while (!this.stopping.signal.aborted) {
      const pruned = await this.opts.store.prune(before, PRUNE_BATCH);
      // Another replica is pruning: its run covers the same rows.
      if (!pruned) break;
      const { batches, engagements } = pruned;
      total.batches += batches;
      total.engagements += engagements;
      if (batches < PRUNE_BATCH && engagements < PRUNE_BATCH) break;
      await sleep(PAUSE_MS, this.stopping.signal).catch(() => undefined);
    }
    if (total.batches + total.engagements > 0) this.opts.log.info(total, "pruned receipts past their retention");
    return total;
  }
}
