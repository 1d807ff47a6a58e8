import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DeviceRegistryService } from "@herald/proto/device";
import { createRpcClient } from "@herald/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apnsToken, fcmToken } from "../../test/support/device-tokens.js";
import { appScopedKey, createApp, expectError, registerDevice, useGatewayStack } from "./harness.js";

// The server-side filters of GET /v1/devices and GET /v1/campaigns, and the segment
// preview count, through the gateway against the real registry and campaign service.
const gw = useGatewayStack();
let registry: ReturnType<typeof createRpcClient<typeof DeviceRegistryService>>;

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

const register = (appId: string, device: Record<string, unknown>) => registerDevice(gw, gw.key, appId, device);

/** The ids a device list answers, and its total. */
async function listed(appId: string, filters: string): Promise<{ ids: string[]; total: number }> {
  const res = await gw.call("GET", `/v1/devices?app_id=${appId}&${filters}`, gw.key);
  expect(res.status, `${filters}: ${res.text}`).toBe(200);
  return { ids: res.body.data.map((d: { id: string }) => d.id), total: res.body.total };
}

beforeAll(() => {
  registry = createRpcClient(DeviceRegistryService, gw.backends.deviceRegistryUrl);
});

afterAll(() => {
  registry?.close();
});

describe("GET /v1/devices filters", () => {
  let appId: string;
  const ids = {} as Record<"iosEn" | "iosDe" | "androidDe" | "androidPt" | "optedOut" | "dead", string>;

  beforeAll(async () => {
    appId = (await createApp(gw, gw.key)).id;
    ids.iosEn = await register(appId, { push_token: apnsToken(), platform: "ios", language: "en", external_id: "u-1" });
    ids.iosDe = await register(appId, { push_token: apnsToken(), platform: "ios", language: "de-AT" });
    ids.androidDe = await register(appId, { push_token: fcmToken(), platform: "android", language: "de" });
    ids.androidPt = await register(appId, {
      push_token: fcmToken(),
      platform: "android",
      language: "pt-BR",
      external_id: "u-2",
    });
    ids.optedOut = await register(appId, { push_token: apnsToken(), platform: "ios", external_id: "u-1" });
    expect((await gw.call("POST", `/v1/devices/${ids.optedOut}/opt-out`, gw.key)).status).toBe(200);
    ids.dead = await register(appId, { push_token: fcmToken(), platform: "android", language: "en" });
    const { invalidated } = await registry.client.invalidateDevices({
      invalidations: [
        { deviceId: ids.dead, observedAt: timestampFromDate(new Date(Date.now() + 60_000)), reason: "Unregistered" },
      ],
    });
    expect(invalidated).toBe(1);
    // Another app's devices never show up.
    const other = await createApp(gw, gw.key);
    await register(other.id, { push_token: apnsToken(), platform: "ios", language: "en", external_id: "u-1" });
  });

  it("filters by each field, in registration order, with total counting the matches", async () => {
    expect(await listed(appId, "platform=ios")).toEqual({ ids: [ids.iosEn, ids.iosDe, ids.optedOut], total: 3 });
    expect(await listed(appId, "platform=web")).toEqual({ ids: [], total: 0 });
    expect(await listed(appId, "language=de")).toEqual({ ids: [ids.iosDe, ids.androidDe], total: 2 });
    // Normalised as on registration: a region is dropped, case does not matter.
    expect(await listed(appId, "language=PT-pt")).toEqual({ ids: [ids.androidPt], total: 1 });
    expect(await listed(appId, "opted_in=false")).toEqual({ ids: [ids.optedOut], total: 1 });
    expect((await listed(appId, "opted_in=true")).total).toBe(5);
    expect(await listed(appId, "invalid=true")).toEqual({ ids: [ids.dead], total: 1 });
    expect((await listed(appId, "invalid=false")).total).toBe(5);
    expect(await listed(appId, "external_id=u-1")).toEqual({ ids: [ids.iosEn, ids.optedOut], total: 2 });
    expect(await listed(appId, "external_id=U-1")).toEqual({ ids: [], total: 0 });
  });

  it("combines filters with AND and pages the matches", async () => {
    expect(await listed(appId, "platform=ios&language=de")).toEqual({ ids: [ids.iosDe], total: 1 });
    expect(await listed(appId, "platform=ios&opted_in=true&external_id=u-1")).toEqual({ ids: [ids.iosEn], total: 1 });
    expect(await listed(appId, "platform=android&invalid=false&language=en")).toEqual({ ids: [], total: 0 });
    const page2 = await gw.call("GET", `/v1/devices?app_id=${appId}&platform=ios&per_page=2&page=2`, gw.key);
    expect(page2.status, page2.text).toBe(200);
    expect(page2.body).toMatchObject({ page: 2, per_page: 2, total: 3 });
    expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([ids.optedOut]);
  });

  it("answers 400 ValidationError for bad filter values", async () => {
    for (const bad of [
      "platform=windows",
      "platform=IOS",
      "language=x",
      "language=zz",
      "language=english!",
      "opted_in=yes",
      "invalid=maybe",
      "external_id=",
      `external_id=${"x".repeat(256)}`,
      "platform=ios&platform=web",
    ]) {
      const res = await gw.call("GET", `/v1/devices?app_id=${appId}&${bad}`, gw.key);
      expectError(res, 400, "ValidationError");
    }
  });

  it("keeps callers to their own apps", async () => {
    const mine = await createApp(gw, gw.key);
    const scoped = await appScopedKey(gw, gw.key, mine.id);
    expectError(await gw.call("GET", `/v1/devices?app_id=${appId}&platform=ios`, scoped), 403, "Forbidden");
    expectError(await gw.call("GET", `/v1/devices?app_id=${randomUUID()}&platform=ios`, gw.key), 404, "NotFound");
    const own = await register(mine.id, { push_token: apnsToken(), platform: "ios" });
    const res = await gw.call("GET", "/v1/devices?platform=ios&opted_in=true", scoped);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([own]);
  });
});

