import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { PUSH_TOKEN_HEADER, PUSH_TOKEN_MISMATCH, PUSH_TOKEN_REQUIRED } from "../src/client-key-policy.js";
import {
  createApp,
  expectDeleted,
  expectError,
  ISO_TIMESTAMP as ISO,
  registerDevice,
  useGatewayStack,
} from "./harness.js";

// In-app messages through the gateway against the real device registry: the app's CRUD
// and the device-facing fetch and events, with server keys and with client keys.
const gw = useGatewayStack({ rateLimitPerMinute: 1_000_000 });

const en = (title: string) => ({ en: { title, body: `${title} body` } });
const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

async function newApp() {
  const app = await createApp(gw, gw.key);
  return { id: app.id, base: `/v1/apps/${app.id}/in-app-messages` };
}

/** The app's segment "vips": devices tagged vip. */
async function vipSegment(appId: string) {
  const res = await gw.call("POST", "/v1/segments", gw.key, {
    app_id: appId,
    name: "vips",
    rule: { tags_any: ["vip"] },
  });
  expect(res.status, res.text).toBe(201);
  return res;
}

async function createMessage(base: string, body: Record<string, unknown>) {
  const res = await gw.call("POST", base, gw.key, { audience: { kind: "all" }, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; stats: Record<string, number> };
}

const register = (appId: string, fields: Record<string, unknown> = {}, token = apnsToken()) =>
  registerDevice(gw, gw.key, appId, { push_token: token, platform: "ios", ...fields });

const fetchFor = async (deviceId: string) => {
  const res = await gw.call("GET", `/v1/devices/${deviceId}/in-app-messages`, gw.key);
  expect(res.status, res.text).toBe(200);
  return res.body.data as { id: string; language: string; title: string; body: string }[];
};

const report = (deviceId: string, messageId: string, type: string) =>
  gw.call("POST", `/v1/devices/${deviceId}/in-app-messages/${messageId}/events`, gw.key, { type });

describe("in-app messages", () => {
  it("creates, reads, lists, updates and deletes a message", async () => {
    const { id: appId, base } = await newApp();
    const segment = await vipSegment(appId);
    const message = {
      name: "Spring sale",
      contents: { en: { title: "Sale", body: "50% off" }, de: { title: "Angebot", body: "50 % Rabatt" } },
      image_url: "https://cdn.example/sale.png",
      action_url: "https://example.com/sale",
      audience: { kind: "segment", segment_id: segment.body.id },
      starts_at: "2026-01-01T00:00:00Z",
      ends_at: "2099-01-01T00:00:00.000Z",
      priority: 10,
      max_impressions: 3,
    };
    const created = await gw.call("POST", base, gw.key, message);
    expect(created.status, created.text).toBe(201);
    // Every field as given (starts_at in the API's one timestamp format), and the rest.
    expect(created.body).toEqual({
      ...message,
      id: expect.any(String),
      app_id: appId,
      starts_at: "2026-01-01T00:00:00.000Z",
      stats: { impressions: 0, clicks: 0, dismissals: 0, devices: 0 },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const minimal = await gw.call("POST", base, gw.key, {
      name: "Hello",
      contents: en("Hello"),
      audience: { kind: "external_ids", external_ids: ["u1", "u2"] },
    });
    expect(minimal.body).toMatchObject({
      image_url: null,
      action_url: null,
      starts_at: null,
      ends_at: null,
      priority: 0,
      max_impressions: null,
      audience: { kind: "external_ids", external_ids: ["u1", "u2"] },
    });

    const one = `${base}/${created.body.id}`;
    expect((await gw.call("GET", one, gw.key)).body).toEqual(created.body);
    const list = await gw.call("GET", `${base}?per_page=1&page=2`, gw.key);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual({ data: [created.body], page: 2, per_page: 1, total: 2 });
    expect((await gw.call("GET", base, gw.key)).body).toMatchObject({ page: 1, per_page: 50, total: 2 });

    const updated = await gw.call("PATCH", one, gw.key, {
      name: "Renamed",
      image_url: null,
      starts_at: null,
      max_impressions: null,
      audience: { kind: "all" },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({
      name: "Renamed",
      image_url: null,
      starts_at: null,
      max_impressions: null,
      audience: { kind: "all" },
      ends_at: "2099-01-01T00:00:00.000Z",
      contents: created.body.contents,
      priority: 10,
    });

    await expectDeleted(gw, gw.key, one);
    expectError(await gw.call("PATCH", one, gw.key, { name: "x" }), 404, "NotFound");
  });

  it("answers 400 for malformed bodies, 404 for unknown ids and segments, 422 for the semantic rules", async () => {
    const { id: appId, base } = await newApp();
    const valid = { name: "x", contents: en("x"), audience: { kind: "all" } };
    for (const [body, field] of [
      [{ ...valid, name: "" }, "/name"],
      [{ contents: en("x"), audience: { kind: "all" } }, "/name"],
      [{ ...valid, contents: { EN: { title: "a", body: "b" } } }, "/contents/EN"],
      [{ ...valid, contents: { en: { title: "", body: "b" } } }, "/contents/en/title"],
      [{ ...valid, contents: { en: { title: "a" } } }, "/contents/en/body"],
      [{ ...valid, image_url: "http://example.com/a.png" }, "/image_url"],
      [{ ...valid, action_url: "ftp://example.com" }, "/action_url"],
      [{ ...valid, audience: { kind: "everyone" } }, "/audience/kind"],
      [{ ...valid, audience: { kind: "external_ids", external_ids: [] } }, "/audience/external_ids"],
      [{ ...valid, audience: { kind: "segment", segment_id: "beta" } }, "/audience/segment_id"],
      [{ ...valid, starts_at: "tomorrow" }, "/starts_at"],
      [{ ...valid, priority: 101 }, "/priority"],
      [{ ...valid, max_impressions: 0 }, "/max_impressions"],
      [{ ...valid, colour: "red" }, "/colour"],
    ] as const) {
      const res = await gw.call("POST", base, gw.key, body);
      expectError(res, 400, "ValidationError");
      expect(res.body.details?.[0]?.field, JSON.stringify(body)).toBe(field);
    }
    expectError(
      await gw.call("POST", base, gw.key, { ...valid, contents: { xx: { title: "a", body: "b" } } }),
      400,
      "ValidationError",
    );
    expectError(await gw.call("PATCH", `${base}/${randomUUID()}`, gw.key, {}), 400, "ValidationError");

    const noEn = await gw.call("POST", base, gw.key, { ...valid, contents: { de: { title: "a", body: "b" } } });
    expectError(noEn, 422, "UnprocessableEntity");
    expect(noEn.body.message).toBe('contents must include an "en" entry, the fallback language');
    const window = await gw.call("POST", base, gw.key, { ...valid, starts_at: inHours(2), ends_at: inHours(1) });
    expectError(window, 422, "UnprocessableEntity");
    expect(window.body.message).toBe("ends_at must be after starts_at");
    const message = await createMessage(base, { ...valid, starts_at: inHours(2) });
    expectError(
      await gw.call("PATCH", `${base}/${message.id}`, gw.key, { ends_at: inHours(1) }),
      422,
      "UnprocessableEntity",
    );

    const unknownSegment = await gw.call("POST", base, gw.key, {
      ...valid,
      audience: { kind: "segment", segment_id: randomUUID() },
    });
    expectError(unknownSegment, 404, "NotFound");
    expect(unknownSegment.body.message).toBe("segment not found");
    const other = await newApp();
    const foreign = await gw.call("POST", "/v1/segments", gw.key, {
      app_id: other.id,
      name: "x",
      rule: { tags_any: ["x"] },
    });
    expectError(
      await gw.call("POST", base, gw.key, { ...valid, audience: { kind: "segment", segment_id: foreign.body.id } }),
      404,
      "NotFound",
    );

    expectError(await gw.call("GET", `${base}/not-a-uuid`, gw.key), 404, "NotFound");
    expectError(await gw.call("GET", `/v1/apps/${randomUUID()}/in-app-messages`, gw.key), 404, "NotFound");
    // Another app's message is as unknown as a missing one.
    expectError(await gw.call("GET", `${other.base}/${message.id}`, gw.key), 404, "NotFound");
    expectError(await gw.call("GET", `${base}?per_page=201`, gw.key), 400, "ValidationError");
    expect(appId).toBeTruthy();
  });
});

describe("the device-facing fetch", () => {
  it("renders each device's language, falling back to en", async () => {
    const { id: appId, base } = await newApp();
    const message = await createMessage(base, {
      name: "x",
      contents: { en: { title: "Hello", body: "World" }, de: { title: "Hallo", body: "Welt" } },
      image_url: "https://cdn.example/a.png",
      action_url: "https://example.com/go",
      ends_at: "2099-01-01T00:00:00.000Z",
      priority: 5,
    });
    const german = await register(appId, { language: "de-DE" });
    const japanese = await register(appId, { language: "ja" });
    expect(await fetchFor(german)).toEqual([
      {
        id: message.id,
        language: "de",
        title: "Hallo",
        body: "Welt",
        image_url: "https://cdn.example/a.png",
        action_url: "https://example.com/go",
        priority: 5,
        ends_at: "2099-01-01T00:00:00.000Z",
      },
    ]);
    expect(await fetchFor(japanese)).toEqual([
      expect.objectContaining({ id: message.id, language: "en", title: "Hello", body: "World" }),
    ]);
    expectError(await gw.call("GET", `/v1/devices/${randomUUID()}/in-app-messages`, gw.key), 404, "NotFound");
  });

  it("selects by audience: all, a segment's rule, external ids; opted-out devices included", async () => {
    const { id: appId, base } = await newApp();
    const segment = await vipSegment(appId);
    const all = await createMessage(base, { name: "all", contents: en("all") });
    const vips = await createMessage(base, {
      name: "vips",
      contents: en("vips"),
      audience: { kind: "segment", segment_id: segment.body.id },
    });
    const users = await createMessage(base, {
      name: "users",
      contents: en("users"),
      audience: { kind: "external_ids", external_ids: ["u1"] },
    });
    const vip = await register(appId, { tags: ["vip"] });
    const user = await register(appId, { external_id: "u1" });
    const plain = await register(appId);
    const ids = async (d: string) => new Set((await fetchFor(d)).map((m) => m.id));
    expect(await ids(vip)).toEqual(new Set([all.id, vips.id]));
    expect(await ids(user)).toEqual(new Set([all.id, users.id]));
    expect(await ids(plain)).toEqual(new Set([all.id]));
    expect((await gw.call("POST", `/v1/devices/${vip}/opt-out`, gw.key)).status).toBe(200);
    expect(await ids(vip)).toEqual(new Set([all.id, vips.id]));

    // Events on a message that does not apply to the device, or of another app: 404.
    expectError(await report(plain, vips.id, "impression"), 404, "NotFound");
    expectError(await report(plain, users.id, "click"), 404, "NotFound");
    const other = await newApp();
    const foreign = await createMessage(other.base, { name: "x", contents: en("x") });
    expectError(await report(plain, foreign.id, "impression"), 404, "NotFound");
    expectError(await report(plain, randomUUID(), "impression"), 404, "NotFound");
    expectError(await report(plain, all.id, "viewed"), 400, "ValidationError");
  });

  it("returns only messages active now, by priority and then newest", async () => {
    const { id: appId, base } = await newApp();
    await createMessage(base, { name: "later", contents: en("later"), starts_at: inHours(1) });
    await createMessage(base, { name: "over", contents: en("over"), starts_at: inHours(-2), ends_at: inHours(-1) });
    const running = await createMessage(base, {
      name: "running",
      contents: en("running"),
      starts_at: inHours(-1),
      ends_at: inHours(1),
    });
    const low = await createMessage(base, { name: "low", contents: en("low") });
    const high = await createMessage(base, { name: "high", contents: en("high"), priority: 80 });
    const mid = await createMessage(base, { name: "mid", contents: en("mid"), priority: 40 });
    const device = await register(appId);
    expect((await fetchFor(device)).map((m) => m.id)).toEqual([high.id, mid.id, low.id, running.id]);
  });

  it("counts impressions up to max_impressions (then 409 and no longer fetched), clicks and dismissals", async () => {
    const { id: appId, base } = await newApp();
    const limited = await createMessage(base, { name: "limited", contents: en("limited"), max_impressions: 2 });
    const open = await createMessage(base, { name: "open", contents: en("open") });
    const a = await register(appId);
    const b = await register(appId);

    for (let i = 0; i < 2; i++) expect((await report(a, limited.id, "impression")).status).toBe(204);
    const over = await report(a, limited.id, "impression");
    expectError(over, 409, "Conflict");
    expect((await fetchFor(a)).map((m) => m.id)).toEqual([open.id]);
    expect((await report(a, limited.id, "click")).status).toBe(204);

    expect((await report(b, limited.id, "impression")).status).toBe(204);
    expect((await report(b, limited.id, "dismiss")).status).toBe(204);
    expect((await report(b, limited.id, "dismiss")).status).toBe(204);
    expect((await fetchFor(b)).map((m) => m.id)).toEqual([open.id]);

    const stats = (await gw.call("GET", `${base}/${limited.id}`, gw.key)).body.stats;
    expect(stats).toEqual({ impressions: 3, clicks: 1, dismissals: 1, devices: 2 });
    expect((await gw.call("GET", `${base}/${open.id}`, gw.key)).body.stats).toEqual({
      impressions: 0,
      clicks: 0,
      dismissals: 0,
      devices: 0,
    });
  });
});

describe("client keys", () => {
  it("fetch and acknowledge only for their own device, with its push token", async () => {
    const { id: appId, base } = await newApp();
    const message = await createMessage(base, { name: "x", contents: en("Hello") });
    const clientKey = await gw.call("POST", `/v1/apps/${appId}/api-keys`, gw.key, { name: "app", kind: "client" });
    expect(clientKey.status, clientKey.text).toBe(201);
    const client = clientKey.body.secret as string;
    const token = apnsToken();
    const device = await register(appId, { language: "de" }, token);
    const fetchPath = `/v1/devices/${device}/in-app-messages`;
    const eventPath = `${fetchPath}/${message.id}/events`;

    const missing = await gw.call("GET", fetchPath, client);
    expectError(missing, 403, "Forbidden");
    expect(missing.body.message).toBe(PUSH_TOKEN_REQUIRED);
    const noProof = await gw.call("POST", eventPath, client, { type: "impression" });
    expect(noProof.body).toEqual({ error: "Forbidden", message: PUSH_TOKEN_REQUIRED });
    const wrong = await gw.call(
      "POST",
      eventPath,
      client,
      { type: "impression" },
      { [PUSH_TOKEN_HEADER]: apnsToken() },
    );
    expect(wrong.body).toEqual({ error: "Forbidden", message: PUSH_TOKEN_MISMATCH });

    const proof = { [PUSH_TOKEN_HEADER]: token };
    const fetched = await gw.call("GET", fetchPath, client, undefined, proof);
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.data).toEqual([expect.objectContaining({ id: message.id, language: "en", title: "Hello" })]);
    expect((await gw.call("POST", eventPath, client, { type: "impression" }, proof)).status).toBe(204);
    expect((await gw.call("POST", eventPath, client, { type: "click" }, proof)).status).toBe(204);
    expect((await gw.call("GET", `${base}/${message.id}`, gw.key)).body.stats).toMatchObject({
      impressions: 1,
      clicks: 1,
      devices: 1,
    });

    // The app's messages themselves are not for client keys.
    expectError(await gw.call("GET", base, client), 403, "Forbidden");
    expectError(
      await gw.call("POST", base, client, { name: "x", contents: en("x"), audience: { kind: "all" } }),
      403,
      "Forbidden",
    );

    // Another app's client key, even with the right token: 403, and nothing is counted.
    const other = await newApp();
    const otherKey = await gw.call("POST", `/v1/apps/${other.id}/api-keys`, gw.key, { name: "app", kind: "client" });
    const foreign = otherKey.body.secret as string;
    expectError(await gw.call("GET", fetchPath, foreign, undefined, proof), 403, "Forbidden");
    expectError(await gw.call("POST", eventPath, foreign, { type: "dismiss" }, proof), 403, "Forbidden");
    expect((await gw.call("GET", `${base}/${message.id}`, gw.key)).body.stats.dismissals).toBe(0);
  });
});
