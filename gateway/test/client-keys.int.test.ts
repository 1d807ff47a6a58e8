import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apnsToken, webSubscription } from "../../test/support/device-tokens.js";
import {
  CLIENT_KEY_REFUSED,
  PUSH_TOKEN_HEADER,
  PUSH_TOKEN_MISMATCH,
  PUSH_TOKEN_REQUIRED,
} from "../src/client-key-policy.js";
import { createApp, type Backends, type TestGateway } from "./harness.js";
import { type OwnerStack, startOwnerStack } from "./owner-stack.js";
import { deviceFacingFixtures, type Operation, v1Operations, validBody } from "./operations.js";
import { operationUrl, readableState } from "./org-fixtures.js";

/**
 * Publishable client keys (hk_pub_…) against every /v1 operation of the OpenAPI document
 * (so a new route is covered the day it is added): the few a client key may call work,
 * every other one answers exactly 403 and changes nothing; a device is reached only with
 * its push token; a client key stays inside its app and has its own rate limit.
 */

/** What a client key may call (docs/architecture.md §Authentication); everything else is 403. */
const CLIENT_POLICY: Record<string, "allowed" | "device-proof"> = {
  "POST /v1/devices/register": "allowed",
  "GET /v1/devices/{id}": "device-proof",
  "PUT /v1/devices/{id}": "device-proof",
  "DELETE /v1/devices/{id}": "device-proof",
  "POST /v1/devices/{id}/opt-out": "device-proof",
  "POST /v1/devices/{id}/opt-in": "device-proof",
  // The channel sync of an Android app (the Android SDK reads its channels with a client key).
  "GET /v1/apps/{app_id}/android-channels": "allowed",
  "GET /v1/apps/{app_id}/android-channels/{channel_id}": "allowed",
  // The device's in-app messages (fetched and acknowledged by the SDKs).
  "GET /v1/devices/{id}/in-app-messages": "device-proof",
  "POST /v1/devices/{id}/in-app-messages/{message_id}/events": "device-proof",
  // The web SDK: the app's public VAPID key, and what its service worker reports.
  "GET /v1/apps/{app_id}/web-push-config": "allowed",
  "POST /v1/devices/{id}/notification-events": "device-proof",
  // The device's own delivery receipts, like reading the device.
  "GET /v1/devices/{id}/deliveries": "device-proof",
};

let backends: Backends;
let gw: TestGateway;
let stack: OwnerStack;
let operations: Operation[];
let serverKey: string;
let ownerToken: string;
/** Client keys of app A (with a limit the matrix cannot reach) and of app B. */
let clientA: string;
let clientB: string;
const fixtures: Record<string, string> = {};
let appB: string;

