import http2 from "node:http2";
import { beforeAll, describe, expect, it } from "vitest";
import { SimAdminError } from "../src/admin-client.js";
import type { SubscriptionJson } from "../src/webpush/subscriptions.js";
import { useSim, vapidIdentity, webpush, type WebPushError } from "./sim-fixture.js";

const f = useSim({}, { clearFaults: "webpush" });
let subscription: SubscriptionJson;
let subscriptionId: string;
const app = vapidIdentity();

beforeAll(async () => {
  const [created] = await f.admin.createWebPushSubscriptions(app.keys.publicKey);
  ({ id: subscriptionId, subscription } = created!);
});

/** Sends one push with web-push; returns the status, or the transport error when there was no answer. */
async function push(payload = "p"): Promise<{ status: number; retryAfter?: string } | { error: Error }> {
  try {
    const res = await webpush.sendNotification(subscription, payload, { vapidDetails: app.details, agent: f.agent });
    return { status: res.statusCode };
  } catch (err) {
    const e = err as WebPushError;
    return e.statusCode ? { status: e.statusCode, retryAfter: e.headers["retry-after"] } : { error: e };
  }
}

describe("faults", () => {
  it("error_rate 1 answers every request with the chosen 5xx and records nothing", async () => {
    await f.admin.clearDeliveries();
    await f.admin.setFaults("webpush", { error_rate: 1, error_status: 503 });
    const results = await Promise.all(Array.from({ length: 10 }, () => push()));
    expect(results).toEqual(Array(10).fill({ status: 503, retryAfter: undefined }));
    expect((await f.admin.deliveryCount("webpush")).total).toBe(0);
  });

  it("throttle answers 429 with Retry-After", async () => {
    await f.admin.setFaults("webpush", { throttle_rate: 1, retry_after_s: 7 });
    expect(await push()).toEqual({ status: 429, retryAfter: "7" });
  });

  it("latency delays the answer by at least latency_ms", async () => {
    await f.admin.setFaults("webpush", { latency_ms: 300 });
    const started = performance.now();
    expect(await push()).toEqual({ status: 201 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("drop cuts the HTTP/1.1 connection without an answer", async () => {
    await f.admin.setFaults("webpush", { drop_rate: 1 });
    const result = await push();
    expect("error" in result && result.error.message).toMatch(/socket hang up|ECONNRESET/);
  });

  it("drop resets the HTTP/2 stream without an answer", async () => {
    await f.admin.setFaults("webpush", { drop_rate: 1 });
    const details = webpush.generateRequestDetails(subscription, "p", { vapidDetails: app.details });
    const url = new URL(subscription.endpoint);
    const session = http2.connect(url.origin, { ca: f.ca });
    try {
      const outcome = await new Promise<string>((resolve) => {
        const req = session.request({
          ":method": "POST",
          ":path": url.pathname,
          ttl: "60",
          "content-encoding": "aes128gcm",
        });
        req.on("response", (h) => resolve(`status ${String(h[":status"])}`));
        req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        req.end(details.body);
      });
      expect(outcome).toBe("ERR_HTTP2_STREAM_ERROR");
    } finally {
      session.close();
    }
  });

  it("remaining: 3 faults exactly the next three requests, then stops", async () => {
    await f.admin.clearDeliveries();
    await f.admin.setFaults("webpush", { error_rate: 1, error_status: 500, remaining: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await push(`m${i}`);
      statuses.push("status" in r ? r.status : -1);
    }
    expect(statuses).toEqual([500, 500, 500, 201, 201, 201]);
    expect(await f.admin.faults("webpush")).toBeNull();
    expect((await f.admin.deliveryCount("webpush")).by_target).toEqual({ [subscriptionId]: 3 });
  });

  it("makes the same decisions for the same seed", async () => {
    const run = async () => {
      await f.admin.setFaults("webpush", { error_rate: 0.5, seed: 1234 });
      const out: number[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await push();
        out.push("status" in r ? r.status : -1);
      }
      return out;
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set([201, 500]));
    expect(await run()).toEqual(first);
  });

  it("counts requests, acceptances, refusals and drops", async () => {
    await f.admin.resetStats();
    await f.admin.setFaults("webpush", { error_rate: 1, remaining: 2, error_status: 502 });
    await push();
    await push();
    await push();
    await f.admin.setFaults("webpush", { drop_rate: 1, remaining: 1 });
    await push();
    const stats = await f.admin.stats();
    expect(stats).toMatchObject({ requests: 4, accepted: 1, dropped: 1, refused: { "502": 2 } });
    expect(stats.platforms.webpush).toMatchObject({ requests: 4, accepted: 1, dropped: 1 });
  });

  it("refuses invalid fault settings", async () => {
    const err = await f.admin.setFaults("webpush", { error_rate: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SimAdminError);
    expect((err as SimAdminError).status).toBe(400);
    const unknownPlatform = await f.admin
      .setFaults("telegram" as "webpush", { error_rate: 1 })
      .catch((e: unknown) => e);
    expect((unknownPlatform as SimAdminError).status).toBe(400);
  });
});
