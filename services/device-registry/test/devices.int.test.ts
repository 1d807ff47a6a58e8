import { createECDH, randomBytes, randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { describe, expect, it } from "vitest";
import { rpcError, useRegistry } from "./harness.js";

const iosToken = () => randomBytes(32).toString("hex");
const androidToken = () => `${randomBytes(8).toString("hex")}:APA91b${randomBytes(60).toString("base64url")}`;

function webSubscription(endpoint = `https://8.8.8.8/push/${randomUUID()}`) {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return {
    endpoint,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: randomBytes(16).toString("base64url") },
  };
}

interface RegisterInit {
  appId: string;
  pushToken: string;
  platform: Platform;
  externalId?: string;
  language?: string;
  timezone?: string;
  appVersion?: string;
  tags?: { tags: string[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("device registry", () => {
  const r = useRegistry();
  const appId = randomUUID();

  it("registers, reads, lists, updates, opts out and in, and deletes a device", async () => {
    const token = androidToken();
    const reg = await r.client.registerDevice({
      appId,
      pushToken: token,
      platform: Platform.ANDROID,
      externalId: "user-1",
      language: "pt-BR",
      timezone: "europe/berlin",
      appVersion: "1.2.0",
      tags: { tags: ["beta", "vip", "beta"] },
    });
    expect(reg.created).toBe(true);
    const device = reg.device!;
    expect(device).toMatchObject({
      appId,
      pushToken: token,
      platform: Platform.ANDROID,
      externalId: "user-1",
      language: "pt",
      timezone: "Europe/Berlin",
      appVersion: "1.2.0",
      tags: ["beta", "vip"],
      optedIn: true,
      invalid: false,
    });

    expect((await r.client.getDevice({ id: device.id })).device).toEqual(device);

    const other = await r.client.registerDevice({ appId, pushToken: iosToken(), platform: Platform.IOS });
    const list = await r.client.listDevices({ appId, page: { page: 1, perPage: 1 } });
    expect(list.devices.map((d) => d.id)).toEqual([device.id]);
    expect(list.page).toMatchObject({ page: 1, perPage: 1, total: 2n });
    const second = await r.client.listDevices({ appId, page: { page: 2, perPage: 1 } });
    expect(second.devices.map((d) => d.id)).toEqual([other.device!.id]);
    const defaults = await r.client.listDevices({ appId });
    expect(defaults.page).toMatchObject({ page: 1, perPage: 50, total: 2n });

    const updated = (
      await r.client.updateDevice({ id: device.id, externalId: "user-2", language: "", tags: { tags: [] } })
    ).device!;
    expect(updated).toMatchObject({ externalId: "user-2", timezone: "Europe/Berlin", appVersion: "1.2.0", tags: [] });
    expect(updated.language).toBeUndefined();
    const untouched = (await r.client.updateDevice({ id: device.id, appVersion: "1.3.0" })).device!;
    expect(untouched).toMatchObject({ externalId: "user-2", appVersion: "1.3.0", tags: [] });

    expect((await r.client.setOptIn({ id: device.id, optedIn: false })).device?.optedIn).toBe(false);
    expect((await r.client.getDevice({ id: device.id })).device?.optedIn).toBe(false);
    expect((await r.client.setOptIn({ id: device.id, optedIn: true })).device?.optedIn).toBe(true);

    await r.client.deleteDevice({ id: device.id });
    expect((await rpcError(r.client.getDevice({ id: device.id }))).code).toBe(Code.NotFound);
    expect((await rpcError(r.client.deleteDevice({ id: device.id }))).code).toBe(Code.NotFound);
  });

  it("answers NOT_FOUND for unknown and malformed ids", async () => {
    for (const id of [randomUUID(), "not-a-uuid", ""]) {
      expect((await rpcError(r.client.getDevice({ id }))).code).toBe(Code.NotFound);
      expect((await rpcError(r.client.updateDevice({ id, externalId: "x" }))).code).toBe(Code.NotFound);
      expect((await rpcError(r.client.setOptIn({ id, optedIn: false }))).code).toBe(Code.NotFound);
      expect((await rpcError(r.client.deleteDevice({ id }))).code).toBe(Code.NotFound);
    }
  });

  it("re-registering a token updates the same device and clears invalid", async () => {
    const token = iosToken();
    const first = await r.client.registerDevice({
      appId,
      pushToken: token.toUpperCase(),
      platform: Platform.IOS,
      language: "en",
      externalId: "u",
      tags: { tags: ["a"] },
    });
    expect(first.device?.pushToken).toBe(token);
    await sleep(5);
    const invalidated = await r.client.invalidateDevices({
      invalidations: [
        { deviceId: first.device!.id, observedAt: timestampFromDate(new Date()), reason: "Unregistered" },
      ],
    });
    expect(invalidated.invalidated).toBe(1);
    expect((await r.client.getDevice({ id: first.device!.id })).device?.invalid).toBe(true);

    const again = await r.client.registerDevice({
      appId,
      pushToken: token,
      platform: Platform.IOS,
      language: "de",
      appVersion: "2.0",
    });
    expect(again.created).toBe(false);
    expect(again.device).toMatchObject({
      id: first.device!.id,
      language: "de",
      appVersion: "2.0",
      externalId: "u",
      tags: ["a"],
      invalid: false,
    });
  });

  it("keeps one row when the same token registers 50 times at once", async () => {
    const token = androidToken();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        r.client.registerDevice({ appId, pushToken: token, platform: Platform.ANDROID, appVersion: `${i}` }),
      ),
    );
    expect(new Set(results.map((res) => res.device!.id)).size).toBe(1);
    expect(results.filter((res) => res.created)).toHaveLength(1);
    const { rows } = await r.pool.query(
      "SELECT count(*)::int AS n FROM devices WHERE app_id = $1 AND push_token = $2",
      [appId, token],
    );
    expect(rows[0].n).toBe(1);
  });

  it("keeps the same token of two apps apart", async () => {
    const token = iosToken();
    const a = await r.client.registerDevice({ appId, pushToken: token, platform: Platform.IOS });
    const b = await r.client.registerDevice({ appId: randomUUID(), pushToken: token, platform: Platform.IOS });
    expect(a.created && b.created).toBe(true);
    expect(a.device!.id).not.toBe(b.device!.id);
  });

  it("stores a web subscription once, however it is serialised", async () => {
    const sub = webSubscription();
    const first = await r.client.registerDevice({ appId, pushToken: JSON.stringify(sub), platform: Platform.WEB });
    expect(JSON.parse(first.device!.pushToken)).toEqual({ endpoint: sub.endpoint, keys: sub.keys });
    const reordered = JSON.stringify(
      { keys: { auth: sub.keys.auth, p256dh: sub.keys.p256dh }, endpoint: sub.endpoint },
      null,
      2,
    );
    const second = await r.client.registerDevice({ appId, pushToken: reordered, platform: Platform.WEB });
    expect(second).toMatchObject({ created: false, device: { id: first.device!.id } });
  });

  describe("refuses bad input with INVALID_ARGUMENT naming the field", () => {
    const base = (): RegisterInit => ({ appId, pushToken: androidToken(), platform: Platform.ANDROID });
    const web = (endpoint: string) => ({
      ...base(),
      platform: Platform.WEB,
      pushToken: JSON.stringify(webSubscription(endpoint)),
    });
    it.each<[string, () => RegisterInit, RegExp]>([
      ["app_id", () => ({ ...base(), appId: "app-1" }), /app_id must be a UUID/],
      ["platform", () => ({ ...base(), platform: Platform.UNSPECIFIED }), /platform must be ios, android or web/],
      ["empty push_token", () => ({ ...base(), pushToken: "" }), /push_token is required/],
      ["ios push_token", () => ({ ...base(), platform: Platform.IOS, pushToken: "abc" }), /push_token: an ios token/],
      ["android push_token", () => ({ ...base(), pushToken: "bad token!" }), /push_token: an android token/],
      ["web push_token", () => ({ ...base(), platform: Platform.WEB, pushToken: "{" }), /push_token: a web token/],
      ["http endpoint", () => web("http://8.8.8.8/push/1"), /push_token: endpoint must be an https URL/],
      [
        "loopback endpoint",
        () => web("https://127.0.0.1/push/1"),
        /push_token: endpoint host resolves to a loopback address/,
      ],
      [
        "localhost endpoint",
        () => web("https://localhost/push/1"),
        /push_token: endpoint host resolves to a loopback address/,
      ],
      [
        "metadata endpoint",
        () => web("https://169.254.169.254/latest"),
        /push_token: endpoint host resolves to a link-local address/,
      ],
      [
        "private endpoint",
        () => web("https://10.1.2.3/push"),
        /push_token: endpoint host resolves to a private address/,
      ],
      ["language", () => ({ ...base(), language: "xx" }), /language must be an ISO 639-1 code/],
      ["timezone", () => ({ ...base(), timezone: "Mars/Olympus_Mons" }), /timezone must be an IANA time zone name/],
      ["external_id", () => ({ ...base(), externalId: "x".repeat(256) }), /external_id must be at most 255/],
      ["app_version", () => ({ ...base(), appVersion: "1".repeat(65) }), /app_version must be at most 64/],
      [
        "too many tags",
        () => ({ ...base(), tags: { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) } }),
        /tags must hold at most 100/,
      ],
      ["long tag", () => ({ ...base(), tags: { tags: ["x".repeat(65)] } }), /each tag must be 1-64/],
    ])("%s", async (_name, request, message) => {
      const req = request();
      const err = await rpcError(r.client.registerDevice(req));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toMatch(message);
      if (req.pushToken) expect(err.rawMessage).not.toContain(req.pushToken);
    });

    it("on update and list too", async () => {
      const { device } = await r.client.registerDevice(base());
      expect((await rpcError(r.client.updateDevice({ id: device!.id, timezone: "Nowhere/Place" }))).code).toBe(
        Code.InvalidArgument,
      );
      expect((await rpcError(r.client.listDevices({ appId: "x" }))).code).toBe(Code.InvalidArgument);
      expect((await rpcError(r.client.countAudience({ appId }))).code).toBe(Code.InvalidArgument);
    });
  });

  it("invalidates only devices not re-registered after the observation", async () => {
    const a = (await r.client.registerDevice({ appId, pushToken: iosToken(), platform: Platform.IOS })).device!;
    const b = (await r.client.registerDevice({ appId, pushToken: androidToken(), platform: Platform.ANDROID })).device!;
    const before = new Date(Date.now() - 60_000);
    await sleep(5);
    const observed = new Date();

    const stale = await r.client.invalidateDevices({
      invalidations: [{ deviceId: a.id, observedAt: timestampFromDate(before), reason: "410" }],
    });
    expect(stale.invalidated).toBe(0);

    const batch = await r.client.invalidateDevices({
      invalidations: [
        { deviceId: a.id, observedAt: timestampFromDate(observed), reason: "BadDeviceToken" },
        { deviceId: b.id, observedAt: timestampFromDate(observed), reason: "UNREGISTERED" },
        { deviceId: randomUUID(), observedAt: timestampFromDate(observed), reason: "410" },
      ],
    });
    expect(batch.invalidated).toBe(2);
    const { rows } = await r.pool.query("SELECT invalid_reason FROM devices WHERE id = $1", [b.id]);
    expect(rows[0].invalid_reason).toBe("UNREGISTERED");

    // The app registers the token again after the provider saw it dead: the registration wins.
    const again = await r.client.registerDevice({ appId, pushToken: a.pushToken, platform: Platform.IOS });
    expect(again.device).toMatchObject({ id: a.id, invalid: false });
    const late = await r.client.invalidateDevices({
      invalidations: [{ deviceId: a.id, observedAt: timestampFromDate(observed), reason: "BadDeviceToken" }],
    });
    expect(late.invalidated).toBe(0);
    expect((await r.client.getDevice({ id: a.id })).device?.invalid).toBe(false);

    const bad = await rpcError(
      r.client.invalidateDevices({ invalidations: [{ deviceId: "x", observedAt: timestampFromDate(observed) }] }),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
  });

  it("counts registrations in its metrics", async () => {
    const res = await fetch(`http://127.0.0.1:${r.app.adminPort}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/herald_device_registrations_total\{result="created",service="device-registry"\} \d+/);
    expect(text).toMatch(/herald_device_registrations_total\{result="updated",service="device-registry"\} \d+/);
    expect(text).toMatch(/herald_device_invalidations_total\{source="rpc",service="device-registry"\} [1-9]\d*/);
    expect((await fetch(`http://127.0.0.1:${r.app.adminPort}/readyz`)).status).toBe(200);
  });
});

describe("device registry with HERALD_WEBPUSH_ALLOW_PRIVATE", () => {
  const r = useRegistry({ HERALD_WEBPUSH_ALLOW_PRIVATE: "1" });

  it("accepts a local http endpoint (dev mode, provider simulator)", async () => {
    const sub = webSubscription("http://127.0.0.1:4443/push/1");
    const res = await r.client.registerDevice({
      appId: randomUUID(),
      pushToken: JSON.stringify(sub),
      platform: Platform.WEB,
    });
    expect(res.created).toBe(true);
  });
});
