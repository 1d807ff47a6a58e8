import type { Logger } from "@herald/runtime";
import type { CampaignStore } from "./campaign-store.js";

export interface SchedulerDeps {
  store: Pick<CampaignStore, "promoteDue" | "purgeExpiredIdempotencyKeys">;
  intervalMs: number;
  log: Logger;
  /** Called when campaigns became due, so fan-out starts without waiting for its poll. */
  onQueued: () => void;
}

/** Due campaigns per statement; a full batch is followed at once by the next. */
const PROMOTE_BATCH = 100;

/**
 * Every interval, moves scheduled campaigns whose time has come to queued and purges
 * expired idempotency keys. All state is in Postgres and the claim skips locked rows,
 * so any number of replicas may run it, and a restart loses nothing.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        this.schedule(this.deps.intervalMs);
      });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const { store, log } = this.deps;
    try {
      let queued = 0;
      for (let n = PROMOTE_BATCH; n === PROMOTE_BATCH && !this.stopped; ) {
        n = await store.promoteDue(PROMOTE_BATCH);
        queued += n;
      }
      if (queued > 0) {
        log.info({ queued }, "scheduled campaigns queued");
        this.deps.onQueued();
      }
      const purged = await store.purgeExpiredIdempotencyKeys();
      if (purged > 0) log.debug({ purged }, "expired idempotency keys purged");
    } catch (err) {
      log.warn({ err }, "scheduler tick failed; retrying next interval");
    }
  }
}