const createKey = async (appId: string, body: Record<string, unknown>) => {
  const res = await gw.call("POST", `/v1/apps/${appId}/api-keys`, serverKey, { name: "key", ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; secret: string; kind: string; prefix: string; rate_limit_per_minute: number };
};

const register = (token: string, appId: string, pushToken: string, platform = "ios") =>
  gw.call("POST", "/v1/devices/register", token, { app_id: appId, push_token: pushToken, platform });

const withToken = (pushToken: string) => ({ [PUSH_TOKEN_HEADER]: pushToken });

beforeAll(async () => {
  stack = await startOwnerStack({ rateLimitPerMinute: 1_000_000 });
  ({ backends, gw } = stack);
  ownerToken = stack.owner.token;
  serverKey = backends.bootstrapKey;

  const app = await createApp(gw, serverKey);
  fixtures.app_id = app.id;
  appB = (await createApp(gw, serverKey)).id;
  clientA = (await createKey(app.id, { kind: "client", rate_limit_per_minute: 1_000_000 })).secret;
  clientB = (await createKey(appB, { kind: "client" })).secret;
  fixtures.key_id = (await createKey(app.id, { name: "fixture" })).id;
  const device = await register(serverKey, app.id, apnsToken());
  expect(device.status, device.text).toBe(200);
  fixtures.devices = device.body.id;
  const segment = await gw.call("POST", "/v1/segments", serverKey, {
    app_id: app.id,
    name: "beta",
    rule: { tags_any: ["beta"] },
  });
  expect(segment.status, segment.text).toBe(201);
  fixtures.segments = segment.body.id;
  const campaign = await gw.call("POST", "/v1/push/send", serverKey, {
    app_id: app.id,
    name: "later",
    contents: { en: { title: "Hi", body: "Later" } },
    scheduled_at: new Date(Date.now() + 7 * 24 * 3600_000).toISOString(),
  });
  expect(campaign.status, campaign.text).toBe(201);
  fixtures.campaigns = campaign.body.id;
  const message = await gw.call("POST", `/v1/apps/${app.id}/in-app-messages`, serverKey, {
    name: "welcome",
    contents: { en: { title: "Hi", body: "Welcome" } },
    audience: { kind: "all" },
  });
  expect(message.status, message.text).toBe(201);
  fixtures.message_id = message.body.id;
  await deviceFacingFixtures(gw, serverKey, fixtures);

  operations = await v1Operations(gw.app);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const label = (op: Operation) => `${op.method} ${op.path}`;

/** The operation's URL with real fixtures where there are some, otherwise ids that name nothing. */
const url = (op: Operation) => operationUrl(op, fixtures, { orUnknown: true });

/** Everything the owner can read where every path parameter has a fixture, for comparing before and after. */
const snapshot = () => readableState(gw, ownerToken, operations, fixtures);

describe("client keys on every /v1 route", () => {
  it("are allowed exactly where the policy says, as the OpenAPI document declares", () => {
    expect(operations.length).toBeGreaterThan(40);
    const declared = Object.fromEntries(
      operations.filter((op) => op.clientKey !== undefined).map((op) => [label(op), op.clientKey]),
    );
    expect(declared).toEqual(CLIENT_POLICY);
  });

  it("answer exactly 403 everywhere else, changing nothing, even with a valid push token", async () => {
    const before = await snapshot();
    const refused = operations.filter((op) => !op.isPublic && CLIENT_POLICY[label(op)] === undefined);
    expect(refused.length).toBeGreaterThan(40);
    for (const op of refused) {
      const body = op.method === "GET" || op.method === "DELETE" ? undefined : validBody(op, fixtures);
      const headers = {
        ...withToken(apnsToken()),
        ...(op.operationId === "importDevices" ? { "content-type": "application/x-ndjson" } : {}),
      };
      const res = await gw.call(op.method as "GET", url(op), clientA, body, headers);
      expect(res.status, `${label(op)}: ${res.text}`).toBe(403);
      expect(res.body, label(op)).toEqual({ error: "Forbidden", message: CLIENT_KEY_REFUSED });
    }
    expect(await snapshot()).toEqual(before);
  }, 120_000);

  it("register a device, then manage it only with its push token", async () => {
    const token = apnsToken();
    const registered = await register(clientA, fixtures.app_id!, token);
    expect(registered.status, registered.text).toBe(200);
    const id = registered.body.id as string;
    const read = () => gw.call("GET", `/v1/devices/${id}`, serverKey);

    const proofOps = operations
      .filter((op) => CLIENT_POLICY[label(op)] === "device-proof")
      .sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
    expect(proofOps).toHaveLength(Object.values(CLIENT_POLICY).filter((a) => a === "device-proof").length);
    for (const op of proofOps) {
      const path = op.path.replace("{id}", id).replace("{message_id}", fixtures.message_id!);
      const body =
        op.method === "PUT"
          ? { language: "fr", tags: ["vip"] }
          : op.method === "POST"
            ? validBody(op, fixtures)
            : undefined;
      const before = (await read()).body;
      const missing = await gw.call(op.method as "GET", path, clientA, body);
      expect(missing.status, `${label(op)} without token: ${missing.text}`).toBe(403);
      expect(missing.body).toEqual({ error: "Forbidden", message: PUSH_TOKEN_REQUIRED });
      const wrong = await gw.call(op.method as "GET", path, clientA, body, withToken(apnsToken()));
      expect(wrong.status, `${label(op)} with a wrong token: ${wrong.text}`).toBe(403);
      expect(wrong.body).toEqual({ error: "Forbidden", message: PUSH_TOKEN_MISMATCH });
      expect((await read()).body, `${label(op)} refused but changed the device`).toEqual(before);

      const proven = await gw.call(op.method as "GET", path, clientA, body, withToken(token.toUpperCase()));
      expect(proven.status, `${label(op)} with the token: ${proven.text}`).toBeLessThan(300);
      if (op.method === "PUT") expect(proven.body).toMatchObject({ id, language: "fr", tags: ["vip"] });
      if (op.path.endsWith("opt-out")) expect(proven.body).toMatchObject({ id, opted_in: false });
      if (op.path.endsWith("opt-in")) expect(proven.body).toMatchObject({ id, opted_in: true });
    }
    expect((await read()).status).toBe(404);
  });

  it("refuse a changed device without its token: it stays as it was", async () => {
    const registered = await register(clientA, fixtures.app_id!, apnsToken());
    const id = registered.body.id as string;
    const before = (await gw.call("GET", `/v1/devices/${id}`, serverKey)).body;
    for (const [method, path, body] of [
      ["PUT", `/v1/devices/${id}`, { external_id: "attacker" }],
      ["POST", `/v1/devices/${id}/opt-out`, {}],
      ["DELETE", `/v1/devices/${id}`, undefined],
    ] as const) {
      const res = await gw.call(method, path, clientA, body, withToken(apnsToken()));
      expect(res.status, `${method} ${path}: ${res.text}`).toBe(403);
    }
    expect((await gw.call("GET", `/v1/devices/${id}`, serverKey)).body).toEqual(before);
  });

  it("prove a web device with its subscription, however the JSON is written", async () => {
    const web = await createApp(gw, serverKey, "web");
    const key = (await createKey(web.id, { kind: "client" })).secret;
    const sub = webSubscription();
    const registered = await register(key, web.id, sub.json, "web");
    expect(registered.status, registered.text).toBe(200);
    const parsed = JSON.parse(sub.json);
    const reordered = JSON.stringify({
      keys: { auth: parsed.keys.auth, p256dh: parsed.keys.p256dh },
      endpoint: parsed.endpoint,
    });
    const res = await gw.call("GET", `/v1/devices/${registered.body.id}`, key, undefined, withToken(reordered));
    expect(res.status, res.text).toBe(200);
    const other = webSubscription();
    const wrong = await gw.call("GET", `/v1/devices/${registered.body.id}`, key, undefined, withToken(other.json));
    expect(wrong.status).toBe(403);
  });
});

describe("a client key's app", () => {
  it("is the only one it reaches", async () => {
    const registeredElsewhere = await register(clientA, appB, apnsToken());
    expect(registeredElsewhere.status, registeredElsewhere.text).toBe(403);

    const tokenB = apnsToken();
    const deviceB = await register(clientB, appB, tokenB);
    expect(deviceB.status, deviceB.text).toBe(200);
    const path = `/v1/devices/${deviceB.body.id}`;
    // A wrong token answers as for a device of its own app: nothing says where the device lives.
    const guessed = await gw.call("GET", path, clientA, undefined, withToken(apnsToken()));
    expect(guessed.body).toEqual({ error: "Forbidden", message: PUSH_TOKEN_MISMATCH });
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { language: "de" }],
      ["DELETE", undefined],
    ] as const) {
      const res = await gw.call(method, path, clientA, body, withToken(tokenB));
      expect(res.status, `${method}: ${res.text}`).toBe(403);
    }
    expect((await gw.call("GET", path, clientB, undefined, withToken(tokenB))).status).toBe(200);

    const unknown = await gw.call("GET", `/v1/devices/${randomUUID()}`, clientA, undefined, withToken(tokenB));
    expect(unknown.status, unknown.text).toBe(404);
  });
});

