import { describe, expect, it } from "vitest";
import { readyBatches } from "./ready-batches.js";

async function collect<T>(source: AsyncIterable<T>, max: number): Promise<T[][]> {
  const batches: T[][] = [];
  for await (const batch of readyBatches(source, max)) batches.push(batch);
  return batches;
}

async function* queued(n: number) {
  for (let i = 0; i < n; i++) yield i;
}

async function* trickle(n: number) {
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    yield i;
  }
}

describe("readyBatches", () => {
  it("takes what is queued, up to the maximum, in order", async () => {
    const batches = await collect(queued(1_234), 500);
    expect(batches.map((b) => b.length)).toEqual([500, 500, 234]);
    expect(batches.flat()).toEqual([...Array(1_234).keys()]);
  });

  it("does not wait for more when nothing else has arrived", async () => {
    expect(await collect(trickle(3), 500)).toEqual([[0], [1], [2]]);
  });

  it("ends with the source", async () => {
    expect(await collect(queued(0), 10)).toEqual([]);
  });
});
