import { describe, expect, it } from "vitest";
import { sharedSchemas } from "./schemas/components.js";
import { listDevicesSchema, registerDeviceSchema, updateDeviceSchema } from "./schemas/devices.js";
import { createAppSchema, getAppSchema } from "./schemas/apps.js";
import { putPlatformConfigSchema } from "./schemas/platform-config.js";
import { createValidatorCompiler } from "./validation.js";

type Validate = ((data: unknown) => boolean) & { errors?: { keyword: string; instancePath: string; params: Record<string, unknown> }[] | null };

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
    expect(put({ platform: "ios", apns_p8_key: P8, apns_key_id: "A", apns_team_id: "B", vapid_subject: "x" })).toBe(false);
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
