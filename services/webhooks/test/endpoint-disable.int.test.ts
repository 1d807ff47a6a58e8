import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { poll } from "../../../test/support/wait.js";
import { startReceiver, useWebhooks, type Webhooks } from "./harness.js";

// "An endpoint failing for 5 days is disabled and says why": the window counts from the
// first failed attempt since the last success (endpoints.failing_since). Here the window
// is HERALD_WEBHOOK_DISABLE_AFTER_MS = 2 s, with a retry every 150 ms, so that real
// attempts fail for longer than the window; and the default 5 days, with the failing
// streak's start moved back in the database (the clock the code reads is PostgreSQL's).

const WINDOW_MS = 2_000;
const RETRY_MS = 150;

interface EndpointState {
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  updated_at: Date;
}

/** Scrapes the admin port; answers the samples of the named metric ("name{labels}" → value). */
async function samples(svc: Webhooks, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${svc.app.adminPort}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith(name)) {
      const at = line.lastIndexOf(" ");
      out.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
  }
  return out;
}

describe("an endpoint failing for the whole window", () => {
  const svc = useWebhooks({
    HERALD_WEBHOOK_DISABLE_AFTER_MS: String(WINDOW_MS),
    // Enough retries to fail for several windows.
    HERALD_WEBHOOK_RETRY_SCHEDULE_MS: Array(60).fill(RETRY_MS).join(","),
  });
  const appId = randomUUID();

  const endpoint = async (id: string) =>
    (
      await svc.pool.query<EndpointState>(
        "SELECT enabled, disabled_reason, failing_since, updated_at FROM endpoints WHERE id = $1",
        [id],
      )
    ).rows[0]!;
  /** The endpoint once Herald has disabled it. */
  const whenDisabled = async (id: string) => {
    const disabled = await poll(
      () => endpoint(id),
      (e) => !e.enabled,
      20_000,
    );
    expect(disabled.held).toBe(true);
    return disabled.value;
  };
  const delivery = async (endpointId: string, eventId: string) =>
    (
      await svc.pool.query<{
        status: string;
        attempts: number;
        next_attempt_at: Date | null;
        delivered_at: Date | null;
      }>(
        "SELECT status, attempts, next_attempt_at, delivered_at FROM deliveries WHERE endpoint_id = $1 AND event_id = $2",
        [endpointId, eventId],
      )
    ).rows[0];

  it("is disabled once its attempts have failed for longer than the window, and says why", async () => {
    const rx = await startReceiver(() => 500);
    try {
      const { webhook } = await svc.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      const id = webhook!.id;
      const { eventId } = await svc.client.testWebhook({ appId, id });
      const e = await whenDisabled(id);
      // Disabled by the attempt that found the streak older than the window, not before.
      expect(e.failing_since).not.toBeNull();
      expect(e.updated_at.getTime() - e.failing_since!.getTime()).toBeGreaterThanOrEqual(WINDOW_MS);
      expect(e.disabled_reason).toBe(
        `no delivery succeeded for 2 seconds: every attempt since ${e.failing_since!.toISOString()} failed`,
      );
      expect(rx.received.length).toBeGreaterThanOrEqual(WINDOW_MS / RETRY_MS / 2);
      // The API says why; nothing more goes to it.
      const got = (await svc.client.getWebhook({ appId, id })).webhook!;
      expect(got).toMatchObject({ enabled: false, disabledReason: e.disabled_reason });
      expect(await delivery(id, eventId)).toMatchObject({ status: "failed", next_attempt_at: null });
      expect(await samples(svc, "herald_webhook_endpoints_disabled_total")).toEqual(
        new Map([['herald_webhook_endpoints_disabled_total{cause="failing",service="webhooks"}', 1]]),
      );
      // Attempts by outcome, their latency, and the backlog: nothing pending or due any more.
      const attempts = await samples(svc, "herald_webhook_attempts_total");
      expect(attempts.get('herald_webhook_attempts_total{outcome="retry",service="webhooks"}')).toBe(
        rx.received.length,
      );
      expect(await samples(svc, "herald_webhook_attempt_duration_seconds_count")).toEqual(
        new Map([['herald_webhook_attempt_duration_seconds_count{service="webhooks"}', rx.received.length]]),
      );
      expect(await samples(svc, "herald_webhook_backlog_deliveries")).toEqual(
        new Map([['herald_webhook_backlog_deliveries{service="webhooks"}', 0]]),
      );
      expect(await samples(svc, "herald_webhook_due_deliveries")).toEqual(
        new Map([['herald_webhook_due_deliveries{service="webhooks"}', 0]]),
      );
      // Enabled by hand: a fresh start for the reason and the streak.
      const again = (await svc.client.updateWebhook({ appId, id, enabled: true })).webhook!;
      expect(again.disabledReason).toBeUndefined();
      expect((await endpoint(id)).failing_since).toBeNull();
    } finally {
      await rx.close();
    }
  });

  it("restarts the window at a success: the streak counts from the first failure after it", async () => {
    // Every attempt fails but those of the one event the receiver is told to accept.
    let accept = "";
    const rx = await startReceiver((_, r) => (r.headers["webhook-id"] === accept ? 204 : 500));
    try {
      const { webhook } = await svc.client.createWebhook({ appId, url: rx.url, events: ["webhook.test"] });
      const id = webhook!.id;
      const failing = await svc.client.testWebhook({ appId, id });
      // The first streak: its event has failed a few times.
      const streak = await poll(
        async () => ({ e: await endpoint(id), d: await delivery(id, failing.eventId) }),
        ({ e, d }) => e.failing_since !== null && (d?.attempts ?? 0) >= 5,
        15_000,
      );
      expect(streak.held).toBe(true);
      const firstStreak = streak.value.e.failing_since!;
      // One event delivered in the middle of it.
      const ok = await svc.client.testWebhook({ appId, id });
      accept = ok.eventId;
      const delivered = await poll(
        () => delivery(id, ok.eventId),
        (d) => d?.status === "delivered",
        15_000,
      );
      expect(delivered.held).toBe(true);
      const successAt = delivered.value!.delivered_at!;
      expect(successAt.getTime() - firstStreak.getTime()).toBeGreaterThan(4 * RETRY_MS);

      const e = await whenDisabled(id);
      // The streak that disabled it began after the success, and lasted the whole window:
      // counted from the first failure, the endpoint would have gone earlier.
      expect(e.failing_since!.getTime()).toBeGreaterThanOrEqual(successAt.getTime());
      expect(e.updated_at.getTime() - e.failing_since!.getTime()).toBeGreaterThanOrEqual(WINDOW_MS);
      expect(e.updated_at.getTime() - firstStreak.getTime()).toBeGreaterThan(WINDOW_MS + 4 * RETRY_MS);
      expect(e.disabled_reason).toContain(`every attempt since ${e.failing_since!.toISOString()} failed`);
      expect(await delivery(id, ok.eventId)).toMatchObject({ status: "delivered" });
    } finally {
      await rx.close();
    }
  });
});

