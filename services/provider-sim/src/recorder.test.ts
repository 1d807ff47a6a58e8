import { describe, expect, it, vi } from "vitest";
import { type NewDelivery, Recorder } from "./recorder.js";

const apns = (token: string, n: number): NewDelivery => ({
  id: `d-${n}`,
  platform: "apns",
  target: token,
  device_token: token,
  apns_id: `a-${n}`,
  topic: "com.example.app",
  push_type: "alert",
  priority: 10,
  expiration: null,
  collapse_id: null,
  payload: `{"n":${n}}`,
});

const fcm = (token: string, n: number): NewDelivery => ({
  id: `f-${n}`,
  platform: "fcm",
  target: token,
  project: "p",
  name: `projects/p/messages/${n}`,
  message: { token },
  payload: `{"token":"${token}"}`,
});

describe("Recorder", () => {
  it("keeps each delivery with its seq and arrival, added when it is read", () => {
    vi.useFakeTimers({ now: Date.parse("2026-11-27T10:00:00.000Z") });
    try {
      const recorder = new Recorder(100);
      const handed = apns("t1", 1);
      expect(recorder.record(handed)).toBe(handed);
      vi.advanceTimersByTime(1500);
      recorder.record(fcm("r1", 2));
      const [first, second] = recorder.query({ limit: 10 });
      expect(first).toEqual({ ...apns("t1", 1), seq: 1, received_at: "2026-11-27T10:00:00.000Z" });
      expect(second).toMatchObject({ seq: 2, received_at: "2026-11-27T10:00:01.500Z", platform: "fcm" });
      expect(recorder.query({ limit: 10 })).toEqual([first, second]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("pages forward by seq and filters by platform and target", () => {
    const recorder = new Recorder(100);
    for (let n = 1; n <= 6; n++) recorder.record(n % 2 ? apns(`t${n % 3}`, n) : fcm(`r${n}`, n));
    expect(recorder.query({ limit: 2 }).map((d) => d.seq)).toEqual([1, 2]);
    expect(recorder.query({ after: 2, limit: 2 }).map((d) => d.seq)).toEqual([3, 4]);
    expect(recorder.query({ after: 6, limit: 10 })).toEqual([]);
    expect(recorder.query({ after: 1_000_000, limit: 10 })).toEqual([]);
    expect(recorder.query({ platform: "fcm", limit: 10 }).map((d) => d.seq)).toEqual([2, 4, 6]);
    expect(recorder.query({ platform: "apns", target: "t1", limit: 10 }).map((d) => d.seq)).toEqual([1]);
    expect(recorder.query({ after: 3, platform: "apns", limit: 10 }).map((d) => d.id)).toEqual(["d-5"]);
  });

  it("drops the oldest records past its cap, keeps seqs and counts exact", () => {
    const recorder = new Recorder(10);
    for (let n = 1; n <= 25; n++) recorder.record(apns(`t${n % 5}`, n));
    const kept = recorder.query({ limit: 100 });
    expect(kept.length).toBeLessThanOrEqual(10);
    expect(kept.at(-1)).toMatchObject({ seq: 25, id: "d-25" });
    // Consecutive, each record with its own seq.
    for (const d of kept) expect(d.id).toBe(`d-${d.seq}`);
    expect(kept.map((d) => d.seq)).toEqual(kept.map((_, i) => kept[0]!.seq + i));
    // Paging from before the oldest kept starts at the oldest kept.
    expect(recorder.query({ after: 3, limit: 1 })[0]!.seq).toBe(kept[0]!.seq);
    expect(recorder.count("apns")).toEqual({ total: 25, by_target: { t0: 5, t1: 5, t2: 5, t3: 5, t4: 5 } });
  });

  it("forgets records and counts on clear, and numbers on from where it was", () => {
    const recorder = new Recorder(10);
    for (let n = 1; n <= 3; n++) recorder.record(apns("t", n));
    recorder.clear();
    expect(recorder.query({ limit: 10 })).toEqual([]);
    expect(recorder.count()).toEqual({ total: 0, by_target: {} });
    recorder.record(fcm("r", 4));
    expect(recorder.query({ limit: 10 })[0]!.seq).toBe(4);
    expect(recorder.query({ after: 0, limit: 10 }).map((d) => d.seq)).toEqual([4]);
    expect(recorder.query({ after: 3, limit: 10 }).map((d) => d.seq)).toEqual([4]);
  });
});
