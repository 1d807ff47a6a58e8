import { describe, expect, it } from "vitest";
import { sharedSchemas } from "./schemas/components.js";
import { listDevicesSchema, registerDeviceSchema, updateDeviceSchema } from "./schemas/devices.js";
import { createAppSchema, getAppSchema } from "./schemas/apps.js";
import { listCampaignsSchema } from "./schemas/campaigns.js";
import { putPlatformConfigSchema } from "./schemas/platform-config.js";
import { sendSchema, sendToSegmentSchema, sendToUsersSchema } from "./schemas/push.js";
import { createSegmentSchema, updateSegmentSchema } from "./schemas/segments.js";
import { createValidatorCompiler } from "./validation.js";

type Validate = ((data: unknown) => boolean) & {
  errors?: { keyword: string; instancePath: string; params: Record<string, unknown> }[] | null;
};

const compile = createValidatorCompiler(sharedSchemas);
const validator = (schema: object, httpPart: string) =>
  compile({ schema, httpPart, method: "POST", url: "/x" }) as unknown as Validate;

const P8 = "-----BEGIN PRIVATE KEY-----\nMIGT\n-----END PRIVATE KEY-----";

describe("body validation", () => {
  const createApp = validator(createAppSchema.body, "body");

  it("accepts a valid body and rejects wrong types without coercion", () => {
    expect(createApp({ name: "Acme", platform: "ios", bundle_id: "com.acme" })).toBe(true);
    expect(createApp({ name: 42, platform: "ios", bundle_id: "com.acme" })).toBe(false);
    expect(createApp.errors?.[0]).toMatchObject({ keyword: "type", instancePath: "/name" });
  });

  it("rejects unknown fields, missing fields and huge strings", () => {
    expect(createApp({ name: "a", platform: "ios", bundle_id: "com.acme", nmae: "typo" })).toBe(false);
    expect(createApp.errors?.[0]?.keyword).toBe("additionalProperties");
    expect(createApp({ name: "a", platform: "ios" })).toBe(false);
    expect(createApp.errors?.[0]?.keyword).toBe("required");
    expect(createApp({ name: "x".repeat(10_000), platform: "ios", bundle_id: "com.acme" })).toBe(false);
    expect(createApp.errors?.[0]?.keyword).toBe("maxLength");
    expect(createApp(undefined)).toBe(false);
  });

  it("selects the platform-config branch by platform", () => {
    const put = validator(putPlatformConfigSchema.body, "body");
    expect(put({ platform: "ios", apns_p8_key: P8, apns_key_id: "ABC123DEFG", apns_team_id: "DEF123GHIJ" })).toBe(true);
    expect(put({ platform: "android", fcm_service_account: { project_id: "p" } })).toBe(true);
    expect(put({ platform: "android", fcm_service_account: '{"project_id":"p"}' })).toBe(true);
    expect(put({ platform: "web", vapid_subject: "mailto:a@b.example" })).toBe(true);
    expect(put({ platform: "web" })).toBe(false);
    expect(put.errors?.[0]).toMatchObject({ keyword: "required", params: { missingProperty: "vapid_subject" } });
    expect(put({ platform: "ios", apns_p8_key: P8, apns_key_id: "A", apns_team_id: "B", vapid_subject: "x" })).toBe(
      false,
    );
    expect(put.errors?.[0]?.keyword).toBe("additionalProperties");
    expect(put({ platform: "blackberry" })).toBe(false);
    expect(put.errors?.[0]?.keyword).toBe("discriminator");
    expect(put({ platform: "android", fcm_service_account: 7 })).toBe(false);
  });

  it("validates device registration and lets updates clear fields with null", () => {
    const register = validator(registerDeviceSchema.body, "body");
    const app_id = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
    expect(register({ app_id, push_token: "t", platform: "web", tags: ["a"] })).toBe(true);
    expect(register({ app_id: "not-a-uuid", push_token: "t", platform: "web" })).toBe(false);
    expect(register({ app_id, push_token: "t", platform: "web", tags: "a" })).toBe(false);
    expect(register({ app_id, push_token: "t", platform: "web", tags: Array(101).fill("x") })).toBe(false);
    const update = validator(updateDeviceSchema.body, "body");
    expect(update({ external_id: null, language: "" })).toBe(true);
    expect(update({ opted_in: false })).toBe(false);
  });
});

