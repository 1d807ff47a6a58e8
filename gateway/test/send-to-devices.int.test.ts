import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apnsToken, fcmToken } from "../../test/support/device-tokens.js";
import { createApp, expectError, registerDevice, useGatewayStack, waitForCampaign } from "./harness.js";

// POST /v1/push/send-to-devices through the gateway's build() against the real credential,
// device-registry and campaign services. No sender runs: a campaign with an audience stays
// "sending" once fanned out, with audience_size the devices handed to the senders.
const gw = useGatewayStack();

const sendBody = (appId: string, deviceIds: unknown, extra: Record<string, unknown> = {}) => ({
  app_id: appId,
  name: "Test push",
  contents: { en: { title: "Test", body: "Push works" } },
  device_ids: deviceIds,
  ...extra,
});
const sendToDevices = (body: unknown, token = gw.key, headers: Record<string, string> = {}) =>
  gw.call("POST", "/v1/push/send-to-devices", token, body, headers);

const register = (appId: string, platform: "ios" | "android", extra: Record<string, unknown> = {}) =>
  registerDevice(gw, gw.key, appId, { push_token: platform === "ios" ? apnsToken() : fcmToken(), platform, ...extra });

/** Polls the campaign until fan-out is over: sending with its audience, or completed. */
const fannedOut = (id: string) =>
  waitForCampaign(
    gw,
    gw.key,
    id,
    ({ status, audience_size }) => status === "completed" || (status === "sending" && audience_size > 0),
    `campaign ${id} to fan out`,
  );

describe("POST /v1/push/send-to-devices", () => {
  it("sends to exactly the chosen device, not the other devices of its user", async () => {
    const app = await createApp(gw, gw.key);
    const chosen = await register(app.id, "ios", { external_id: "user-1" });
    await register(app.id, "android", { external_id: "user-1" });
    await register(app.id, "ios");
    const res = await sendToDevices(sendBody(app.id, [chosen.toUpperCase(), chosen]));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      app_id: app.id,
      name: "Test push",
      target: { type: "devices", device_ids: [chosen] },
    });
    expect(res.headers["idempotent-replayed"]).toBeUndefined();
    const done = await fannedOut(res.body.id);
    expect(done).toMatchObject({ status: "sending", audience_size: 1 });
  });

  it("reaches a device without an external id, and counts only the app's targetable devices", async () => {
    const app = await createApp(gw, gw.key);
    const bare = await register(app.id, "android");
    const optedOut = await register(app.id, "ios");
    expect((await gw.call("POST", `/v1/devices/${optedOut}/opt-out`, gw.key)).status).toBe(200);
    const other = await createApp(gw, gw.key);
    const elsewhere = await register(other.id, "ios");
    const res = await sendToDevices(sendBody(app.id, [bare, optedOut, elsewhere, randomUUID()]));
    expect(res.status, res.text).toBe(201);
    expect((await fannedOut(res.body.id)).audience_size).toBe(1);
  });

  it("completes at once when none of the ids is a device of the app", async () => {
    const app = await createApp(gw, gw.key);
    const other = await createApp(gw, gw.key);
    const elsewhere = await register(other.id, "ios");
    const res = await sendToDevices(sendBody(app.id, [elsewhere, randomUUID()]));
    expect(res.status, res.text).toBe(201);
    expect(await fannedOut(res.body.id)).toMatchObject({ status: "completed", audience_size: 0 });
  });

  it("schedules like the other sends", async () => {
    const app = await createApp(gw, gw.key);
    const device = await register(app.id, "ios");
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const res = await sendToDevices(sendBody(app.id, [device], { scheduled_at: at }));
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: "scheduled", scheduled_at: at });
  });

  it("answers 400 for missing, empty, malformed or too many ids, with the field", async () => {
    const app = await createApp(gw, gw.key);
    const hundredAndOne = Array.from({ length: 101 }, () => randomUUID());
    const bad: [unknown, string][] = [
      [{ app_id: app.id, name: "x", contents: { en: { title: "x" } } }, "/device_ids"],
      [sendBody(app.id, []), "/device_ids"],
      [sendBody(app.id, ["device-1"]), "/device_ids/0"],
      [sendBody(app.id, randomUUID()), "/device_ids"],
      [sendBody(app.id, hundredAndOne), "/device_ids"],
      [sendBody(app.id, [randomUUID()], { external_ids: ["u1"] }), "/external_ids"],
    ];
    for (const [body, field] of bad) {
      const res = await sendToDevices(body);
      expectError(res, 400, "ValidationError");
      expect(res.body.details?.[0]?.field, JSON.stringify(body).slice(0, 80)).toBe(field);
    }
    expect(
      (
        await sendToDevices(
          sendBody(app.id, hundredAndOne.slice(1), { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }),
        )
      ).status,
    ).toBe(201);
  });

  it("answers 422 without an en entry and 404 for an unknown app, as the other sends", async () => {
    const app = await createApp(gw, gw.key);
    const res = await sendToDevices({
      app_id: app.id,
      name: "x",
      contents: { de: { title: "Hallo" } },
      device_ids: [randomUUID()],
    });
    expectError(res, 422, "UnprocessableEntity");
    expectError(await sendToDevices(sendBody(randomUUID(), [randomUUID()])), 404, "NotFound");
  });

  it("keeps an app-scoped key to its own app", async () => {
    const mine = await createApp(gw, gw.key);
    const other = await createApp(gw, gw.key);
    const created = await gw.call("POST", `/v1/apps/${mine.id}/api-keys`, gw.key, { name: "app", scope: "app" });
    expect(created.status, created.text).toBe(201);
    const scoped = created.body.secret as string;
    const theirs = await register(other.id, "ios");
    expectError(await sendToDevices(sendBody(other.id, [theirs]), scoped), 403, "Forbidden");
    const own = await sendToDevices(sendBody(mine.id, [theirs]), scoped);
    expect(own.status, own.text).toBe(201);
    expect((await fannedOut(own.body.id)).audience_size).toBe(0);
  });

  it("replays a retried send with the same Idempotency-Key", async () => {
    const app = await createApp(gw, gw.key);
    const device = await register(app.id, "ios");
    const headers = { "idempotency-key": `test-push-${randomUUID()}` };
    const first = await sendToDevices(sendBody(app.id, [device]), gw.key, headers);
    expect(first.status, first.text).toBe(201);
    const replay = await sendToDevices(sendBody(app.id, [device]), gw.key, headers);
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body).toMatchObject({ id: first.body.id, target: { type: "devices", device_ids: [device] } });
    const again = await sendToDevices(sendBody(app.id, [device]), gw.key, {
      "idempotency-key": `test-push-${randomUUID()}`,
    });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });
});
