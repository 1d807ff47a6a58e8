import { createECDH, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalPushToken, tokenHash } from "./push-token.js";

const ecdh = createECDH("prime256v1");
ecdh.generateKeys();
const p256dh = ecdh.getPublicKey().toString("base64url");
const auth = randomBytes(16).toString("base64url");
const endpoint = "https://fcm.googleapis.com/fcm/send/abc:APA91bE";

describe("ios tokens", () => {
  it("accepts 64 hex characters and lowercases them", () => {
    const raw = "A1B2C3D4E5F60718293A4B5C6D7E8F90a1b2c3d4e5f60718293a4b5c6d7e8f90";
    expect(canonicalPushToken("ios", raw)).toEqual({ ok: true, token: raw.toLowerCase() });
  });

  it.each(["", "abc", "g".repeat(64), "a".repeat(63), "a".repeat(65), `${"a".repeat(62)} a`])("refuses %j", (raw) => {
    expect(canonicalPushToken("ios", raw)).toEqual({
      ok: false,
      reason: "an ios token must be 64 hexadecimal characters",
    });
  });
});

describe("android tokens", () => {
  it.each(["x", "dGVzdA:APA91bH-abc_DEF", "a".repeat(4096)])("accepts %#", (raw) => {
    expect(canonicalPushToken("android", raw)).toEqual({ ok: true, token: raw });
  });

  it.each(["", "a".repeat(4097), "has space", "slash/no", "dot.no", "ünï"])("refuses %#", (raw) => {
    expect(canonicalPushToken("android", raw)).toMatchObject({ ok: false });
  });
});

describe("web subscriptions", () => {
  const web = (value: unknown) => canonicalPushToken("web", typeof value === "string" ? value : JSON.stringify(value));

  it("stores one canonical form for differently serialised subscriptions", () => {
    const a = web({ endpoint, expirationTime: null, keys: { p256dh, auth } });
    const b = web(`{ "keys": { "auth": "${auth}", "p256dh": "${p256dh}" },\n  "endpoint": "${endpoint}" }`);
    expect(a).toEqual({ ok: true, token: JSON.stringify({ endpoint, keys: { p256dh, auth } }), endpoint });
    expect(b).toEqual(a);
  });

  it("normalises padding of the keys", () => {
    const padded = web({ endpoint, keys: { p256dh: `${p256dh}=`, auth: `${auth}==` } });
    expect(padded).toEqual(web({ endpoint, keys: { p256dh, auth } }));
  });

  it.each([
    ["not JSON", "endpoint=x", "PushSubscription.toJSON()"],
    ["an array", [], "must have an endpoint and keys"],
    ["no keys", { endpoint }, "must have an endpoint and keys"],
    ["a relative endpoint", { endpoint: "/push/1", keys: { p256dh, auth } }, "endpoint must be a URL"],
    [
      "a non-http endpoint",
      { endpoint: "ftp://push.example/1", keys: { p256dh, auth } },
      "endpoint must be an https URL",
    ],
    ["p256dh not base64url", { endpoint, keys: { p256dh: "a+b/", auth } }, "keys.p256dh"],
    ["p256dh too short", { endpoint, keys: { p256dh: randomBytes(33).toString("base64url"), auth } }, "keys.p256dh"],
    [
      "p256dh compressed",
      { endpoint, keys: { p256dh: Buffer.concat([Buffer.from([2]), randomBytes(64)]).toString("base64url"), auth } },
      "keys.p256dh",
    ],
    [
      "p256dh off the curve",
      {
        endpoint,
        keys: { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString("base64url"), auth },
      },
      "keys.p256dh",
    ],
    [
      "auth of 15 bytes",
      { endpoint, keys: { p256dh, auth: randomBytes(15).toString("base64url") } },
      "keys.auth must be 16 bytes",
    ],
    ["auth not a string", { endpoint, keys: { p256dh, auth: 16 } }, "keys.auth"],
    ["an endpoint too long", { endpoint: `${endpoint}/${"a".repeat(2100)}`, keys: { p256dh, auth } }, "at most 2048"],
  ])("refuses %s", (_name, value, reason) => {
    const result = web(value);
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.reason).toContain(reason);
  });

  it("never repeats the token in a reason", () => {
    const secret = "A".repeat(70);
    const result = web({ endpoint: secret, keys: { p256dh, auth } });
    expect(JSON.stringify(result)).not.toContain(secret);
  });
});

describe("tokenHash", () => {
  it("is the sha256 of the canonical token", () => {
    expect(tokenHash("abc").toString("hex")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