describe("query and path validation", () => {
  it("coerces integers in query strings, applies defaults and enforces ranges", () => {
    const list = validator(listDevicesSchema.querystring, "querystring");
    const q: Record<string, unknown> = { page: "2" };
    expect(list(q)).toBe(true);
    expect(q).toEqual({ page: 2, per_page: 50 });
    expect(list({ per_page: "201" })).toBe(false);
    expect(list({ per_page: "0" })).toBe(false);
    expect(list({ page: "1.5" })).toBe(false);
    expect(list({ page: "two" })).toBe(false);
  });

  it("accepts only UUIDs as path ids", () => {
    const params = validator(getAppSchema.params, "params");
    expect(params({ app_id: "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11" })).toBe(true);
    expect(params({ app_id: "urn:uuid:7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11" })).toBe(false);
    expect(params({ app_id: "42" })).toBe(false);
  });
});

describe("send bodies", () => {
  const app_id = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
  const send = validator(sendSchema.body, "body");
  const toUsers = validator(sendToUsersSchema.body, "body");
  const toSegment = validator(sendToSegmentSchema.body, "body");
  const ok = { app_id, name: "Sale", contents: { en: { title: "Hi", body: "There" } } };
  const firstError = (v: Validate) => v.errors?.find((e) => !("propertyName" in e)) ?? v.errors?.[0];

  it("accepts a minimal and a full send", () => {
    expect(send(ok)).toBe(true);
    expect(
      send({
        ...ok,
        contents: { en: { title: "Hi" }, de: { body: "Hallo" } },
        data: { action_url: "https://acme.example", n: 1, nested: { a: [1] } },
        scheduled_at: "2026-11-21T10:00:00.000Z",
        ttl: 0,
        priority: "high",
        collapse_id: "sale",
        image_url: "https://acme.example/a.png",
      }),
    ).toBe(true);
    expect(send({ ...ok, ttl: 2_419_200, priority: "normal" })).toBe(true);
  });

  it.each([
    ["missing app_id", { name: "x", contents: ok.contents }, "required"],
    ["missing name", { app_id, contents: ok.contents }, "required"],
    ["missing contents", { app_id, name: "x" }, "required"],
    ["empty name", { ...ok, name: "" }, "minLength"],
    ["empty contents", { ...ok, contents: {} }, "minProperties"],
    ["upper-case language", { ...ok, contents: { EN: { title: "x" } } }, "propertyNames"],
    ["region in language", { ...ok, contents: { "pt-BR": { title: "x" } } }, "propertyNames"],
    ["three-letter language", { ...ok, contents: { eng: { title: "x" } } }, "propertyNames"],
    ["content without text", { ...ok, contents: { en: {} } }, "minProperties"],
    [
      "content with an unknown field",
      { ...ok, contents: { en: { title: "x", subtitle: "y" } } },
      "additionalProperties",
    ],
    ["content as a string", { ...ok, contents: { en: "Hi" } }, "type"],
    ["title too long", { ...ok, contents: { en: { title: "x".repeat(257) } } }, "maxLength"],
    ["body too long", { ...ok, contents: { en: { body: "x".repeat(2049) } } }, "maxLength"],
    ["data as an array", { ...ok, data: [1] }, "type"],
    ["data with aps", { ...ok, data: { aps: { alert: "x" } } }, "propertyNames"],
    ["scheduled_at without offset", { ...ok, scheduled_at: "2026-11-21T10:00:00" }, "format"],
    ["scheduled_at as a number", { ...ok, scheduled_at: 1_790_000_000 }, "type"],
    ["non-integer ttl", { ...ok, ttl: 1.5 }, "type"],
    ["ttl as a string", { ...ok, ttl: "60" }, "type"],
    ["negative ttl", { ...ok, ttl: -1 }, "minimum"],
    ["ttl over 28 days", { ...ok, ttl: 2_419_201 }, "maximum"],
    ["bad priority", { ...ok, priority: "urgent" }, "enum"],
    ["collapse_id too long", { ...ok, collapse_id: "x".repeat(65) }, "maxLength"],
    ["http image", { ...ok, image_url: "http://acme.example/a.png" }, "pattern"],
    ["image without host", { ...ok, image_url: "https:///a.png" }, "pattern"],
    ["unknown field", { ...ok, segment_id: app_id }, "additionalProperties"],
  ])("refuses %s", (_name, body, keyword) => {
    expect(send(body)).toBe(false);
    const error = keyword === "propertyNames" ? send.errors?.find((e) => e.keyword === keyword) : firstError(send);
    expect(error?.keyword).toBe(keyword);
  });

  it("bounds external_ids", () => {
    expect(toUsers({ ...ok, external_ids: ["u-1"] })).toBe(true);
    expect(toUsers({ ...ok, external_ids: Array.from({ length: 10_000 }, (_, i) => `u-${i}`) })).toBe(true);
    expect(toUsers({ ...ok, external_ids: Array.from({ length: 10_001 }, (_, i) => `u-${i}`) })).toBe(false);
    expect(toUsers.errors?.[0]?.keyword).toBe("maxItems");
    expect(toUsers({ ...ok, external_ids: [] })).toBe(false);
    expect(toUsers({ ...ok, external_ids: [""] })).toBe(false);
    expect(toUsers({ ...ok, external_ids: ["x".repeat(256)] })).toBe(false);
    expect(toUsers({ ...ok, external_ids: [42] })).toBe(false);
    expect(toUsers(ok)).toBe(false);
    expect(toUsers.errors?.[0]).toMatchObject({ keyword: "required", params: { missingProperty: "external_ids" } });
  });

  it("needs a UUID segment_id", () => {
    expect(toSegment({ ...ok, segment_id: app_id })).toBe(true);
    expect(toSegment({ ...ok, segment_id: "vip" })).toBe(false);
    expect(toSegment(ok)).toBe(false);
  });

  it("checks the Idempotency-Key header", () => {
    // The route's own schema, which names the header as the document shows it; requests
    // carry it lower-cased (fastify does not lower-case schemas for a custom compiler).
    const headers = validator(sendSchema.headers, "headers");
    expect(headers({})).toBe(true);
    expect(headers({ "idempotency-key": "5b1f8c0e-2a4d-4f7e-9c3b-8d6a1e0f2b47" })).toBe(true);
    expect(headers({ "idempotency-key": "" })).toBe(false);
    expect(headers({ "idempotency-key": "x".repeat(256) })).toBe(false);
    expect(headers({ "idempotency-key": "tab\there" })).toBe(false);
    expect(headers({ "idempotency-key": "cl\u00e9" })).toBe(false);
  });
});

