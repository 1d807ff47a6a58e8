import { describe, expect, it } from "vitest";
import {
  type BudgetStore,
  chunkSize,
  LocalBudgetStore,
  RateCeiling,
  type RateCeilingOptions,
  windowLimit,
} from "./rate-ceiling.js";

/** A clock that only moves when a waiter sleeps: waits cost no real time and are exact. */
function fakeClock(start = 0) {
  const c = {
    now: start,
    slept: [] as number[],
    read: () => c.now,
    sleep: async (ms: number) => {
      c.slept.push(ms);
      c.now += ms;
    },
  };
  return c;
}

const quietLog = () => {
  const lines: string[] = [];
  return {
    lines,
    warn: (_o: unknown, m?: string) => void lines.push(`warn ${m}`),
    info: (m: unknown) => void lines.push(`info ${String(m)}`),
  };
};

/** A ceiling on the fake clock, with one-second windows and a quiet log unless `opts` says otherwise. */
const onClock = (
  clock: ReturnType<typeof fakeClock>,
  opts: Pick<RateCeilingOptions, "perMinute" | "store"> & Partial<RateCeilingOptions>,
) => new RateCeiling({ windowMs: 1_000, log: quietLog(), now: clock.read, sleep: clock.sleep, ...opts });

/** Wraps a store to count calls and optionally fail them. */
function counting(inner: BudgetStore) {
  const s = {
    calls: 0,
    failing: false,
    async reserve(...args: Parameters<BudgetStore["reserve"]>) {
      s.calls++;
      if (s.failing) throw new Error("ECONNREFUSED");
      return inner.reserve(...args);
    },
  };
  return s;
}

const signal = new AbortController().signal;

describe("ceiling arithmetic", () => {
  it("scales the per-minute ceiling to the window and reserves a twentieth of it, 1 to 100 at a time", () => {
    expect(windowLimit(600_000, 60_000)).toBe(600_000);
    expect(windowLimit(600_000, 1_000)).toBe(10_000);
    expect(windowLimit(600, 1_000)).toBe(10);
    expect(windowLimit(10, 1_000)).toBe(1);
    expect(chunkSize(600_000)).toBe(100);
    expect(chunkSize(600)).toBe(30);
    expect(chunkSize(10)).toBe(1);
  });
});

describe("RateCeiling", () => {
  it("never lets more than the window's budget through and waits for the next window", async () => {
    const clock = fakeClock(5_000);
    const store = counting(new LocalBudgetStore(clock.read));
    const ceiling = onClock(clock, { perMinute: 60_000, store });
    const perWindow = new Map<number, number>();
    for (let i = 0; i < 2_500; i++) {
      await ceiling.acquire("app", signal);
      const w = Math.floor(clock.now / 1_000);
      perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
    }
    expect([...perWindow.values()]).toEqual([1_000, 1_000, 500]);
    expect(clock.now).toBe(7_000);
    // 2,500 sends in chunks of 50, plus one refused reservation per exhausted window.
    expect(store.calls).toBe(52);
  });

  it("shares one budget between replicas", async () => {
    const clock = fakeClock(0);
    const shared = new LocalBudgetStore(clock.read);
    const make = () => onClock(clock, { perMinute: 600, store: shared });
    const [a, b] = [make(), make()];
    const windows: number[] = [];
    for (let i = 0; i < 25; i++) {
      await (i % 2 ? a : b).acquire("app", signal);
      windows.push(Math.floor(clock.now / 1_000));
    }
    expect(windows.filter((w) => w === 0)).toHaveLength(10);
    expect(windows.filter((w) => w === 1)).toHaveLength(10);
    expect(windows.filter((w) => w === 2)).toHaveLength(5);
  });

  it("keeps apps apart", async () => {
    const clock = fakeClock(0);
    const ceiling = onClock(clock, { perMinute: 600, store: new LocalBudgetStore(clock.read) });
    for (let i = 0; i < 10; i++) await ceiling.acquire("a", signal);
    for (let i = 0; i < 10; i++) await ceiling.acquire("b", signal);
    expect(clock.now).toBe(0);
  });

  it("does not carry reserved sends into the next window", async () => {
    const clock = fakeClock(0);
    const store = counting(new LocalBudgetStore(clock.read));
    const ceiling = onClock(clock, { perMinute: 60_000, store });
    await ceiling.acquire("app", signal); // reserves 50 in window 0
    clock.now = 1_000;
    await ceiling.acquire("app", signal);
    expect(store.calls).toBe(2);
  });

  it("falls back to a per-replica count while the store fails, says so once, and returns to it", async () => {
    const clock = fakeClock(0);
    const store = counting(new LocalBudgetStore(clock.read));
    const log = quietLog();
    const ceiling = onClock(clock, { perMinute: 600, store, log, fallbackMs: 5_000 });
    store.failing = true;
    for (let i = 0; i < 30; i++) await ceiling.acquire("app", signal);
    // Still at most the budget per window, counted locally; the store asked once per fallback period.
    expect(clock.now).toBe(2_000);
    expect(store.calls).toBe(1);
    clock.now = 5_000;
    for (let i = 0; i < 10; i++) await ceiling.acquire("app", signal);
    expect(store.calls).toBe(2);
    expect(log.lines).toEqual([
      "warn rate ceiling store unavailable; enforcing the ceiling per replica until it answers",
    ]);
    store.failing = false;
    clock.now = 10_000;
    await ceiling.acquire("app", signal);
    expect(log.lines.at(-1)).toBe("info rate ceiling store answers again; the ceiling is shared across replicas");
  });

  it("stops waiting when the batch is aborted", async () => {
    const clock = fakeClock(0);
    const ceiling = new RateCeiling({
      perMinute: 60,
      windowMs: 1_000,
      store: new LocalBudgetStore(clock.read),
      log: quietLog(),
      now: clock.read,
    });
    await ceiling.acquire("app", signal);
    const abort = new AbortController();
    const waiting = ceiling.acquire("app", abort.signal);
    abort.abort(new Error("shutting down"));
    await expect(waiting).rejects.toThrow("shutting down");
  });
});
