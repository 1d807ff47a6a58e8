import { describe, expect, it } from "vitest";
import type { SendCapacity } from "./http2-pool.js";
import { BUSY_LOOP, IDLE_LOOP, nextTarget, QUEUED_SENDS, SendSlots } from "./send-slots.js";

/** Connections whose streams the test sets, and the pool's word on each change. */
function fakeCapacity(streams = 0) {
  let listener: () => void = () => undefined;
  const capacity: SendCapacity = {
    streamCapacity: () => streams,
    watchCapacity: (l) => void (listener = l),
  };
  return {
    capacity,
    set(n: number) {
      streams = n;
      listener();
    },
  };
}

describe("nextTarget", () => {
  it("doubles only while every slot was taken and the event loop had time, within the ceiling", () => {
    expect(nextTarget(256, 2_256, true, 0.3)).toBe(512);
    expect(nextTarget(2_048, 2_256, true, 0.3)).toBe(2_256);
    // The loop busy (a provider answering at once): more in flight would only wait in it;
    // fewer, down to the margin, will do.
    expect(nextTarget(256, 2_256, true, IDLE_LOOP)).toBe(256);
    expect(nextTarget(2_000, 2_256, true, BUSY_LOOP)).toBe(1_600);
    expect(nextTarget(300, 2_256, true, 1)).toBe(QUEUED_SENDS);
    // Demand below the slots: no reason to grow.
    expect(nextTarget(256, 2_256, false, 0.1)).toBe(256);
    // A lowered ceiling (fewer streams) holds at once.
    expect(nextTarget(2_048, 259, false, 0.1)).toBe(259);
  });
});

describe("SendSlots", () => {
  it("grows toward the connections' streams while saturated, follows a lowered ceiling at once, within the cap", async () => {
    const c = fakeCapacity();
    let utilization = 0.2;
    const slots = new SendSlots(10_000, c.capacity, () => utilization, 3_600_000);
    expect(slots.size).toBe(QUEUED_SENDS);
    c.set(2_000);
    expect(slots.ceiling).toBe(2_000 + QUEUED_SENDS);
    // All slots taken and one more send waiting: saturated, so each tick doubles.
    const held = async (n: number) => {
      while (slots.holders < n) await slots.acquire();
    };
    await held(QUEUED_SENDS);
    const waiting = slots.acquire();
    slots.tick();
    expect(slots.size).toBe(512);
    await waiting;
    // Not saturated since: no growth.
    slots.tick();
    expect(slots.size).toBe(512);
    for (const expected of [1_024, 2_048, 2_256]) {
      await held(slots.size);
      const more = slots.acquire();
      slots.tick();
      expect(slots.size).toBe(expected);
      await more;
    }
    // A loop with little to spare stops the growth; a busy one shrinks the slots.
    utilization = 0.9;
    c.set(3_000);
    await held(slots.size);
    const busy = slots.acquire();
    slots.tick();
    expect(slots.size).toBe(2_256);
    utilization = 1;
    slots.tick();
    expect(slots.size).toBe(1_804);
    c.set(2_000);
    // A peer lowering its SETTINGS to 1 stream on 4 connections: the slots follow now, and
    // nobody gets one until enough holders have left.
    c.set(4);
    expect(slots.size).toBe(4 + QUEUED_SENDS);
    expect(slots.available).toBe(0);
    while (slots.holders > 0) slots.release();
    await busy;
    slots.stop();

    const capped = new SendSlots(100, c.capacity, () => 0, 3_600_000);
    c.set(5_000);
    expect(capped.size).toBe(100);
    expect(capped.ceiling).toBe(100);
    capped.stop();
  });
});
