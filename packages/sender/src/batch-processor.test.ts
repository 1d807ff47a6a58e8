import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import { DeliveryBatchSchema, OutcomeKind, type DeliveryTarget } from "@herald/proto/delivery";
import { sleep } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { BatchProcessor } from "./batch-processor.js";
import { CredentialsCache } from "./credentials-cache.js";
import { Limiter } from "./limiter.js";
import { CredentialsError, type Provider, type SendResult } from "./provider.js";

// A provider whose answers are scripted per device: the processor's retry, outcome and
// invalidation logic is what is under test here, with no network involved.
function scripted(script: Record<string, SendResult[]>): Provider<string> & { calls: string[]; maxConcurrent: number } {
  let active = 0;
  const p = {
    platform: "web" as const,
    calls: [] as string[],
    maxConcurrent: 0,
    prepareCredentials: (r: { fingerprint: string }) => {
      if (r.fingerprint === "bad") throw new CredentialsError("key does not parse");
      return r.fingerprint;
    },
    async send(target: DeliveryTarget): Promise<SendResult> {
      p.calls.push(target.deviceId);
      active++;
      p.maxConcurrent = Math.max(p.maxConcurrent, active);
      await new Promise((r) => setTimeout(r, 1));
      active--;
      const next = script[target.deviceId]!.shift();
      if (!next) throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
      return next;
    },
    close: async () => undefined,
  };
  return p;
}

function batch(ids: string[], extra: Partial<{ ttlSeconds: number; createdAt: Date }> = {}) {
  return create(DeliveryBatchSchema, {
    campaignId: "c1",
    appId: "a1",
    platform: Platform.WEB,
    sequence: 1n,
    payloads: [{ index: 0, title: "t", body: "b" }],
    targets: ids.map((id) => ({ deviceId: id, pushToken: `tok-${id}`, payloadIndex: 0 })),
    ttlSeconds: extra.ttlSeconds ?? 0,
    createdAt: timestampFromDate(extra.createdAt ?? new Date()),
  });
}

function processor(
  provider: Provider<string>,
  fingerprint = "fp",
  opts: { inflight?: number; sleep?: (ms: number, signal: AbortSignal) => Promise<void> } = {},
) {
  const waits: number[] = [];
  const sendLimiter = new Limiter(opts.inflight ?? 100);
  const cache = new CredentialsCache<string>(
    async () => {
      if (fingerprint === "missing") throw new ConnectError("not configured", Code.NotFound);
      if (fingerprint === "down") throw new ConnectError("unavailable", Code.Unavailable);
      return create(GetSendCredentialsResponseSchema, { fingerprint });
    },
    (r) => provider.prepareCredentials(r) as string,
    Platform.WEB,
  );
  const p = new BatchProcessor<string>({
    provider,
    credentials: cache,
    sendLimiter,
    policy: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, maxElapsedMs: 10_000 },
    sleep: opts.sleep ?? (async (ms) => void waits.push(ms)),
    random: () => 0.5,
  });
  return { p, waits, sendLimiter };
}

const kinds = (r: { outcomes: { deviceId: string; kind: OutcomeKind; reason: string; attempts: number }[] }) =>
  Object.fromEntries(r.outcomes.map((o) => [o.deviceId, [OutcomeKind[o.kind], o.reason, o.attempts]]));

