import { describe, expect, it } from "vitest";
import { readAhead } from "./read-ahead.js";

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

/** A source that records how many of its items were read, and whether it was returned. */
function counted(n: number, failAt = -1) {
  const state = { read: 0, returned: false, concurrentReads: 0, maxConcurrentReads: 0 };
  const source: AsyncIterable<number> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        async next() {
          state.concurrentReads++;
          state.maxConcurrentReads = Math.max(state.maxConcurrentReads, state.concurrentReads);
          await new Promise((resolve) => setImmediate(resolve));
          state.concurrentReads--;
          if (i === failAt) throw new Error(`source failed at ${i}`);
          if (i >= n) return { done: true, value: undefined };
          state.read++;
          return { done: false, value: i++ };
        },
        async return() {
          state.returned = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { source, state };
}

/** A promise with its resolve, to hold work until the test lets it go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("readAhead", () => {
  it("keeps the source's order whatever order the work finishes in", async () => {
    const { source } = counted(20);
    // Early items take longest: without ordering they would come last.
    const work = (i: number) => new Promise<number>((resolve) => setTimeout(() => resolve(i * 10), 20 - i));
    expect(await collect(readAhead(source, work, 4))).toEqual([...Array(20).keys()].map((i) => i * 10));
  });

  it("works on the next items while the consumer holds one, never more than depth ahead", async () => {
    const { source, state } = counted(100);
    const started: number[] = [];
    const results = readAhead(
      source,
      async (i) => {
        started.push(i);
        return i;
      },
      3,
    );
    expect((await results.next()).value).toBe(0);
    // While the consumer holds item 0, items 1 to 3 are read and worked on, and no more.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual([0, 1, 2, 3]);
    expect(state.read).toBe(4);
    await results.return(undefined);
    expect(state.maxConcurrentReads).toBe(1);
  });

  it("runs the work of several items at once (the pipeline)", async () => {
    const { source } = counted(6);
    let running = 0;
    let most = 0;
    const work = async (i: number) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running--;
      return i;
    };
    expect(await collect(readAhead(source, work, 3))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(3);
  });

  it("throws a failure of the work when its item's turn comes, after the items before it", async () => {
    const { source } = counted(10);
    const seen: number[] = [];
    const failing = readAhead(
      source,
      async (i) => {
        if (i === 4) throw new Error("work failed at 4");
        return i;
      },
      3,
    );
    await expect(
      (async () => {
        for await (const i of failing) seen.push(i);
      })(),
    ).rejects.toThrow("work failed at 4");
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it("throws a failure of the source in order", async () => {
    const { source } = counted(10, 5);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const i of readAhead(source, async (i) => i, 2)) seen.push(i);
      })(),
    ).rejects.toThrow("source failed at 5");
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it("returns the source when the consumer stops early, and a failure started ahead is no unhandled rejection", async () => {
    const { source, state } = counted(100);
    const held = gate();
    const results = readAhead(
      source,
      async (i) => {
        if (i === 1) {
          await held.opened;
          throw new Error("dropped with the rest");
        }
        return i;
      },
      2,
    );
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      for await (const i of results) {
        expect(i).toBe(0);
        break;
      }
      held.open();
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(state.returned).toBe(true);
    expect(unhandled).toEqual([]);
  });

  it("ends at once on an empty source and refuses a depth below one", async () => {
    expect(await collect(readAhead(counted(0).source, async (i) => i, 2))).toEqual([]);
    await expect(readAhead(counted(1).source, async (i) => i, 0).next()).rejects.toThrow(RangeError);
  });
});
