import { describe, expect, it } from "vitest";
import { createApp, expectDeleted, expectError, ISO_TIMESTAMP as ISO, useGatewayStack } from "./harness.js";

// Android channels through the gateway against the real device registry, and sends
// naming them (and the other delivery options) through the real campaign service.
const gw = useGatewayStack();

const contents = { en: { title: "Breaking", body: "Something happened" } };

describe("android channels", () => {
  it("creates, reads, lists, updates and deletes a channel", async () => {
    const app = await createApp(gw, gw.key, "android");
    const base = `/v1/apps/${app.id}/android-channels`;
    const news = {
      id: "news",
      name: "Breaking news",
      description: "Headlines as they happen.",
      importance: "high",
      sound: "chime",
      vibration: [0, 250, 250, 250],
      lights: "#FF6600",
      badge: false,
      group: "media",
    };
    const created = await gw.call("POST", base, gw.key, news);
    expect(created.status, created.text).toBe(201);
    // Every field as given, and nothing else but the app and the timestamps.
    expect(created.body).toEqual({
      ...news,
      app_id: app.id,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const minimal = await gw.call("POST", base, gw.key, { id: "a.quiet_one-1", name: "Quiet" });
    expect(minimal.body).toMatchObject({
      description: "",
      importance: "default",
      sound: null,
      vibration: false,
      lights: false,
      badge: true,
      group: null,
    });

    expect((await gw.call("GET", `${base}/news`, gw.key)).body).toEqual(created.body);
    const list = await gw.call("GET", base, gw.key);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({ data: [minimal.body, created.body], page: 1, per_page: 100, total: 2 });

    const updated = await gw.call("PATCH", `${base}/news`, gw.key, {
      name: "News",
      vibration: true,
      lights: false,
      sound: null,
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      name: "News",
      vibration: true,
      lights: false,
      sound: null,
      importance: "high",
    });

    expectError(await gw.call("POST", base, gw.key, { id: "news", name: "Again" }), 409, "Conflict");
    await expectDeleted(gw, gw.key, `${base}/news`);
    expectError(await gw.call("PATCH", `${base}/news`, gw.key, { name: "x" }), 404, "NotFound");
  });

  it("refuses malformed channels with 400", async () => {
    const app = await createApp(gw, gw.key, "android");
    const base = `/v1/apps/${app.id}/android-channels`;
    for (const body of [
      { id: "has space", name: "x" },
      { id: "x".repeat(65), name: "x" },
      { id: "ok" },
      { id: "ok", name: "x", importance: "urgent" },
      { id: "ok", name: "x", lights: "orange" },
      { id: "ok", name: "x", vibration: [] },
      { id: "ok", name: "x", extra: 1 },
    ]) {
      expectError(await gw.call("POST", base, gw.key, body), 400, "ValidationError");
    }
    expectError(await gw.call("PATCH", `${base}/ok`, gw.key, {}), 400, "ValidationError");
  });

  it("answers the sync read with a strong ETag and 304 while the list is unchanged", async () => {
    const app = await createApp(gw, gw.key, "android");
    const base = `/v1/apps/${app.id}/android-channels`;
    const empty = await gw.call("GET", base, gw.key);
    expect(empty.body).toEqual({ data: [], page: 1, per_page: 100, total: 0 });
    const etag = empty.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const unchanged = await gw.call("GET", base, gw.key, undefined, { "if-none-match": etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe("");
    expect(unchanged.headers.etag).toBe(etag);
    expect((await gw.call("GET", base, gw.key, undefined, { "if-none-match": `"other", W/${etag}` })).status).toBe(304);

    await gw.call("POST", base, gw.key, { id: "news", name: "News" });
    const changed = await gw.call("GET", base, gw.key, undefined, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(
      (await gw.call("GET", base, gw.key, undefined, { "if-none-match": changed.headers.etag as string })).status,
    ).toBe(304);
    await gw.call("PATCH", `${base}/news`, gw.key, { importance: "low" });
    expect(
      (await gw.call("GET", base, gw.key, undefined, { "if-none-match": changed.headers.etag as string })).status,
    ).toBe(200);
  });

  it("keeps each app's channels to itself", async () => {
    const [a, b] = [await createApp(gw, gw.key, "android"), await createApp(gw, gw.key, "android")];
    await gw.call("POST", `/v1/apps/${a.id}/android-channels`, gw.key, { id: "news", name: "News" });
    expect((await gw.call("GET", `/v1/apps/${b.id}/android-channels`, gw.key)).body).toMatchObject({ total: 0 });
    expectError(await gw.call("GET", `/v1/apps/${b.id}/android-channels/news`, gw.key), 404, "NotFound");
  });
});

describe("delivery options on sends", () => {
  it("accepts a known channel and the other options, and shows them on the campaign", async () => {
    const app = await createApp(gw, gw.key, "android");
    await gw.call("POST", `/v1/apps/${app.id}/android-channels`, gw.key, { id: "news", name: "News" });
    const options = {
      sound: "chime",
      badge: 3,
      thread_id: "t-1",
      mutable_content: true,
      icon: "https://acme.example/icon.png",
      web_badge: "https://acme.example/badge.png",
      actions: [{ action: "open", title: "Open", icon: "https://acme.example/open.png" }],
      android_channel_id: "news",
    };
    const sent = await gw.call("POST", "/v1/push/send", gw.key, { app_id: app.id, name: "n", contents, ...options });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body).toMatchObject(options);
    expect((await gw.call("GET", `/v1/campaigns/${sent.body.id}`, gw.key)).body).toMatchObject(options);

    const plain = await gw.call("POST", "/v1/push/send", gw.key, { app_id: app.id, name: "n", contents });
    expect(plain.body).not.toHaveProperty("sound");
    expect(plain.body).not.toHaveProperty("android_channel_id");
  });

  it("answers 422 for a channel the app does not have, on every send endpoint", async () => {
    const [app, other] = [await createApp(gw, gw.key, "android"), await createApp(gw, gw.key, "android")];
    await gw.call("POST", `/v1/apps/${other.id}/android-channels`, gw.key, { id: "news", name: "News" });
    const common = { app_id: app.id, name: "n", contents, android_channel_id: "news" };
    for (const [path, target] of [
      ["/v1/push/send", {}],
      ["/v1/push/send-to-users", { external_ids: ["u1"] }],
      ["/v1/push/send-to-devices", { device_ids: ["2b5f6a0e-8c1d-4e7a-9f3b-6d2c1a0e9b47"] }],
    ] as const) {
      const res = await gw.call("POST", path, gw.key, { ...common, ...target });
      expectError(res, 422, "UnprocessableEntity");
      expect(res.body.message).toMatch(/android_channel_id "news"/);
    }
  });

  it("answers 400 for malformed options and 422 for a silent push that would show something", async () => {
    const app = await createApp(gw, gw.key, "android");
    const send = (extra: Record<string, unknown>) =>
      gw.call("POST", "/v1/push/send", gw.key, { app_id: app.id, name: "n", contents, ...extra });
    for (const extra of [
      { badge: 1, badge_increment: 1 },
      { badge: -1 },
      { badge_increment: 0 },
      { sound: "../x" },
      { thread_id: "" },
      { icon: "http://insecure.example/i.png" },
      { web_badge: "not a url" },
      {
        actions: [
          { action: "a", title: "A" },
          { action: "b", title: "B" },
          { action: "c", title: "C" },
        ],
      },
      {
        actions: [
          { action: "a", title: "A" },
          { action: "a", title: "B" },
        ],
      },
      { actions: [{ action: "a" }] },
      { android_channel_id: "bad id" },
      { content_available: "yes" },
    ]) {
      expectError(await send(extra), 400, "ValidationError");
    }
    for (const extra of [
      { sound: "default" },
      { badge: 2 },
      { mutable_content: true },
      { image_url: "https://acme.example/i.png" },
    ]) {
      const res = await send({ content_available: true, ...extra });
      expectError(res, 422, "UnprocessableEntity");
      expect(res.body.message).toMatch(/content_available/);
    }
    const silent = await send({ content_available: true, data: { sync: "inbox" } });
    expect(silent.status, silent.text).toBe(201);
    expect(silent.body).toMatchObject({ content_available: true });
  });
});
