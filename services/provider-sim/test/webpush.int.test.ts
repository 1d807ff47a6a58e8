import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import type { WebPushDelivery } from "../src/recorder.js";
import type { SubscriptionJson } from "../src/webpush/subscriptions.js";
import { rawRequest, useSim, vapidIdentity, webpush, type RawResponse, type WebPushError } from "./sim-fixture.js";

const f = useSim();
const app = vapidIdentity();

async function subscribe(key = app.keys.publicKey): Promise<{ id: string; subscription: SubscriptionJson }> {
  const [created] = await f.admin.createWebPushSubscriptions(key);
  return created!;
}

/** A request exactly as web-push would send it, as raw parts to tamper with. */
function validRequest(sub: SubscriptionJson, payload = "hello") {
  const details = webpush.generateRequestDetails(sub, payload, { vapidDetails: app.details, TTL: 60 });
  return { headers: { ...details.headers }, body: details.body };
}

const send = (sub: SubscriptionJson, headers: Record<string, string | number>, body: Buffer | string | null) =>
  rawRequest(sub.endpoint, { ca: f.ca, headers, body });

const reasonOf = (res: RawResponse) => (JSON.parse(res.body) as { reason: string }).reason;

describe("delivery from the web-push library", () => {
  it("accepts an RFC 8291 message with VAPID, answers 201 with Location and records the decrypted payload", async () => {
    const { id, subscription } = await subscribe();
    expect(subscription.endpoint).toBe(`${f.sim.publicUrl}/wp/${id}`);
    expect(subscription.expirationTime).toBeNull();
    expect(Buffer.from(subscription.keys.p256dh, "base64url")).toHaveLength(65);
    expect(Buffer.from(subscription.keys.auth, "base64url")).toHaveLength(16);

    const payload = JSON.stringify({ title: "Grüße", body: "Ünïcödé ✓", data: { n: "1" } });
    const res = await webpush.sendNotification(subscription, payload, {
      vapidDetails: app.details,
      TTL: 3600,
      urgency: "high",
      topic: "order-42",
      agent: f.agent,
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers.location).toMatch(/^\/msg\/[0-9a-f-]{36}$/);
    expect(res.headers.ttl).toBe("3600");

    const { deliveries } = await f.admin.deliveries({ platform: "webpush", subscription_id: id });
    expect(deliveries).toHaveLength(1);
    const d = deliveries[0] as WebPushDelivery;
    expect(d).toMatchObject({
      platform: "webpush",
      subscription_id: id,
      target: id,
      endpoint: subscription.endpoint,
      payload,
      headers: { ttl: 3600, urgency: "high", topic: "order-42" },
    });
    expect(res.headers.location).toBe(`/msg/${d.id}`);
    expect(Date.parse(d.received_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("accepts the largest payload that fits 4096 bytes on the wire", async () => {
    const { id, subscription } = await subscribe();
    // 4096 = 86 header + plaintext + 1 delimiter + 16 tag
    const payload = "x".repeat(4096 - 86 - 1 - 16);
    const { headers, body } = validRequest(subscription, payload);
    expect(body).toHaveLength(4096);
    expect((await send(subscription, headers, body)).status).toBe(201);
    const { deliveries } = await f.admin.deliveries({ platform: "webpush", subscription_id: id });
    expect(deliveries[0]!.payload).toBe(payload);
  });

  it("serves HTTP/2 as a pooled sender would use it", async () => {
    const { id, subscription } = await subscribe();
    const { headers, body } = validRequest(subscription, "over h2");
    const url = new URL(subscription.endpoint);
    const session = http2.connect(url.origin, { ca: f.ca });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = session.request({ ":method": "POST", ":path": url.pathname, ...lowercase(headers) });
        req.on("response", (h) => resolve(Number(h[":status"])));
        req.on("error", reject);
        req.end(body);
      });
      expect(status).toBe(201);
    } finally {
      session.close();
    }
    const { deliveries } = await f.admin.deliveries({ platform: "webpush", subscription_id: id });
    expect(deliveries.map((d) => d.payload)).toEqual(["over h2"]);
  });
});

describe("refusals", () => {
  it("needs TTL, a known Urgency, a valid Topic and aes128gcm", async () => {
    const { subscription } = await subscribe();
    const cases: [(h: Record<string, string | number>) => void, number, string][] = [
      [(h) => delete h.TTL, 400, "MissingTTL"],
      [(h) => (h.TTL = "-5"), 400, "InvalidTTL"],
      [(h) => (h.Urgency = "urgent"), 400, "InvalidUrgency"],
      [(h) => (h.Topic = "a".repeat(33)), 400, "InvalidTopic"],
      [(h) => (h.Topic = "no spaces"), 400, "InvalidTopic"],
      [(h) => (h["Content-Encoding"] = "aesgcm"), 415, "UnsupportedContentEncoding"],
      [(h) => delete h["Content-Encoding"], 415, "UnsupportedContentEncoding"],
    ];
    for (const [tamper, status, reason] of cases) {
      const { headers, body } = validRequest(subscription);
      tamper(headers);
      const res = await send(subscription, headers, body);
      expect([res.status, reasonOf(res)], reason).toEqual([status, reason]);
    }
  });

  it("needs VAPID credentials that verify against the subscription's key", async () => {
    const { subscription } = await subscribe();
    const aud = f.sim.publicUrl;
    const now = Math.floor(Date.now() / 1000);
    const good = { aud, exp: now + 3600, sub: "mailto:ops@example.com" };
    const other = vapidIdentity();
    const cases: [string | undefined, number, string][] = [
      [undefined, 401, "MissingAuthorization"],
      ["vapid t=abc", 401, "MalformedAuthorization"],
      [`key=AIzaSyExample`, 401, "UnsupportedAuthorizationScheme"],
      [await other.authorization(good), 403, "VapidKeyMismatch"],
      [await app.authorization(good, other.keys), 403, "InvalidSignature"],
      [await app.authorization({ ...good, aud: "https://fcm.googleapis.com" }), 403, "InvalidAudience"],
      [await app.authorization({ ...good, aud: `${aud}/wp` }), 403, "InvalidAudience"],
      [await app.authorization({ ...good, exp: now - 10 }), 403, "ExpiredJWT"],
      [await app.authorization({ ...good, exp: now + 25 * 3600 }), 403, "ExpirationTooFar"],
      [await app.authorization({ aud, sub: good.sub }), 403, "MissingExpiration"],
      [await app.authorization({ ...good, sub: "http://example.com" }), 403, "InvalidSubject"],
    ];
    for (const [authorization, status, reason] of cases) {
      const { headers, body } = validRequest(subscription);
      if (authorization === undefined) delete headers.Authorization;
      else headers.Authorization = authorization;
      const res = await send(subscription, headers, body);
      expect([res.status, reasonOf(res)], reason).toEqual([status, reason]);
      expect(res.body).not.toContain(subscription.keys.auth);
    }
  });

  it("refuses a body over 4096 bytes with 413, declared or streamed", async () => {
    const { subscription } = await subscribe();
    const { headers } = validRequest(subscription);
    const big = Buffer.alloc(4097, 1);
    const declared = await send(subscription, { ...headers, "Content-Length": big.length }, big);
    expect([declared.status, reasonOf(declared)]).toEqual([413, "PayloadTooLarge"]);

    const chunked = { ...headers };
    delete chunked["Content-Length"];
    const streamed = await send(subscription, { ...chunked, "Transfer-Encoding": "chunked" }, big);
    expect([streamed.status, reasonOf(streamed)]).toEqual([413, "PayloadTooLarge"]);
  });

  it("refuses content that does not decrypt with 400", async () => {
    const { subscription } = await subscribe();
    const { headers, body } = validRequest(subscription);
    const flipped = Buffer.from(body!);
    flipped[flipped.length - 1]! ^= 0xff;
    const bodies: [Buffer, string][] = [
      [Buffer.from("garbage that is not aes128gcm at all"), "TruncatedContent"],
      [Buffer.alloc(200, 0), "InvalidKeyId"],
      [flipped, "DecryptionFailed"],
    ];
    for (const [b, reason] of bodies) {
      const res = await send(subscription, { ...headers, "Content-Length": b.length }, b);
      expect([res.status, reasonOf(res)], reason).toEqual([400, reason]);
    }
    // Encrypted for another subscription's keys: authentic ciphertext, wrong recipient.
    const { subscription: someoneElse } = await subscribe();
    const stolen = validRequest(someoneElse).body!;
    const res = await send(subscription, { ...headers, "Content-Length": stolen.length }, stolen);
    expect([res.status, reasonOf(res)]).toEqual([400, "DecryptionFailed"]);
  });

  it("answers 404 for an unknown subscription and 410 for a gone one, until revived", async () => {
    const { id, subscription } = await subscribe();
    const unknown = { ...subscription, endpoint: `${f.sim.publicUrl}/wp/00000000-0000-4000-8000-000000000000` };
    const notFound = await webpush
      .sendNotification(unknown, "x", { vapidDetails: app.details, agent: f.agent })
      .catch((e: WebPushError) => e);
    expect((notFound as WebPushError).statusCode).toBe(404);

    await f.admin.markWebPushGone(id);
    const gone = await webpush
      .sendNotification(subscription, "x", { vapidDetails: app.details, agent: f.agent })
      .catch((e: WebPushError) => e);
    expect((gone as WebPushError).statusCode).toBe(410);
    expect(JSON.parse((gone as WebPushError).body)).toEqual({ reason: "Gone" });

    await f.admin.reviveWebPush(id);
    const revived = await webpush.sendNotification(subscription, "back", { vapidDetails: app.details, agent: f.agent });
    expect(revived.statusCode).toBe(201);
    expect((await f.admin.deliveryCount("webpush")).by_target[id]).toBe(1);
  });

  it("answers 405 to other methods and records nothing refused", async () => {
    const { id, subscription } = await subscribe();
    const res = await rawRequest(subscription.endpoint, { ca: f.ca, method: "GET" });
    expect([res.status, res.headers.allow]).toEqual([405, "POST"]);
    expect((await f.admin.deliveries({ subscription_id: id })).deliveries).toEqual([]);
  });
});

function lowercase(headers: Record<string, string | number>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
}
