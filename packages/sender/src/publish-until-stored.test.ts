import { createLogger } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { publishUntilStored, storePolicy } from "./publish-until-stored.js";

const lines: string[] = [];
const log = createLogger("test", "warn", { write: (line: string) => void lines.push(line) });
/** How late a timer may fire on a loaded machine (seen: 1 ms over, during `npm test`). */
const TIMER_SLACK_MS = 50;
const quick = { maxAttempts: Number.POSITIVE_INFINITY, baseDelayMs: 10, maxDelayMs: 20, maxElapsedMs: 300 };

/** A publish that fails `failures` times with a timeout, then answers `answer`. */
function flaky(failures: number, answer = { duplicate: false }) {
  const calls: number[] = [];
  return {
    calls,
    publish: async () => {
      calls.push(Date.now());
      if (calls.length <= failures) throw new Error("timeout");
      return answer;
    },
  };
}

describe("publishUntilStored", () => {
  it("publishes again after failures until the stream answers, and says so", async () => {
    lines.length = 0;
    const p = flaky(3);
    const ack = await publishUntilStored(p.publish, {
      policy: quick,
      signal: new AbortController().signal,
      log,
      what: "outcome batch",
    });
    expect(ack).toEqual({ duplicate: false });
    expect(p.calls).toHaveLength(4);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toMatchObject({ attempt: 1, msg: "outcome batch not stored; publishing it again" });
  });

  it("gives up with the last error once the policy's time is spent", async () => {
    const p = flaky(Number.POSITIVE_INFINITY);
    const t0 = Date.now();
    await expect(
      publishUntilStored(p.publish, { policy: quick, signal: new AbortController().signal, log, what: "x" }),
    ).rejects.toThrow("timeout");
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(p.calls.length).toBeGreaterThan(3);
    // The last attempt was due within the policy's time; a timer may fire a little late.
    expect(p.calls.at(-1)! - p.calls[0]!).toBeLessThanOrEqual(quick.maxElapsedMs + TIMER_SLACK_MS);
  });

  it("stops waiting when its signal aborts", async () => {
    const p = flaky(Number.POSITIVE_INFINITY);
    const abort = new AbortController();
    const slow = { ...quick, baseDelayMs: 60_000, maxDelayMs: 60_000, maxElapsedMs: 600_000 };
    const pending = publishUntilStored(p.publish, { policy: slow, signal: abort.signal, log, what: "x" });
    setTimeout(() => abort.abort(), 20);
    await expect(pending).rejects.toThrow("timeout");
    expect(p.calls).toHaveLength(1);
  });

  it("retries for as long as a batch's ack wait, every 2 s at most", () => {
    expect(storePolicy(60_000)).toMatchObject({ baseDelayMs: 250, maxDelayMs: 2_000, maxElapsedMs: 60_000 });
  });
});
