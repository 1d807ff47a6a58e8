import { createECDH, randomBytes } from "node:crypto";
import { Platform } from "@herald/proto/common";
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { CLIENT_KEY_REFUSED, clientKeyDenial, PUSH_TOKEN_HEADER, PUSH_TOKEN_REQUIRED } from "./client-key-policy.js";
import { possessesDevice } from "./device-possession.js";
import type { Principal } from "./principal.js";
import { roleCheckedApp } from "../test/role-check-app.js";

const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const APP = "bbbbbbbb-0000-4000-8000-000000000001";
const principals: Record<string, Principal> = {
  client: { orgId: ORG, scope: "app", appId: APP, identity: "key:c", rateLimitPerMinute: 120, keyKind: "client" },
  server: { orgId: ORG, scope: "app", appId: APP, identity: "key:s", rateLimitPerMinute: 1000, keyKind: "server" },
};

describe("clientKeyDenial", () => {
  it("refuses routes that declare nothing, and device-proof routes without the push token header", () => {
    expect(clientKeyDenial(undefined, {})).toBe(CLIENT_KEY_REFUSED);
    expect(clientKeyDenial("sometimes", {})).toBe(CLIENT_KEY_REFUSED);
    expect(clientKeyDenial("allowed", {})).toBeNull();
    expect(clientKeyDenial("device-proof", {})).toBe(PUSH_TOKEN_REQUIRED);
    expect(clientKeyDenial("device-proof", { "x-herald-push-token": "" })).toBe(PUSH_TOKEN_REQUIRED);
    expect(clientKeyDenial("device-proof", { "x-herald-push-token": "abc" })).toBeNull();
  });
});

describe("possessesDevice", () => {
  it("compares iOS tokens case-insensitively and Android tokens exactly", () => {
    const ios = randomBytes(32).toString("hex");
    expect(possessesDevice({ platform: Platform.IOS, pushToken: ios }, ios.toUpperCase())).toBe(true);
    expect(possessesDevice({ platform: Platform.IOS, pushToken: ios }, ios.slice(1))).toBe(false);
    expect(possessesDevice({ platform: Platform.ANDROID, pushToken: "fcm:Abc" }, "fcm:Abc")).toBe(true);
    expect(possessesDevice({ platform: Platform.ANDROID, pushToken: "fcm:Abc" }, "fcm:abc")).toBe(false);
    expect(possessesDevice({ platform: Platform.ANDROID, pushToken: "" }, "")).toBe(false);
  });

  it("recognises a web subscription whatever its serialisation, as the registry stores it", () => {
    const ecdh = createECDH("prime256v1");
    const keys = { p256dh: ecdh.generateKeys().toString("base64url"), auth: randomBytes(16).toString("base64url") };
    const stored = JSON.stringify({ endpoint: "https://push.example/wp/abc", keys });
    const device = { platform: Platform.WEB, pushToken: stored };
    const presented = JSON.stringify({
      keys: { auth: keys.auth, p256dh: keys.p256dh },
      expirationTime: null,
      endpoint: "https://PUSH.example/wp/abc",
    });
    expect(possessesDevice(device, presented)).toBe(true);
    expect(possessesDevice(device, JSON.stringify({ endpoint: "https://push.example/wp/abd", keys }))).toBe(false);
    expect(possessesDevice(device, "not json")).toBe(false);
    expect(possessesDevice(device, JSON.stringify({ endpoint: "https://push.example/wp/abc" }))).toBe(false);
  });
});

const appWith = (routes: (scope: FastifyInstance) => void, schemas?: Map<string, unknown>) =>
  roleCheckedApp((as) => principals[as] ?? null, routes, schemas);

describe("the client-key rule in the role hook", () => {
  it("refuses an unknown declaration when the route is registered", async () => {
    await expect(
      appWith((v1) =>
        v1.get("/things", { config: { minRole: "viewer", clientKey: "maybe" as "allowed" } }, async () => ({})),
      ),
    ).rejects.toThrow("GET /v1/things declares an unknown clientKey");
  });

  it("lets client keys reach declared routes only, and documents those", async () => {
    const schemas = new Map<string, unknown>();
    const app = await appWith((v1) => {
      v1.get(
        "/open",
        { config: { minRole: "viewer", clientKey: "allowed" }, schema: { description: "Open." } },
        async () => ({}),
      );
      v1.get("/proof", { config: { minRole: "viewer", clientKey: "device-proof" }, schema: {} }, async () => ({}));
      v1.get("/closed", { config: { minRole: "viewer" }, schema: { description: "Closed." } }, async () => ({}));
    }, schemas);
    const call = (url: string, as: string, headers: Record<string, string> = {}) =>
      app.inject({ url, headers: { "x-as": as, ...headers } });
    expect((await call("/v1/open", "client")).statusCode).toBe(200);
    const closed = await call("/v1/closed", "client");
    expect(closed.statusCode).toBe(403);
    expect(closed.json()).toEqual({ error: "Forbidden", message: CLIENT_KEY_REFUSED });
    expect((await call("/v1/closed", "server")).statusCode).toBe(200);
    expect((await call("/v1/proof", "client")).json()).toEqual({ error: "Forbidden", message: PUSH_TOKEN_REQUIRED });
    expect((await call("/v1/proof", "client", { [PUSH_TOKEN_HEADER]: "t" })).statusCode).toBe(200);
    expect((await call("/v1/proof", "server")).statusCode).toBe(200);

    expect(schemas.get("GET /v1/open")).toMatchObject({
      description: expect.stringContaining("Client keys (hk_pub_…) may call this too"),
      "x-herald-client-key": "allowed",
    });
    expect(schemas.get("GET /v1/proof")).toMatchObject({
      "x-herald-client-key": "device-proof",
      headers: { properties: { "x-herald-push-token": { type: "string" } } },
    });
    expect(schemas.get("GET /v1/closed")).not.toHaveProperty("x-herald-client-key");
  });
});
