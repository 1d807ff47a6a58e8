import { afterAll, beforeAll } from "vitest";

/**
 * The one way a test file (or a describe block) holds something it starts before its tests
 * and stops after them: `start` runs in beforeAll, `stop` in afterAll when start got that far.
 * The answer stands for what `start` resolved to (its properties are read through to it), so
 * the tests can name it at module level; reading it before beforeAll has run throws. Methods
 * are called with the stand-in as `this`: give `start` a plain object (no #private fields).
 * `timeoutMs` bounds the start and the stop (the project's hook timeout when unset).
 */
export function suiteFixture<T extends object>(
  start: () => Promise<T>,
  stop: (started: T) => Promise<void>,
  timeoutMs?: number,
): T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, timeoutMs);
  afterAll(async () => {
    if (started) await stop(started);
  }, timeoutMs);
  return new Proxy({} as T, {
    get(_target, prop) {
      if (started) return Reflect.get(started, prop);
      // Not a thenable, and inspectable, before the start.
      if (prop === "then" || typeof prop === "symbol") return undefined;
      throw new Error(`read .${prop} of a suite fixture before its beforeAll started it`);
    },
    has: (_target, prop) => started !== undefined && Reflect.has(started, prop),
  });
}