describe("segment bodies", () => {
  const createSegment = validator(createSegmentSchema.body, "body");
  const updateSegment = validator(updateSegmentSchema.body, "body");
  const app_id = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";

  it("accepts rules of any set parts", () => {
    expect(
      createSegment({ app_id, name: "Beta", rule: { tags_any: ["beta"], platforms: ["ios"], has_external_id: true } }),
    ).toBe(true);
    expect(updateSegment({ name: "Renamed" })).toBe(true);
    expect(updateSegment({ rule: { languages: ["de", "pt-BR"] } })).toBe(true);
  });

  it("refuses empty rules, unknown parts, bad platforms and empty updates", () => {
    expect(createSegment({ app_id, name: "Beta", rule: {} })).toBe(false);
    expect(createSegment({ app_id, name: "Beta", rule: { tags: ["x"] } })).toBe(false);
    expect(createSegment({ app_id, name: "Beta", rule: { platforms: ["windows"] } })).toBe(false);
    expect(createSegment({ app_id, name: "Beta", rule: { tags_any: [] } })).toBe(false);
    expect(createSegment({ app_id, name: "Beta", rule: { has_external_id: "yes" } })).toBe(false);
    expect(createSegment({ app_id, rule: { tags_any: ["x"] } })).toBe(false);
    expect(updateSegment({})).toBe(false);
  });
});

describe("campaign list query", () => {
  it("follows the one paging rule: 50 per page by default, at most 200, page from 1", () => {
    const list = validator(listCampaignsSchema.querystring, "querystring");
    const q: Record<string, unknown> = {};
    expect(list(q)).toBe(true);
    expect(q).toEqual({ page: 1, per_page: 50 });
    expect(list({ per_page: "200" })).toBe(true);
    expect(list({ per_page: "201" })).toBe(false);
    expect(list({ per_page: "0" })).toBe(false);
    expect(list({ page: "0" })).toBe(false);
  });
});

describe("input rules beyond the schema", () => {
  const anyBody = validator({}, "body");
  const firstError = (data: unknown) => {
    expect(anyBody(data)).toBe(false);
    return anyBody.errors?.[0];
  };

  it("accepts a body with nothing wrong and leaves no errors behind", () => {
    expect(anyBody({ a: [1, "x", { b: null }], c: { d: 2.5 } })).toBe(true);
    expect(anyBody.errors).toBeNull();
  });

  it("names the first bad value by its JSON pointer, through arrays and escaped keys", () => {
    expect(firstError({ a: [1, { "b/c~d": ["ok", "n\u0000ul"] }] })).toMatchObject({
      keyword: "input",
      instancePath: "/a/1/b~1c~0d/1",
      message: "must not contain NUL characters",
    });
    expect(firstError({ x: { y: Number.POSITIVE_INFINITY } })).toMatchObject({
      instancePath: "/x/y",
      message: "must be a finite number",
    });
    // A key holding a NUL is named by the object that holds it.
    expect(firstError({ x: { "k\u0000": 1 } })).toMatchObject({
      instancePath: "/x",
      message: "must not have a key with a NUL character",
    });
    expect(firstError(["a", "\u0000"])).toMatchObject({ instancePath: "/1" });
  });
});
