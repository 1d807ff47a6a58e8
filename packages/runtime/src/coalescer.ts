/**
 * Turns many concurrent single calls into few batch calls (group commit): calls made while
 * `maxInFlight` batches are already running wait and leave together in the next batch, up
 * to `maxBatch` at a time. An idle coalescer sends at once (after the current I/O turn,
 * so that requests that arrived together go together), so a lone call waits for nothing.
 * Under load the batches grow by themselves, which is the point: one database statement
 * or one RPC instead of dozens of round trips, each costing syscalls and a commit.
 *
 * The queue is bounded: past `maxQueued` waiting calls, submit rejects at once
 * (backpressure instead of unbounded memory).
 */
export interface CoalescerOptions {
  maxBatch: number;
  maxInFlight: number;
  maxQueued?: number;
}

/** A batch's answer for one item: its value, or the error of that item alone. */
export type ItemResult<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

export class CoalescerFullError extends Error {
  constructor(maxQueued: number) {
    super(`more than ${maxQueued} calls are waiting for a batch`);
    this.name = "CoalescerFullError";
  }
}

export class Coalescer<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxQueued: number;

  /** `run` answers one result per item, in order; when it throws, every item of the batch fails. */
  constructor(
    private readonly run: (items: I[]) => Promise<ItemResult<O>[]>,
    private readonly opts: CoalescerOptions,
  ) {
    this.maxQueued = opts.maxQueued ?? opts.maxBatch * opts.maxInFlight * 16;
  }

  submit(item: I): Promise<O> {
    if (this.queue.length >= this.maxQueued) return Promise.reject(new CoalescerFullError(this.maxQueued));
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Calls waiting for a batch (not those in flight). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
        void this.flush(this.queue.splice(0, this.opts.maxBatch));
      }
    });
  }

  private async flush(batch: Waiting<I, O>[]): Promise<void> {
    this.inFlight++;
    try {
      const results = await this.run(batch.map((w) => w.item));
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
      }
      results.forEach((r, i) => {
        if (r.ok) batch[i]!.resolve(r.value);
        else batch[i]!.reject(r.error);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
