/** A counting semaphore: at most `size` holders at once, waiters served in order. */
export class Limiter {
  private active = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly size: number) {
    if (size < 1) throw new Error("limiter size must be at least 1");
  }

  get available(): number {
    return this.size - this.active;
  }

  async acquire(): Promise<void> {
    if (this.active < this.size) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
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
    while (this.active > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
}