describe("GET /v1/campaigns?status", () => {
  it("lists only campaigns in the status, newest first, with total counting them", async () => {
    const app = await createApp(gw, gw.key);
    const send = async (name: string) => {
      const res = await gw.call("POST", "/v1/push/send", gw.key, {
        app_id: app.id,
        name,
        contents: { en: { title: "Hi", body: "Later" } },
        scheduled_at: inAnHour(),
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const first = await send("first");
    const second = await send("second");
    const third = await send("third");
    expect((await gw.call("POST", `/v1/campaigns/${second}/cancel`, gw.key)).status).toBe(200);

    const names = async (query: string) => {
      const res = await gw.call("GET", `/v1/campaigns?app_id=${app.id}&${query}`, gw.key);
      expect(res.status, res.text).toBe(200);
      return { ids: res.body.data.map((c: { id: string }) => c.id), total: res.body.total };
    };
    expect(await names("status=scheduled")).toEqual({ ids: [third, first], total: 2 });
    expect(await names("status=cancelled")).toEqual({ ids: [second], total: 1 });
    expect(await names("status=completed")).toEqual({ ids: [], total: 0 });
    expect(await names("status=scheduled&per_page=1&page=2")).toEqual({ ids: [first], total: 2 });
    expect((await names("")).total).toBe(3);

    for (const bad of ["status=done", "status=SCHEDULED", "status=", "status=queued&status=failed"]) {
      expectError(await gw.call("GET", `/v1/campaigns?app_id=${app.id}&${bad}`, gw.key), 400, "ValidationError");
    }
    const scoped = await appScopedKey(gw, gw.key, (await createApp(gw, gw.key)).id);
    expectError(await gw.call("GET", `/v1/campaigns?app_id=${app.id}&status=scheduled`, scoped), 403, "Forbidden");
  });
});

describe("POST /v1/segments/preview", () => {
  it("counts the targetable devices a rule selects now, storing nothing", async () => {
    const app = await createApp(gw, gw.key);
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["beta"], language: "de-AT" });
    await register(app.id, { push_token: fcmToken(), platform: "android", tags: ["beta", "churned"] });
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["vip"], external_id: "u-9" });
    const optedOut = await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["beta"] });
    expect((await gw.call("POST", `/v1/devices/${optedOut}/opt-out`, gw.key)).status).toBe(200);

    const count = async (rule: Record<string, unknown>) => {
      const res = await gw.call("POST", "/v1/segments/preview", gw.key, { app_id: app.id, rule });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    expect(await count({ tags_any: ["beta"] })).toEqual({ count: 2 });
    expect(await count({ tags_any: ["beta"], tags_none: ["churned"], languages: ["DE"] })).toEqual({ count: 1 });
    expect(await count({ platforms: ["ios"] })).toEqual({ count: 2 });
    expect(await count({ has_external_id: true })).toEqual({ count: 1 });
    expect(await count({ tags_all: ["nobody"] })).toEqual({ count: 0 });

    // The same count a stored segment shows; and the preview stored none.
    const lists = await gw.call("GET", `/v1/segments?app_id=${app.id}`, gw.key);
    expect(lists.body.total).toBe(0);
    const saved = await gw.call("POST", "/v1/segments", gw.key, {
      app_id: app.id,
      name: "beta",
      rule: { tags_any: ["beta"] },
    });
    expect(saved.body.preview_count).toBe(2);
  });

  it("answers 400 for bad rules and bodies, naming the rule", async () => {
    const app = await createApp(gw, gw.key);
    for (const body of [
      {},
      { app_id: app.id },
      { app_id: app.id, rule: {} },
      { app_id: app.id, rule: { tags_any: [] } },
      { app_id: app.id, rule: { platforms: ["windows"] } },
      { app_id: app.id, rule: { colour: ["red"] } },
      { app_id: app.id, rule: { tags_any: ["a"] }, name: "extra" },
      { app_id: "not-a-uuid", rule: { tags_any: ["a"] } },
    ]) {
      expectError(await gw.call("POST", "/v1/segments/preview", gw.key, body), 400, "ValidationError");
    }
    const res = await gw.call("POST", "/v1/segments/preview", gw.key, { app_id: app.id, rule: { languages: ["zz"] } });
    expectError(res, 400, "ValidationError");
    expect(res.body.message).toMatch(/^rule\.languages must hold ISO 639-1 codes/);
  });

  it("answers 404 for an unknown app and 403 for another app than an app-scoped key's", async () => {
    const rule = { tags_any: ["beta"] };
    expectError(await gw.call("POST", "/v1/segments/preview", gw.key, { app_id: randomUUID(), rule }), 404, "NotFound");
    const mine = await createApp(gw, gw.key);
    const other = await createApp(gw, gw.key);
    const scoped = await appScopedKey(gw, gw.key, mine.id);
    expectError(await gw.call("POST", "/v1/segments/preview", scoped, { app_id: other.id, rule }), 403, "Forbidden");
    const own = await gw.call("POST", "/v1/segments/preview", scoped, { app_id: mine.id, rule });
    expect(own.status, own.text).toBe(200);
    expect(own.body).toEqual({ count: 0 });
  });
});