describe("the default window of 5 days", () => {
  const svc = useWebhooks();
  const appId = randomUUID();

  /** An endpoint whose streak of failures began `age` ago (a PostgreSQL interval). */
  const failingFor = async (url: string, age: string) => {
    const { webhook } = await svc.client.createWebhook({ appId, url, events: ["webhook.test"] });
    await svc.pool.query("UPDATE endpoints SET failing_since = now() - $2::interval WHERE id = $1", [webhook!.id, age]);
    return webhook!.id;
  };
  const state = async (id: string) =>
    (
      await svc.pool.query<EndpointState>(
        "SELECT enabled, disabled_reason, failing_since, updated_at FROM endpoints WHERE id = $1",
        [id],
      )
    ).rows[0]!;

  it("a failure after 5 days of failures disables; a failure or a success before does not", async () => {
    const failingRx = await startReceiver(() => 503);
    const okRx = await startReceiver(() => 200);
    try {
      const overdue = await failingFor(failingRx.url, "5 days 1 minute");
      const young = await failingFor(failingRx.url, "4 days 23 hours");
      const recovering = await failingFor(okRx.url, "5 days 1 minute");
      const events = await Promise.all(
        [overdue, young, recovering].map(async (id) => ({ id, ...(await svc.client.testWebhook({ appId, id })) })),
      );
      const attempted = await poll(
        async () =>
          (
            await svc.pool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM deliveries WHERE event_id = ANY($1) AND attempts >= 1",
              [events.map((e) => e.eventId)],
            )
          ).rows[0]!.n,
        (n) => n === 3,
        15_000,
      );
      expect(attempted.value).toBe(3);

      const o = await state(overdue);
      expect(o.enabled).toBe(false);
      expect(o.disabled_reason).toBe(
        `no delivery succeeded for 5 days: every attempt since ${o.failing_since!.toISOString()} failed`,
      );
      const y = await state(young);
      expect(y).toMatchObject({ enabled: true, disabled_reason: null });
      expect(y.failing_since).not.toBeNull();
      // The success ends the streak: the next failure starts a new one.
      expect(await state(recovering)).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    } finally {
      await failingRx.close();
      await okRx.close();
    }
  });
});
