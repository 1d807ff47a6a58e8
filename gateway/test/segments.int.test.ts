import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { apnsToken, fcmToken } from "../../test/support/device-tokens.js";
import {
  createApp,
  expectDeleted,
  expectError,
  ISO_TIMESTAMP as ISO,
  registerDevice,
  useGatewayStack,
} from "./harness.js";

// Segments through the gateway against the real device registry, and sends to them
// through the real campaign service.
const gw = useGatewayStack();

const contents = { en: { title: "Beta", body: "New build available" } };

const register = (appId: string, device: Record<string, unknown>) => registerDevice(gw, gw.key, appId, device);

describe("segments", () => {
  it("creates, reads, lists, updates and deletes a segment", async () => {
    const app = await createApp(gw, gw.key);
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["beta"], language: "de-AT" });
    await register(app.id, { push_token: fcmToken(), platform: "android", tags: ["beta", "churned"] });
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["vip"] });

    const created = await gw.call("POST", "/v1/segments", gw.key, {
      app_id: app.id,
      name: "Beta testers",
      rule: { tags_any: ["beta"], tags_none: ["churned"], languages: ["DE"] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      app_id: app.id,
      name: "Beta testers",
      rule: { tags_any: ["beta"], tags_none: ["churned"], languages: ["de"] },
      preview_count: 1,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const id = created.body.id as string;

    expect((await gw.call("GET", `/v1/segments/${id}`, gw.key)).body).toEqual(created.body);

    const list = await gw.call("GET", `/v1/segments?app_id=${app.id}`, gw.key);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 50, total: 1 });
    expect(list.body.data).toEqual([{ ...created.body, preview_count: null }]);

    const renamed = await gw.call("PUT", `/v1/segments/${id}`, gw.key, { name: "Beta (all)" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: "Beta (all)", rule: created.body.rule });
    const ruled = await gw.call("PUT", `/v1/segments/${id}`, gw.key, {
      rule: { platforms: ["ios"], has_external_id: false },
    });
    expect(ruled.status, ruled.text).toBe(200);
    expect(ruled.body.rule).toEqual({ platforms: ["ios"], has_external_id: false });
    expect((await gw.call("GET", `/v1/segments/${id}`, gw.key)).body).toMatchObject({
      name: "Beta (all)",
      preview_count: 2,
    });

    await expectDeleted(gw, gw.key, `/v1/segments/${id}`);
  });

  it("answers 400 for bad rules, 409 for a taken name, 404 for unknown ids and apps", async () => {
    const app = await createApp(gw, gw.key);
    for (const rule of [
      {},
      { tags: ["x"] },
      { platforms: ["windows"] },
      { languages: ["xx"] },
      { timezones: ["Mars/Olympus"] },
    ]) {
      expectError(
        await gw.call("POST", "/v1/segments", gw.key, { app_id: app.id, name: "bad", rule }),
        400,
        "ValidationError",
      );
    }
    const body = { app_id: app.id, name: "Taken", rule: { tags_all: ["a"] } };
    expect((await gw.call("POST", "/v1/segments", gw.key, body)).status).toBe(201);
    expectError(await gw.call("POST", "/v1/segments", gw.key, body), 409, "Conflict");
    expectError(await gw.call("POST", "/v1/segments", gw.key, { ...body, app_id: randomUUID() }), 404, "NotFound");
    for (const [method, id] of [
      ["GET", randomUUID()],
      ["PUT", randomUUID()],
      ["DELETE", randomUUID()],
      ["GET", "nope"],
    ] as const) {
      expectError(
        await gw.call(method, `/v1/segments/${id}`, gw.key, method === "PUT" ? { name: "x" } : undefined),
        404,
        "NotFound",
      );
    }
    expectError(await gw.call("GET", "/v1/segments", gw.key), 400, "ValidationError");
  });

  it("keeps app-scoped keys to their own app's segments", async () => {
    const mine = await createApp(gw, gw.key);
    const other = await createApp(gw, gw.key);
    const keyRes = await gw.call("POST", `/v1/apps/${mine.id}/api-keys`, gw.key, { name: "app", scope: "app" });
    const scoped = keyRes.body.secret as string;
    const theirs = await gw.call("POST", "/v1/segments", gw.key, {
      app_id: other.id,
      name: "Theirs",
      rule: { tags_any: ["x"] },
    });
    expect(theirs.status).toBe(201);
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { name: "Mine now" }],
      ["DELETE", undefined],
    ] as const) {
      expectError(await gw.call(method, `/v1/segments/${theirs.body.id}`, scoped, body), 403, "Forbidden");
    }
    expectError(
      await gw.call("POST", "/v1/segments", scoped, { app_id: other.id, name: "x", rule: { tags_any: ["x"] } }),
      403,
      "Forbidden",
    );
    const own = await gw.call("POST", "/v1/segments", scoped, {
      app_id: mine.id,
      name: "Mine",
      rule: { tags_any: ["x"] },
    });
    expect(own.status, own.text).toBe(201);
    const list = await gw.call("GET", "/v1/segments", scoped);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([own.body.id]);
    expect((await gw.call("GET", `/v1/segments/${theirs.body.id}`, gw.key)).body.name).toBe("Theirs");
  });
});

describe("POST /v1/push/send-to-segment", () => {
  it("creates a campaign targeting the segment", async () => {
    const app = await createApp(gw, gw.key);
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["beta"] });
    await register(app.id, { push_token: apnsToken(), platform: "ios", tags: ["vip"] });
    const segment = await gw.call("POST", "/v1/segments", gw.key, {
      app_id: app.id,
      name: "Beta",
      rule: { tags_any: ["beta"] },
    });
    expect(segment.status, segment.text).toBe(201);

    const res = await gw.call("POST", "/v1/push/send-to-segment", gw.key, {
      app_id: app.id,
      name: "Beta build",
      contents,
      segment_id: segment.body.id,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ app_id: app.id, target: { type: "segment", segment_id: segment.body.id } });
    expect(res.body.status).toMatch(/^(queued|sending|completed)$/);

    // The segment of another app is as unknown to this app as a missing one.
    const other = await createApp(gw, gw.key);
    const res2 = await gw.call("POST", "/v1/push/send-to-segment", gw.key, {
      app_id: other.id,
      name: "x",
      contents,
      segment_id: segment.body.id,
    });
    expectError(res2, 404, "NotFound");
  });
});
