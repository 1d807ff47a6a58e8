import { sleep } from "@herald/runtime";

/**
 * A counting semaphore: at most `size` holders at once, waiters served in order. The
 * queue is an array read from a moving head (thousands of sends wait at once: shifting
 * the array would move all of them on every release). Its size may change while it is
 * held (resize): a larger one lets waiters in at once, a smaller one lets nobody in until
 * enough holders left.
 */
export class Limiter {
  private active = 0;
  private waiters: (() => void)[] = [];
  private head = 0;
  private current: number;
  /** Whether a caller had to wait since takeSaturated() last asked. */
  private saturated = false;

  constructor(size: number) {
    if (size < 1) throw new Error("limiter size must be at least 1");
    this.current = size;
  }

  get size(): number {
    return this.current;
  }

  /** Holders now. */
  get holders(): number {
    return this.active;
  }

  /** A new size (at least 1): waiters take the places it adds at once. */
  resize(size: number): void {
    this.current = Math.max(1, Math.floor(size));
    while (this.active < this.current && this.head < this.waiters.length) {
      this.active++;
      this.wakeNext();
    }
  }

  get available(): number {
    return Math.max(0, this.current - this.active);
  }

  /** Takes a place if one is free right now (no promise, no microtask): true when taken. */
  tryAcquire(): boolean {
    if (this.active >= this.current) return false;
    this.active++;
    return true;
  }

  /** Whether every place was taken and a caller had to wait, since the last call. */
  takeSaturated(): boolean {
    const was = this.saturated || this.head < this.waiters.length;
    this.saturated = false;
    return was;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    this.saturated = true;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    // Past a smaller size, the place goes away instead of to the next waiter.
    if (this.head < this.waiters.length && this.active <= this.current) this.wakeNext();
    else this.active--;
  }

  /** Hands a place (already counted in `active`) to the oldest waiter. */
  private wakeNext(): void {
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
