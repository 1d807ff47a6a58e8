import { sleep } from "@herald/runtime";

/**
 * A counting semaphore: at most `size` holders at once, waiters served in order. The
 * queue is an array read from a moving head (thousands of sends wait at once: shifting
 * the array would move all of them on every release).
 */
export class Limiter {
  private active = 0;
  private waiters: (() => void)[] = [];
  private head = 0;

  constructor(readonly size: number) {
    if (size < 1) throw new Error("limiter size must be at least 1");
  }

  get available(): number {
    return this.size - this.active;
  }

  /** Takes a place if one is free right now (no promise, no microtask): true when taken. */
  tryAcquire(): boolean {
    if (this.active >= this.size) return false;
    this.active++;
    return true;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    if (this.head < this.waiters.length) {
      const next = this.waiters[this.head]!;
      this.waiters[this.head++] = undefined as unknown as () => void;
      if (this.head === this.waiters.length) {
        this.waiters = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.waiters.length) {
        this.waiters = this.waiters.slice(this.head);
        this.head = 0;
      }
      next();
    } else this.active--;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Resolves when nobody holds the limiter. */
  async idle(pollMs = 50): Promise<void> {
    while (this.active > 0) await sleep(pollMs);
  }
}
