import { describe, expect, it } from "vitest";
import { useSim, vapidIdentity, webpush } from "./sim-fixture.js";

const f = useSim();
const app = vapidIdentity();

describe("bulk subscriptions and delivery counts", () => {
  it("creates 20,000 subscriptions in one call and counts deliveries per target", async () => {
    const created = await f.admin.createWebPushSubscriptions(app.keys.publicKey, 20_000);
    expect(created).toHaveLength(20_000);
    expect(new Set(created.map((c) => c.id)).size).toBe(20_000);
    expect(new Set(created.map((c) => c.subscription.keys.p256dh)).size).toBe(20_000);

    // A sample spread over the batch, one push each, and one target pushed twice.
    const sample = created.filter((_, i) => i % 200 === 0);
    await Promise.all(
      sample.map((c) =>
        webpush.sendNotification(c.subscription, `for ${c.id}`, { vapidDetails: app.details, agent: f.agent }),
      ),
    );
    await webpush.sendNotification(sample[0]!.subscription, "again", { vapidDetails: app.details, agent: f.agent });

    const count = await f.admin.deliveryCount("webpush");
    expect(count.total).toBe(sample.length + 1);
    expect(Object.keys(count.by_target)).toHaveLength(sample.length);
    expect(count.by_target[sample[0]!.id]).toBe(2);
    expect(sample.slice(1).every((c) => count.by_target[c.id] === 1)).toBe(true);

    // Pages cover every delivery once, oldest first.
    const all = await f.admin.allDeliveries({ platform: "webpush", limit: 7 });
    expect(all).toHaveLength(sample.length + 1);
    expect(all.map((d) => d.seq)).toEqual([...all.map((d) => d.seq)].sort((a, b) => a - b));
    expect(all.at(-1)!.payload).toBe("again");
    for (const d of all.slice(0, -1)) expect(d.payload).toBe(`for ${d.subscription_id}`);

    await f.admin.clearDeliveries();
    expect(await f.admin.deliveryCount()).toEqual({ total: 0, by_target: {} });
  });

  it("refuses a count over the bulk limit and a key that is not a P-256 point", async () => {
    await expect(f.admin.createWebPushSubscriptions(app.keys.publicKey, 100_001)).rejects.toMatchObject({
      status: 400,
    });
    await expect(f.admin.createWebPushSubscriptions(app.keys.publicKey, 0)).rejects.toMatchObject({ status: 400 });
    await expect(f.admin.createWebPushSubscriptions("not-a-key")).rejects.toMatchObject({ status: 400 });
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString("base64url");
    await expect(f.admin.createWebPushSubscriptions(offCurve)).rejects.toMatchObject({ status: 400 });
  });
});