describe("BatchProcessor", () => {
  it("gives every target exactly one outcome and maps results", async () => {
    const provider = scripted({
      d1: [{ kind: "delivered" }],
      d2: [{ kind: "bounced", reason: "Unregistered" }],
      d3: [{ kind: "failed", reason: "BadTopic" }],
      d4: [{ kind: "retry", reason: "503" }, { kind: "delivered" }],
      d5: [
        { kind: "retry", reason: "429", throttled: true, retryAfterMs: 2000 },
        { kind: "retry", reason: "429", throttled: true },
        { kind: "retry", reason: "429", throttled: true },
      ],
      d6: [
        { kind: "retry", reason: "500" },
        { kind: "retry", reason: "500" },
        { kind: "retry", reason: "500" },
      ],
      d7: [],
    });
    const { p, waits } = processor(provider);
    const result = await p.process(batch(["d1", "d2", "d3", "d4", "d5", "d6", "d7"]), new AbortController().signal);
    expect(kinds(result)).toEqual({
      d1: ["DELIVERED", "", 1],
      d2: ["BOUNCED", "Unregistered", 1],
      d3: ["FAILED", "BadTopic", 1],
      d4: ["DELIVERED", "", 2],
      d5: ["THROTTLED", "429", 3],
      d6: ["FAILED", "500", 3],
      d7: ["FAILED", "NetworkError:ECONNRESET", 3],
    });
    expect(result.invalidations.map((i) => [i.deviceId, i.appId, i.reason])).toEqual([["d2", "a1", "Unregistered"]]);
    expect(waits).toContain(2000); // Retry-After honoured
  });

  it("keeps provider text in reasons printable and short", async () => {
    const provider = scripted({
      d1: [{ kind: "failed", reason: "INVALID_ARGUMENT: a\u0000b\r\nc" }],
      d2: [{ kind: "bounced", reason: `Gone\t${"x".repeat(5_000)}` }],
    });
    const { p } = processor(provider);
    const result = await p.process(batch(["d1", "d2"]), new AbortController().signal);
    expect(kinds(result).d1).toEqual(["FAILED", "INVALID_ARGUMENT: a b c", 1]);
    const long = result.outcomes.find((o) => o.deviceId === "d2")!.reason;
    expect(long).toMatch(/^Gone x+$/);
    expect(long.length).toBe(256);
    expect(result.invalidations[0]!.reason).toBe(long);
  });

  it("fails every target with a readable reason when credentials are missing or unusable", async () => {
    for (const [fp, reason] of [
      ["missing", "CredentialsNotConfigured"],
      ["bad", "InvalidCredentials: key does not parse"],
    ]) {
      const provider = scripted({ d1: [{ kind: "delivered" }] });
      const result = await processor(provider, fp).p.process(batch(["d1"]), new AbortController().signal);
      expect(kinds(result)).toEqual({ d1: ["FAILED", reason, 0] });
      expect(provider.calls).toEqual([]);
    }
  });

  it("throws when the credential service is unreachable, so the batch is redelivered", async () => {
    const provider = scripted({ d1: [{ kind: "delivered" }] });
    await expect(processor(provider, "down").p.process(batch(["d1"]), new AbortController().signal)).rejects.toThrow();
  });

  it("fails expired messages without sending them", async () => {
    const provider = scripted({ d1: [{ kind: "delivered" }] });
    const old = batch(["d1"], { ttlSeconds: 60, createdAt: new Date(Date.now() - 120_000) });
    expect(kinds(await processor(provider).p.process(old, new AbortController().signal))).toEqual({
      d1: ["FAILED", "Expired", 0],
    });
    expect(provider.calls).toEqual([]);
  });

  it("keeps concurrent sends within the limiter", async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `d${i}`);
    const provider = scripted(Object.fromEntries(ids.map((id) => [id, [{ kind: "delivered" } as SendResult]])));
    await processor(provider, "fp", { inflight: 4 }).p.process(batch(ids), new AbortController().signal);
    expect(provider.maxConcurrent).toBeLessThanOrEqual(4);
    expect(provider.calls).toHaveLength(50);
  });

  it("stops when aborted", async () => {
    const provider = scripted({ d1: [{ kind: "retry", reason: "503" }, { kind: "delivered" }] });
    const abort = new AbortController();
    abort.abort(new Error("stop"));
    await expect(processor(provider).p.process(batch(["d1"]), abort.signal)).rejects.toThrow("stop");
  });

  it("shares the send slots between batches and gives every one back, retries included", async () => {
    const ids = (prefix: string) => Array.from({ length: 30 }, (_, i) => `${prefix}${i}`);
    const all = [...ids("a"), ...ids("b")];
    const provider = scripted(
      Object.fromEntries(
        all.map((id, i) => [id, i % 3 ? [{ kind: "delivered" } as SendResult] : retryThenDelivered()]),
      ),
    );
    const { p, sendLimiter } = processor(provider, "fp", { inflight: 3 });
    const signal = new AbortController().signal;
    const [a, b] = await Promise.all([p.process(batch(ids("a")), signal), p.process(batch(ids("b")), signal)]);
    expect([...a.outcomes, ...b.outcomes].map((o) => OutcomeKind[o.kind])).toEqual(all.map(() => "DELIVERED"));
    expect(provider.maxConcurrent).toBeLessThanOrEqual(3);
    expect(provider.calls).toHaveLength(all.length + all.length / 3);
    expect(sendLimiter.available).toBe(3);
  });

  it("stops mid-batch, while devices wait for a slot and others back off, and leaks no slot", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `d${i}`);
    const provider = scripted(Object.fromEntries(ids.map((id) => [id, retryThenDelivered()])));
    const abort = new AbortController();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const { p, sendLimiter } = processor(provider, "fp", {
        inflight: 2,
        // A real back-off: the abort ends it.
        sleep: (ms, signal) => sleep(ms * 100, signal),
      });
      const run = p.process(batch(ids), abort.signal);
      await new Promise((r) => setTimeout(r, 20));
      abort.abort(new Error("stop"));
      await expect(run).rejects.toThrow("stop");
      await new Promise((r) => setTimeout(r, 20));
      expect(provider.calls.length).toBeLessThan(ids.length);
      expect(sendLimiter.available).toBe(2);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

function retryThenDelivered(): SendResult[] {
  return [{ kind: "retry", reason: "503" }, { kind: "delivered" }];
}
