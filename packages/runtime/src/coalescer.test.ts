import { describe, expect, it } from "vitest";
import { Coalescer, CoalescerFullError, type ItemResult } from "./coalescer.js";

const ok = <O>(value: O): ItemResult<O> => ({ ok: true, value });

/** A batch function whose calls stay open until released, recording each batch. */
function gated() {
  const batches: number[][] = [];
  const open: (() => void)[] = [];
  const run = (items: number[]) => {
    batches.push(items);
    return new Promise<ItemResult<number>[]>((resolve) => open.push(() => resolve(items.map((i) => ok(i * 10)))));
  };
  const releaseAll = () => {
    for (const r of open.splice(0)) r();
  };
  return { batches, run, releaseAll };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("Coalescer", () => {
  it("sends calls made in one turn as one batch, and a lone call at once", async () => {
    const g = gated();
    const c = new Coalescer(g.run, { maxBatch: 100, maxInFlight: 2 });
    const first = [1, 2, 3].map((i) => c.submit(i));
    await turn();
    expect(g.batches).toEqual([[1, 2, 3]]);
    g.releaseAll();
    expect(await Promise.all(first)).toEqual([10, 20, 30]);
    const lone = c.submit(4);
    await turn();
    expect(g.batches).toEqual([[1, 2, 3], [4]]);
    g.releaseAll();
    expect(await lone).toBe(40);
  });

  it("keeps at most maxInFlight batches running; the rest waits and leaves together, maxBatch at a time", async () => {
    const g = gated();
    const c = new Coalescer(g.run, { maxBatch: 3, maxInFlight: 1 });
    const all = [c.submit(1)];
    await turn();
    for (let i = 2; i <= 8; i++) all.push(c.submit(i));
    await turn();
    expect(g.batches).toEqual([[1]]);
    expect(c.waiting).toBe(7);
    g.releaseAll();
    await all[0];
    await turn();
    expect(g.batches).toEqual([[1], [2, 3, 4]]);
    g.releaseAll();
    await all[3];
    await turn();
    g.releaseAll();
    await all[6];
    await turn();
    g.releaseAll();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50, 60, 70, 80]);
    expect(g.batches).toEqual([[1], [2, 3, 4], [5, 6, 7], [8]]);
  });

  it("fails one item alone when the batch says so, and the whole batch when it throws", async () => {
    const c = new Coalescer<number, number>(
      async (items) => items.map((i) => (i === 2 ? { ok: false, error: new Error("bad two") } : ok(i))),
      { maxBatch: 10, maxInFlight: 1 },
    );
    const [a, b] = [c.submit(1), c.submit(2)];
    expect(await a).toBe(1);
    await expect(b).rejects.toThrow("bad two");

    const broken = new Coalescer<number, number>(
      async () => {
        throw new Error("database down");
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const calls = [broken.submit(1), broken.submit(2)];
    for (const call of calls) await expect(call).rejects.toThrow("database down");
    // and it goes on working afterwards
    const wrongCount = new Coalescer<number, number>(async () => [], { maxBatch: 10, maxInFlight: 1 });
    await expect(wrongCount.submit(1)).rejects.toThrow("answered 0 results");
  });

  it("rejects at once past maxQueued waiting calls", async () => {
    const g = gated();
    const c = new Coalescer(g.run, { maxBatch: 1, maxInFlight: 1, maxQueued: 2 });
    const first = c.submit(1);
    await turn();
    const queued = [c.submit(2), c.submit(3)];
    await expect(c.submit(4)).rejects.toBeInstanceOf(CoalescerFullError);
    for (let i = 0; i < 3; i++) {
      g.releaseAll();
      await turn();
      await turn();
    }
    expect(await Promise.all([first, ...queued])).toEqual([10, 20, 30]);
  });
});
