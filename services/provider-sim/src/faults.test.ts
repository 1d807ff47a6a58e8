import { describe, expect, it } from "vitest";
import { createPrng, Faults, parseFaultInput } from "./faults.js";

const kinds = (faults: Faults, n: number) => Array.from({ length: n }, () => faults.decide("webpush").action.kind);

describe("Faults", () => {
  it("makes no decision without a config", () => {
    expect(new Faults(1).decide("webpush")).toEqual({ latencyMs: 0, action: { kind: "none" }, goaway: false });
  });

  it("repeats the same decisions for the same seed", () => {
    const a = new Faults(42);
    const b = new Faults(42);
    a.set("webpush", { error_rate: 0.3, throttle_rate: 0.3, drop_rate: 0.1 });
    b.set("webpush", { error_rate: 0.3, throttle_rate: 0.3, drop_rate: 0.1 });
    const seqA = kinds(a, 200);
    expect(kinds(b, 200)).toEqual(seqA);
    expect(new Set(seqA)).toEqual(new Set(["none", "error", "throttle", "drop"]));
  });

  it("re-seeds on request, so a test gets the same faults whatever ran before", () => {
    const f = new Faults(7);
    f.set("webpush", { error_rate: 0.5, seed: 99 });
    const first = kinds(f, 50);
    f.set("webpush", { error_rate: 0.5, seed: 99 });
    expect(kinds(f, 50)).toEqual(first);
  });

  it("spreads a rate close to its value", () => {
    const f = new Faults(3);
    f.set("webpush", { error_rate: 0.2, error_status: 503 });
    const errors = kinds(f, 10_000).filter((k) => k === "error").length;
    expect(errors).toBeGreaterThan(1_800);
    expect(errors).toBeLessThan(2_200);
  });

  it("gives drop precedence over error over throttle, and carries status and Retry-After", () => {
    const f = new Faults(1);
    f.set("webpush", { drop_rate: 1, error_rate: 1, throttle_rate: 1 });
    expect(f.decide("webpush").action).toEqual({ kind: "drop" });
    f.set("webpush", { error_rate: 1, error_status: 503, throttle_rate: 1 });
    expect(f.decide("webpush").action).toEqual({ kind: "error", status: 503 });
    f.set("webpush", { throttle_rate: 1, retry_after_s: 7, latency_ms: 25 });
    expect(f.decide("webpush")).toEqual({ latencyMs: 25, action: { kind: "throttle", retryAfterS: 7 }, goaway: false });
  });

  it("draws GOAWAY only when goaway_rate is set, leaving other configurations' decisions unchanged", () => {
    const plain = new Faults(5);
    const withGoaway = new Faults(5);
    plain.set("apns", { error_rate: 0.5 });
    withGoaway.set("apns", { error_rate: 0.5, goaway_rate: 0 });
    const decisions = (f: Faults) => Array.from({ length: 50 }, () => f.decide("apns"));
    expect(decisions(withGoaway)).toEqual(decisions(plain));
    const f = new Faults(5);
    f.set("apns", { goaway_rate: 0.5 });
    const goaways = Array.from({ length: 1_000 }, () => f.decide("apns").goaway).filter(Boolean).length;
    expect(goaways).toBeGreaterThan(400);
    expect(goaways).toBeLessThan(600);
  });

  it("answers every request with a shutdown, then GOAWAY, while shutdown is set", () => {
    const f = new Faults(1);
    f.set("apns", { shutdown: true, error_rate: 1 });
    expect(f.decide("apns")).toEqual({ latencyMs: 0, action: { kind: "shutdown" }, goaway: true });
    f.set("apns", { shutdown: false });
    expect(f.decide("apns").action).toEqual({ kind: "none" });
  });

  it("applies `remaining` to exactly that many requests, then switches off", () => {
    const f = new Faults(1);
    f.set("webpush", { error_rate: 1, remaining: 3 });
    expect(kinds(f, 6)).toEqual(["error", "error", "error", "none", "none", "none"]);
    expect(f.get("webpush")).toBeUndefined();
  });
});

describe("parseFaultInput", () => {
  it("accepts the documented fields", () => {
    const input = {
      error_rate: 0.5,
      error_status: 503,
      throttle_rate: 0,
      retry_after_s: 2,
      latency_ms: 10,
      drop_rate: 1,
      goaway_rate: 0.1,
      shutdown: true,
      remaining: 3,
      seed: 5,
    };
    expect(parseFaultInput(input)).toEqual(input);
  });

  it("refuses out-of-range values and unknown fields", () => {
    for (const bad of [
      null,
      [],
      "x",
      { error_rate: 1.5 },
      { drop_rate: -0.1 },
      { error_rate: "1" },
      { error_status: 200 },
      { latency_ms: 1.5 },
      { remaining: 0 },
      { errror_rate: 1 },
      { goaway_rate: 2 },
      { shutdown: 1 },
    ]) {
      expect(() => parseFaultInput(bad), JSON.stringify(bad)).toThrow();
    }
  });
});

describe("createPrng", () => {
  it("yields values in [0, 1) deterministically", () => {
    const a = createPrng(123);
    const b = createPrng(123);
    for (let i = 0; i < 1000; i++) {
      const v = a();
      expect(v).toBe(b());
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(1);
    }
  });
});