describe("client key creation and limits", () => {
  it("creates client keys with an hk_pub_ secret, their kind shown in every view", async () => {
    const created = await createKey(fixtures.app_id!, { name: "web site", kind: "client" });
    expect(created).toMatchObject({
      kind: "client",
      scope: "app",
      app_id: fixtures.app_id,
      rate_limit_per_minute: 120,
    });
    expect(created.secret).toMatch(/^hk_pub_[A-Za-z0-9]{40}$/);
    expect(created.prefix).toBe(created.secret.slice(0, 11));
    const server = await createKey(fixtures.app_id!, { name: "backend" });
    expect(server).toMatchObject({ kind: "server", rate_limit_per_minute: 1000 });
    expect(server.secret).toMatch(/^hk_live_/);
    const list = await gw.call("GET", `/v1/apps/${fixtures.app_id}/api-keys?per_page=100`, serverKey);
    const kinds = Object.fromEntries((list.body.data as { id: string; kind: string }[]).map((k) => [k.id, k.kind]));
    expect(kinds[created.id]).toBe("client");
    expect(kinds[server.id]).toBe("server");
  });

  it("refuses org-scoped and unknown kinds of client keys", async () => {
    const org = await gw.call("POST", `/v1/apps/${fixtures.app_id}/api-keys`, serverKey, {
      name: "x",
      kind: "client",
      scope: "org",
    });
    expect(org.status, org.text).toBe(400);
    expect(org.body).toMatchObject({ error: "ValidationError", details: [{ field: "/scope" }] });
    const unknown = await gw.call("POST", `/v1/apps/${fixtures.app_id}/api-keys`, serverKey, {
      name: "x",
      kind: "public",
    });
    expect(unknown.status, unknown.text).toBe(400);
  });

  it("count a client key against its own, lower limit", async () => {
    const defaultKey = (await createKey(fixtures.app_id!, { kind: "client" })).secret;
    const first = await register(defaultKey, fixtures.app_id!, apnsToken());
    expect(first.status, first.text).toBe(200);
    expect(first.headers["x-ratelimit-limit"]).toBe("120");

    const limited = (await createKey(fixtures.app_id!, { kind: "client", rate_limit_per_minute: 2 })).secret;
    for (let i = 0; i < 2; i++) expect((await register(limited, fixtures.app_id!, apnsToken())).status).toBe(200);
    const over = await register(limited, fixtures.app_id!, apnsToken());
    expect(over.status, over.text).toBe(429);
    expect((await register(defaultKey, fixtures.app_id!, apnsToken())).status).toBe(200);
    expect((await register(serverKey, fixtures.app_id!, apnsToken())).status).toBe(200);

    // Every install of the app shares its client key: another address has its own budget.
    const fromElsewhere = await gw.app.inject({
      method: "POST",
      url: "/v1/devices/register",
      remoteAddress: "203.0.113.7",
      headers: { authorization: `Bearer ${limited}`, "content-type": "application/json" },
      payload: JSON.stringify({ app_id: fixtures.app_id, platform: "ios", push_token: apnsToken() }),
    });
    expect(fromElsewhere.statusCode, fromElsewhere.body).toBe(200);
  });

  it("sync the app's Android channels (ETag, 304) and never another app's", async () => {
    const channel = { id: `promo_${Date.now()}`, name: "Promotions", importance: "high" };
    const created = await gw.call("POST", `/v1/apps/${fixtures.app_id}/android-channels`, serverKey, channel);
    expect(created.status, created.text).toBe(201);
    const list = await gw.call("GET", `/v1/apps/${fixtures.app_id}/android-channels`, clientA);
    expect(list.status, list.text).toBe(200);
    expect((list.body.data as { id: string }[]).map((c) => c.id)).toContain(channel.id);
    const again = await gw.call("GET", `/v1/apps/${fixtures.app_id}/android-channels`, clientA, undefined, {
      "if-none-match": String(list.headers.etag),
    });
    expect(again.status).toBe(304);
    const one = await gw.call("GET", `/v1/apps/${fixtures.app_id}/android-channels/${channel.id}`, clientA);
    expect(one.status, one.text).toBe(200);
    expect((await gw.call("GET", `/v1/apps/${fixtures.app_id}/android-channels`, clientB)).status).toBe(403);
    const write = await gw.call("DELETE", `/v1/apps/${fixtures.app_id}/android-channels/${channel.id}`, clientA);
    expect(write.status).toBe(403);
  });
});
