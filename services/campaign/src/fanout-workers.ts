import { randomUUID } from "node:crypto";
import type { Logger } from "@herald/runtime";
import type { FanoutJob } from "./fanout-store.js";

export interface FanoutWorkersDeps {
  claim(leaseToken: string): Promise<FanoutJob | undefined>;
  run(job: FanoutJob, shutdown: AbortSignal): Promise<void>;
  /** Campaigns fanned out at once by this replica. */
  concurrency: number;
  /** How often an idle worker looks for work (queued campaigns, expired leases). */
  pollMs: number;
  log: Logger;
}

/**
 * A fixed number of loops, each claiming one campaign at a time and fanning it out.
 * Idle loops poll, and wake at once on nudge() (a campaign was queued here). stop()
 * lets each running fan-out finish the batch it is publishing, then hands it back.
 */
export class FanoutWorkers {
  private readonly shutdown = new AbortController();
  private readonly wakers = new Set<() => void>();
  private loops: Promise<void>[] = [];

  constructor(private readonly deps: FanoutWorkersDeps) {}

  start(): void {
    this.loops = Array.from({ length: this.deps.concurrency }, () => this.loop());
  }

  nudge(): void {
    for (const wake of this.wakers) wake();
  }

  async stop(): Promise<void> {
    this.shutdown.abort();
    this.nudge();
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    const { signal } = this.shutdown;
    while (!signal.aborted) {
      let job: FanoutJob | undefined;
      try {
        job = await this.deps.claim(randomUUID());
      } catch (err) {
        this.deps.log.warn({ err }, "fan-out claim failed");
      }
      if (job) await this.deps.run(job, signal);
      else await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      if (this.shutdown.signal.aborted) return resolve();
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, this.deps.pollMs);
      this.wakers.add(wake);
    });
  }
}
