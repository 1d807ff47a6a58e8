/**
 * A service's shutdown steps, run last-added first (what was opened last closes first).
 * start() adds a step for each resource it opens; a failed start-up closes what it had.
 */
export class Closers {
  private readonly steps: (() => Promise<void> | void)[] = [];

  add(step: () => Promise<void> | void): void {
    this.steps.unshift(step);
  }

  /** Runs every step once, in order; a second call does nothing. */
  async close(): Promise<void> {
    for (const step of this.steps.splice(0)) await step();
  }
}
