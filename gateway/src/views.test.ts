import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PageInfoSchema, Platform } from "@herald/proto/common";
import { ApiKeyKind, ApiKeySchema, AppSchema, KeyScope, PlatformConfigSchema } from "@herald/proto/credential";
import { DeviceSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { apiKeyView, appView, deviceView, listView, platformConfigsView, platformConfigView } from "./views.js";

const T1 = timestampFromDate(new Date("2026-11-21T10:00:00.000Z"));
const T2 = timestampFromDate(new Date("2026-11-21T10:05:30.250Z"));
const APP_ID = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";

describe("appView", () => {
  it("renders snake_case, platform names and ISO timestamps", () => {
    const app = create(AppSchema, {
      id: APP_ID,
      orgId: "o-1",
      name: "Acme",
      platform: Platform.ANDROID,
      bundleId: "com.acme",
      createdAt: T1,
      updatedAt: T2,
    });
    expect(appView(app)).toEqual({
      id: APP_ID,
      org_id: "o-1",
      name: "Acme",
      platform: "android",
      bundle_id: "com.acme",
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:05:30.250Z",
    });
  });

  it("treats a missing timestamp or platform as a backend bug", () => {
    expect(() => appView(create(AppSchema, { platform: Platform.IOS, updatedAt: T1 }))).toThrow(/timestamp/);
    expect(() => appView(create(AppSchema, { createdAt: T1, updatedAt: T1 }))).toThrow(/platform/);
  });
});

describe("deviceView", () => {
  it("renders absent optionals as null", () => {
    const d = create(DeviceSchema, {
      id: "d-1",
      appId: APP_ID,
      pushToken: "tok",
      platform: Platform.WEB,
      optedIn: true,
      createdAt: T1,
      updatedAt: T1,
    });
    expect(deviceView(d)).toEqual({
      id: "d-1",
      app_id: APP_ID,
      push_token: "tok",
      platform: "web",
      external_id: null,
      language: null,
      timezone: null,
      app_version: null,
      tags: [],
      opted_in: true,
      invalid: false,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:00:00.000Z",
    });
  });

  it("renders set optionals and tags", () => {
    const d = create(DeviceSchema, {
      platform: Platform.IOS,
      externalId: "u-1",
      language: "de",
      timezone: "Europe/Berlin",
      appVersion: "1.2",
      tags: ["a", "b"],
      invalid: true,
      createdAt: T1,
      updatedAt: T2,
    });
    expect(deviceView(d)).toMatchObject({
      platform: "ios",
      external_id: "u-1",
      language: "de",
      timezone: "Europe/Berlin",
      app_version: "1.2",
      tags: ["a", "b"],
      opted_in: false,
      invalid: true,
    });
  });
});

describe("apiKeyView", () => {
  const key = (rate: number) =>
    create(ApiKeySchema, {
      id: "k-1",
      orgId: "o-1",
      appId: APP_ID,
      scope: KeyScope.APP,
      name: "ci",
      prefix: "hk_live_Ab3x",
      rateLimitPerMinute: rate,
      createdAt: T1,
    });

  it("renders scope and the key's own limit, never a secret", () => {
    const view = apiKeyView(key(50), 1000);
    expect(view).toEqual({
      id: "k-1",
      name: "ci",
      scope: "app",
      kind: "server",
      app_id: APP_ID,
      prefix: "hk_live_Ab3x",
      rate_limit_per_minute: 50,
      created_at: "2026-11-21T10:00:00.000Z",
    });
    expect(view).not.toHaveProperty("secret");
  });

  it("shows the default limit for keys without their own", () => {
    expect(apiKeyView(key(0), 1000).rate_limit_per_minute).toBe(1000);
  });

  it("names the kind: client keys, and server keys (also those stored before kinds existed)", () => {
    expect(apiKeyView(create(ApiKeySchema, { ...key(5), kind: ApiKeyKind.CLIENT }), 1000).kind).toBe("client");
    expect(apiKeyView(create(ApiKeySchema, { ...key(5), kind: ApiKeyKind.SERVER }), 1000).kind).toBe("server");
    expect(apiKeyView(create(ApiKeySchema, { ...key(5), kind: ApiKeyKind.UNSPECIFIED }), 1000).kind).toBe("server");
  });
});

describe("platform config views", () => {
  const ios = create(PlatformConfigSchema, {
    platform: Platform.IOS,
    fingerprint: "f1",
    updatedAt: T1,
    details: {
      case: "apns",
      value: { keyId: "ABC123DEFG", teamId: "DEF123GHIJ", topic: "com.acme", environment: "sandbox" },
    },
  });
  const android = create(PlatformConfigSchema, {
    platform: Platform.ANDROID,
    fingerprint: "f2",
    updatedAt: T1,
    details: {
      case: "fcm",
      value: {
        projectId: "p",
        clientEmail: "sa@p.iam.gserviceaccount.com",
        tokenUri: "https://oauth2.googleapis.com/token",
      },
    },
  });
  const web = create(PlatformConfigSchema, {
    platform: Platform.WEB,
    fingerprint: "f3",
    updatedAt: T2,
    details: { case: "vapid", value: { publicKey: "BPub", subject: "mailto:ops@acme.example" } },
  });

  it("renders each platform's public parts", () => {
    expect(platformConfigView(ios)).toEqual({
      platform: "ios",
      apns_key_id: "ABC123DEFG",
      apns_team_id: "DEF123GHIJ",
      apns_topic: "com.acme",
      apns_environment: "sandbox",
      fingerprint: "f1",
      updated_at: "2026-11-21T10:00:00.000Z",
    });
    expect(platformConfigView(android)).toEqual({
      platform: "android",
      project_id: "p",
      client_email: "sa@p.iam.gserviceaccount.com",
      token_uri: "https://oauth2.googleapis.com/token",
      fingerprint: "f2",
      updated_at: "2026-11-21T10:00:00.000Z",
    });
    expect(platformConfigView(web)).toEqual({
      platform: "web",
      vapid_public_key: "BPub",
      vapid_subject: "mailto:ops@acme.example",
      fingerprint: "f3",
      updated_at: "2026-11-21T10:05:30.250Z",
    });
  });

  it("groups configs by platform with null for missing ones", () => {
    expect(platformConfigsView(APP_ID, [web])).toEqual({
      app_id: APP_ID,
      ios: null,
      android: null,
      web: platformConfigView(web),
    });
    expect(platformConfigsView(APP_ID, [ios, android, web])).toMatchObject({
      ios: { platform: "ios" },
      android: { platform: "android" },
      web: { platform: "web" },
    });
  });
});

describe("listView", () => {
  it("uses the backend's page info, total as a number", () => {
    const info = create(PageInfoSchema, { page: 2, perPage: 10, total: 31n });
    expect(listView(["a"], info, { page: 2, per_page: 10 })).toEqual({ data: ["a"], page: 2, per_page: 10, total: 31 });
  });

  it("falls back to the request when the backend sent none", () => {
    expect(listView([], undefined, { page: 1, per_page: 50 })).toEqual({ data: [], page: 1, per_page: 50, total: 0 });
  });
});
