import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { jetstreamManager } from "@nats-io/jetstream";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { WEBHOOK_EVENTS_DURABLE } from "../src/event-consumer.js";
import { publishWebhookEvent, type WebhookEventType } from "@herald/runtime";
import { type Received, startReceiver, startWebhooks, useWebhooks, waitFor } from "./harness.js";

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return undefined;
  } catch (err) {
    return ConnectError.from(err);
  }
};

/** The Standard Webhooks reference library's verification of a received delivery. */
const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: unknown };

describe("webhooks service", () => {
  const svc = useWebhooks();
  const appId = randomUUID();

  /** Publishes an event; answers its id and whether JetStream dropped it as a duplicate. */
  const publishEvent = async (type: string, data: Record<string, unknown>, id = `evt_${randomUUID()}`) => {
    const ack = await publishWebhookEvent(svc.nc, svc.names, {
      id,
      type: type as WebhookEventType,
      appId,
      timestamp: new Date(),
      data,
    });
    return { id, duplicate: ack.duplicate };
  };
  const publish = async (type: string, data: Record<string, unknown>, id?: string) =>
    (await publishEvent(type, data, id)).id;

  it("creates, lists, updates and deletes endpoints; the secret is answered on create only", async () => {
    const created = await svc.client.createWebhook({
      appId,
      url: "https://example.com/hook",
      events: ["campaign.completed"],
      description: "crm",
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const id = created.webhook!.id;
    const got = await svc.client.getWebhook({ appId, id });
    expect(got.webhook).toMatchObject({
      url: "https://example.com/hook",
      events: ["campaign.completed"],
      enabled: true,
    });
    expect(JSON.stringify(got, (_, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(created.secret);
    const { rows } = await svc.pool.query("SELECT secret_sealed FROM endpoints WHERE id = $1", [id]);
    expect(rows[0].secret_sealed.toString("latin1")).not.toContain(created.secret.slice(6));

    const updated = await svc.client.updateWebhook({
      appId,
      id,
      events: ["device.invalidated", "user.erased"],
      updateEvents: true,
      enabled: false,
    });
    expect(updated.webhook).toMatchObject({ events: ["device.invalidated", "user.erased"], enabled: false });
    const list = await svc.client.listWebhooks({ appId, page: { page: 1, perPage: 10 } });
    expect(list.webhooks.map((w) => w.id)).toContain(id);
    expect(Number(list.page!.total)).toBeGreaterThanOrEqual(1);
    expect((await codeOf(svc.client.listWebhooks({ appId, page: { perPage: 201 } })))?.code).toBe(Code.InvalidArgument);
    expect((await codeOf(svc.client.getWebhook({ appId: randomUUID(), id })))?.code).toBe(Code.NotFound);
    await svc.client.deleteWebhook({ appId, id });
    expect((await codeOf(svc.client.getWebhook({ appId, id })))?.code).toBe(Code.NotFound);
  });

  it("refuses unknown event types and URLs that are not URLs", async () => {
    const bad = await codeOf(svc.client.createWebhook({ appId, url: "https://example.com", events: ["nope"] }));
    expect(bad?.code).toBe(Code.InvalidArgument);
    expect(bad?.rawMessage).toMatch(/^events/);
    const noUrl = await codeOf(svc.client.createWebhook({ appId, url: "ftp://x", events: ["webhook.test"] }));
    expect(noUrl?.rawMessage).toMatch(/^url/);
  });

  it("delivers a test event signed per Standard Webhooks", async () => {
    const rx = await startReceiver();
    try {
      const { webhook, secret } = await svc.client.createWebhook({ appId, url: rx.url, events: ["campaign.started"] });
      const { eventId } = await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("the test delivery", () => rx.received.length === 1);
      const r = rx.received[0]!;
      expect(r.headers["webhook-id"]).toBe(eventId);
      expect(verify(secret, r)).toMatchObject({ type: "webhook.test", data: { webhook_id: webhook!.id } });
      const { attempts } = await svc.client.listWebhookAttempts({ appId, id: webhook!.id });
      await waitFor("the delivered status", async () => {
        const a = (await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0];
        return a?.status === "delivered";
      });
      expect(attempts[0]?.eventId).toBe(eventId);
      await svc.client.deleteWebhook({ appId, id: webhook!.id });
    } finally {
      await rx.close();
    }
  });

  it("delivers published events to the endpoints subscribed to their type", async () => {
    const rx = await startReceiver();
    try {
      const { webhook, secret } = await svc.client.createWebhook({
        appId,
        url: rx.url,
        events: ["campaign.completed"],
      });
      await publish("campaign.started", { campaign_id: "c1" });
      const id = await publish("campaign.completed", { campaign_id: "c1", sent: 3 });
      // The same id again: JetStream drops it, so nothing reaches the dispatcher twice.
      expect((await publishEvent("campaign.completed", { campaign_id: "c1", sent: 3 }, id)).duplicate).toBe(true);
      await waitFor("the delivery", () => rx.received.length >= 1);
      // Every event published is recorded (with its deliveries) before its ack: once the
      // dispatcher's consumer has nothing pending, the endpoint's deliveries are all known.
      const jsm = await jetstreamManager(svc.nc);
      await waitFor("the events recorded", async () => {
        const info = await jsm.consumers.info(svc.names.webhooksStream, svc.names.consumer(WEBHOOK_EVENTS_DURABLE));
        return info.num_pending === 0 && info.num_ack_pending === 0;
      });
      expect((await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts).toHaveLength(1);
      expect(rx.received).toHaveLength(1);
      expect(verify(secret, rx.received[0]!)).toMatchObject({ type: "campaign.completed", data: { sent: 3 } });
      await svc.client.deleteWebhook({ appId, id: webhook!.id });
    } finally {
      await rx.close();
    }
  });

  it("retries a 500 and a timeout with the same webhook-id, then succeeds", async () => {
    const rx = await startReceiver((n) => (n === 1 ? 500 : n === 2 ? "hang" : 204));
    const slow = await startWebhooks({ HERALD_WEBHOOK_TIMEOUT_MS: "500" });
    try {
      const { webhook, secret } = await slow.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      const { eventId } = await slow.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("three attempts", () => rx.received.length >= 3);
      expect(rx.received.map((r) => r.headers["webhook-id"])).toEqual([eventId, eventId, eventId]);
      for (const r of rx.received) verify(secret, r);
      await waitFor("delivered", async () => {
        const a = (await slow.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0];
        return a?.status === "delivered" && a.attempts === 3;
      });
    } finally {
      await slow.stop();
      await rx.close();
    }
  });

  it("gives up after the schedule and keeps the last error and response", async () => {
    const rx = await startReceiver(() => 503);
    try {
      const { webhook } = await svc.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("failed", async () => {
        const a = (await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0];
        return a?.status === "failed";
      });
      const a = (await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0]!;
      expect(a).toMatchObject({ attempts: 4, lastError: "HTTP 503", responseStatus: 503, responseBody: "answer 503" });
      expect(rx.received).toHaveLength(4);
    } finally {
      await rx.close();
    }
  });

  it("disables an endpoint that answers 410, with the reason", async () => {
    const rx = await startReceiver(() => 410);
    try {
      const { webhook } = await svc.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor(
        "disabled",
        async () => !(await svc.client.getWebhook({ appId, id: webhook!.id })).webhook?.enabled,
      );
      const got = (await svc.client.getWebhook({ appId, id: webhook!.id })).webhook!;
      expect(got.disabledReason).toMatch(/410/);
      expect(rx.received).toHaveLength(1);
      // Enabled again by hand: the reason goes.
      const again = await svc.client.updateWebhook({ appId, id: webhook!.id, enabled: true });
      expect(again.webhook?.disabledReason).toBeUndefined();
    } finally {
      await rx.close();
    }
  });

  it("replays an event with the same webhook-id", async () => {
    const rx = await startReceiver();
    try {
      const { webhook, secret } = await svc.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      const { eventId } = await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("first delivery", () => rx.received.length === 1);
      const replayed = await svc.client.replayWebhookEvent({ appId, id: webhook!.id, eventId });
      expect(replayed.attempt?.status).toBe("pending");
      await waitFor("replayed delivery", () => rx.received.length === 2);
      expect(rx.received[1]!.headers["webhook-id"]).toBe(eventId);
      verify(secret, rx.received[1]!);
      const unknown = await codeOf(svc.client.replayWebhookEvent({ appId, id: webhook!.id, eventId: "evt_unknown" }));
      expect(unknown?.code).toBe(Code.NotFound);
    } finally {
      await rx.close();
    }
  });

  it("signs with both secrets during a rotation's overlap", async () => {
    const rx = await startReceiver();
    try {
      const { webhook, secret: oldSecret } = await svc.client.createWebhook({
        appId,
        url: rx.url,
        events: ["webhook.test"],
      });
      const rotated = await svc.client.rotateWebhookSecret({ appId, id: webhook!.id });
      expect(rotated.secret).not.toBe(oldSecret);
      expect(rotated.webhook?.previousSecretExpiresAt).toBeDefined();
      await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("delivery", () => rx.received.length === 1);
      const r = rx.received[0]!;
      expect(String(r.headers["webhook-signature"]).split(" ")).toHaveLength(2);
      verify(rotated.secret, r);
      verify(oldSecret, r);
    } finally {
      await rx.close();
    }
  });
});

describe("webhooks service without private addresses", () => {
  it("refuses private addresses at create and at connect (DNS rebinding)", async () => {
    let answers = 0;
    // The name resolves to a public address once (the check at create), then to loopback.
    const resolve = async (host: string) => {
      if (host !== "hooks.rebind.test") throw new Error("unknown host");
      return answers++ === 0 ? ["93.184.216.34"] : ["127.0.0.1"];
    };
    const svc = await startWebhooks({ HERALD_WEBHOOK_ALLOW_PRIVATE: "0" }, { resolve });
    const appId = randomUUID();
    try {
      for (const url of [
        "https://10.0.0.5/hook",
        "https://127.0.0.1/hook",
        "https://169.254.169.254/",
        "http://example.com/",
      ]) {
        const err = await codeOf(svc.client.createWebhook({ appId, url, events: ["webhook.test"] }));
        expect(err?.code, url).toBe(Code.InvalidArgument);
        expect(err?.rawMessage, url).toMatch(/^url /);
      }
      const { webhook } = await svc.client.createWebhook({
        appId,
        url: "https://hooks.rebind.test/hook",
        events: ["webhook.test"],
      });
      await svc.client.testWebhook({ appId, id: webhook!.id });
      await waitFor("a refused attempt", async () => {
        const a = (await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0];
        return (a?.attempts ?? 0) >= 1;
      });
      const a = (await svc.client.listWebhookAttempts({ appId, id: webhook!.id })).attempts[0]!;
      expect(a.lastError).toMatch(/non-public address/);
      expect(a.responseStatus).toBeUndefined();
    } finally {
      await svc.stop();
    }
  });
});
