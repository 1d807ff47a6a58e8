import { generateKeyPairSync, type KeyObject } from "node:crypto";
import http2 from "node:http2";
import { SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApnsDelivery } from "../src/recorder.js";
import { apnsOutcome, connectH2, waitForGoaway, type H2Answer, type H2Session } from "./h2-client.js";
import { pkcs8Pem as pem, rawRequest, startSim, useSim } from "./sim-fixture.js";

const TEAM = "TEAM000001";
const KID = "KEY0000001";
const TOPIC = "com.herald.app";
const INTERVAL_MS = 1_000;
const BURST = 20;

const f = useSim(
  { apnsMinTokenIntervalMs: INTERVAL_MS, apnsDeviceBurst: BURST, apnsDeviceRatePerS: 0 },
  { clearFaults: "apns" },
);
const teamKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const otherTeamKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const sessions: H2Session[] = [];

beforeAll(async () => {
  await f.admin.registerApnsKey({ team_id: TEAM, key_id: KID, topics: [TOPIC], p8: pem(teamKey) });
  await f.admin.registerApnsKey({
    team_id: "TEAM000002",
    key_id: "KEY0000002",
    topics: ["com.other.app"],
    p8: pem(otherTeamKey),
  });
});
afterEach(() => {
  for (const s of sessions.splice(0)) s.close();
});

/** A provider token as a sender makes it: ES256, kid, iss = team, iat in seconds. */
function providerToken(opts: { iat?: number; team?: string; kid?: string; key?: KeyObject } = {}): Promise<string> {
  return new SignJWT({ iss: opts.team ?? TEAM, iat: opts.iat ?? Math.floor(Date.now() / 1000) })
    .setProtectedHeader({ alg: "ES256", kid: opts.kid ?? KID })
    .sign(opts.key ?? teamKey);
}

function open(opts: { eagerMs?: number } = {}): H2Session {
  const s = connectH2(f.sim.publicUrl, f.ca, opts);
  sessions.push(s);
  return s;
}

const alert = JSON.stringify({ aps: { alert: { title: "Hello", body: "World" } }, order: "42" });

function push(
  s: H2Session,
  token: string,
  device: string,
  headers: http2.OutgoingHttpHeaders = {},
  body: string | Buffer = alert,
) {
  return s.request(
    {
      ":path": `/3/device/${device}`,
      authorization: `bearer ${token}`,
      "apns-topic": TOPIC,
      "apns-push-type": "alert",
      ...headers,
    },
    body,
  );
}

async function device(topic = TOPIC): Promise<string> {
  return (await f.admin.createApnsDevices(topic))[0]!;
}

async function connectionStats(s: H2Session) {
  const port = s.localPort();
  const { connections } = await f.admin.apnsConnections();
  return connections.find((c) => c.remote.endsWith(`:${port}`));
}

describe("delivery", () => {
  it("accepts an alert push over HTTP/2: 200, empty body, apns-id echoed, everything recorded", async () => {
    const s = open();
    const token = await device();
    const apnsId = "123e4567-e89b-12d3-a456-4266554400a0";
    const res = (await push(s, await providerToken(), token, {
      "apns-id": apnsId,
      "apns-priority": "10",
      "apns-expiration": "1900000000",
      "apns-collapse-id": "order-42",
    })) as H2Answer;
    expect([res.status, res.body, res.headers["apns-id"]]).toEqual([200, "", apnsId]);

    const { deliveries } = await f.admin.deliveries({ platform: "apns", target: token });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      platform: "apns",
      target: token,
      device_token: token,
      apns_id: apnsId,
      topic: TOPIC,
      push_type: "alert",
      priority: 10,
      expiration: 1900000000,
      collapse_id: "order-42",
      payload: alert,
    } satisfies Partial<ApnsDelivery>);
  });

  it("answers a generated lowercase apns-id when none is sent, records defaults, takes uppercase-hex tokens", async () => {
    const s = open();
    const token = await device();
    const res = (await s.request(
      {
        ":path": `/3/device/${token.toUpperCase()}`,
        authorization: `bearer ${await providerToken()}`,
        "apns-topic": TOPIC,
      },
      alert,
    )) as H2Answer;
    expect(res.status).toBe(200);
    expect(res.headers["apns-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const [d] = (await f.admin.deliveries({ platform: "apns", target: token })).deliveries;
    expect(d).toMatchObject({
      apns_id: res.headers["apns-id"],
      push_type: null,
      priority: 10,
      expiration: null,
      collapse_id: null,
    });
  });

  it("accepts a background push with priority 5 and a voip push up to 5120 bytes", async () => {
    const s = open();
    const jwt = await providerToken();
    const background = await push(
      s,
      jwt,
      await device(),
      { "apns-push-type": "background", "apns-priority": "5" },
      '{"aps":{"content-available":1}}',
    );
    expect(apnsOutcome(background)).toBe("200");
    const voip = JSON.stringify({ aps: {}, pad: "x".repeat(5120 - 19) });
    expect(Buffer.byteLength(voip)).toBe(5120);
    const res = await push(
      s,
      jwt,
      await device(`${TOPIC}.voip`),
      { "apns-push-type": "voip", "apns-topic": `${TOPIC}.voip` },
      voip,
    );
    expect(apnsOutcome(res)).toBe("200");
  });

  it("accepts a well-formed token it never issued, as Apple cannot tell", async () => {
    const s = open();
    expect(apnsOutcome(await push(s, await providerToken(), "ab".repeat(32)))).toBe("200");
  });
});

describe("streams", () => {
  it("allows one stream until a valid token is seen: a second concurrent stream is refused, counted, and the connection gets GOAWAY", async () => {
    const s = open({ eagerMs: 200 });
    const jwt = await providerToken();
    const [a, b] = [await device(), await device()];
    // Both requests leave before the client has read the server's SETTINGS.
    const outcomes = (await Promise.all([push(s, jwt, a), push(s, jwt, b)])).map(apnsOutcome).sort();
    expect(outcomes).toEqual(["200", `reset ${http2.constants.NGHTTP2_REFUSED_STREAM}`]);
    await waitForGoaway(s);
    expect(s.goaways).toContainEqual({
      code: http2.constants.NGHTTP2_NO_ERROR,
      data: '{"reason":"TooManyConcurrentStreams"}',
    });
    expect(s.advertised[0]).toBe(1);
    expect(await connectionStats(s)).toMatchObject({
      violations: 1,
      max_concurrent_streams: 2,
      acknowledged_max_streams: 1,
    });
  });

  it("raises the limit to 500 after the first valid token, and then takes 100 concurrent streams", async () => {
    const s = open();
    const jwt = await providerToken();
    expect(apnsOutcome(await push(s, jwt, await device()))).toBe("200");
    expect(s.advertised).toEqual([1, 500]);
    await f.admin.setFaults("apns", { latency_ms: 300 });
    const tokens = await f.admin.createApnsDevices(TOPIC, 100);
    const outcomes = await Promise.all(tokens.map((t) => push(s, jwt, t)));
    expect(new Set(outcomes.map(apnsOutcome))).toEqual(new Set(["200"]));
    expect(await connectionStats(s)).toMatchObject({
      violations: 0,
      max_concurrent_streams: 100,
      advertised_max_streams: 500,
      requests: 101,
    });
  });

  it("keeps the one-stream limit after a request with an invalid token", async () => {
    const s = open();
    const bad = await providerToken({ key: otherTeamKey });
    expect(apnsOutcome(await push(s, bad, await device()))).toBe("403 InvalidProviderToken");
    expect(s.advertised).toEqual([1]);
    expect(await connectionStats(s)).toMatchObject({ advertised_max_streams: 1, violations: 0 });
  });
});

describe("refusals", () => {
  it("answers each header and path error with Apple's status and reason", async () => {
    const s = open();
    const jwt = await providerToken();
    const token = await device();
    const cases: [http2.OutgoingHttpHeaders, string][] = [
      [{ ":method": "GET" }, "405 MethodNotAllowed"],
      [{ ":path": "/3/devices/x" }, "404 BadPath"],
      [{ ":path": "/4/device/x" }, "404 NotFound"],
      [{ ":path": "/3/device/" }, "400 MissingDeviceToken"],
      [{ ":path": "/3/device/abc" }, "400 BadDeviceToken"],
      [{ ":path": `/3/device/${token}00` }, "400 BadDeviceToken"],
      [{ "apns-topic": [TOPIC, TOPIC] }, "400 DuplicateHeaders"],
      [{ "apns-id": "123E4567-E89B-12D3-A456-4266554400A0" }, "400 BadMessageId"],
      [{ authorization: undefined }, "403 MissingProviderToken"],
      [{ "apns-topic": undefined }, "400 MissingTopic"],
      [{ "apns-topic": "com herald" }, "400 BadTopic"],
      [{ "apns-topic": "com.other.app" }, "400 TopicDisallowed"],
      [{ "apns-push-type": "silent" }, "400 InvalidPushType"],
      [{ "apns-push-type": "voip" }, "400 InvalidPushType"],
      [{ "apns-priority": "7" }, "400 BadPriority"],
      [{ "apns-push-type": "background", "apns-priority": "10" }, "400 BadPriority"],
      [{ "apns-expiration": "tomorrow" }, "400 BadExpirationDate"],
      [{ "apns-collapse-id": "c".repeat(65) }, "400 BadCollapseId"],
    ];
    for (const [headers, expected] of cases) {
      const res = await push(s, jwt, token, headers);
      expect(apnsOutcome(res), expected).toBe(expected);
      if ("status" in res && res.status !== 404) expect(res.headers["apns-id"], expected).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await f.admin.deliveries({ platform: "apns", target: token })).deliveries).toEqual([]);
  });

  it("checks the payload: JSON with aps, fitting the push type, within 4096 bytes", async () => {
    const s = open();
    const jwt = await providerToken();
    const token = await device();
    const cases: [string, http2.OutgoingHttpHeaders, string][] = [
      ["", {}, "400 PayloadEmpty"],
      ["{not json", {}, "400 PayloadEmpty"],
      ['{"alert":"no aps"}', {}, "400 PayloadEmpty"],
      ['{"aps":{"content-available":1}}', {}, "400 InvalidPushType"],
      ['{"aps":{"alert":"x"}}', { "apns-push-type": "background", "apns-priority": "5" }, "400 InvalidPushType"],
      [JSON.stringify({ aps: { alert: "x" }, pad: "x".repeat(4096) }), {}, "413 PayloadTooLarge"],
      [
        JSON.stringify({ aps: {}, pad: "x".repeat(5121 - 19) }),
        { "apns-push-type": "voip", "apns-topic": `${TOPIC}.voip` },
        "413 PayloadTooLarge",
      ],
    ];
    for (const [body, headers, expected] of cases)
      expect(apnsOutcome(await push(s, jwt, token, headers, body)), expected).toBe(expected);
  });

  it("answers 410 with the timestamp for unregistered and expired tokens, 400 for bad ones, until revived", async () => {
    const s = open();
    const jwt = await providerToken();
    const [gone, expired, bad] = await f.admin.createApnsDevices(TOPIC, 3);
    await f.admin.unregisterApnsDevice(gone!, 1_700_000_000_123);
    await f.admin.expireApnsDevice(expired!);
    await f.admin.markApnsDeviceBad(bad!);
    const res = (await push(s, jwt, gone!)) as H2Answer;
    expect([res.status, JSON.parse(res.body)]).toEqual([410, { reason: "Unregistered", timestamp: 1_700_000_000_123 }]);
    const exp = (await push(s, jwt, expired!)) as H2Answer;
    expect(exp.status).toBe(410);
    expect(JSON.parse(exp.body)).toMatchObject({ reason: "ExpiredToken", timestamp: expect.any(Number) as number });
    expect(apnsOutcome(await push(s, jwt, bad!))).toBe("400 BadDeviceToken");
    await f.admin.reviveApnsDevice(gone!);
    expect(apnsOutcome(await push(s, jwt, gone!))).toBe("200");
  });

  it("refuses a token registered for another topic with DeviceTokenNotForTopic", async () => {
    const s = open();
    const voipToken = await device(`${TOPIC}.voip`);
    expect(apnsOutcome(await push(s, await providerToken(), voipToken))).toBe("400 DeviceTokenNotForTopic");
  });

  it("answers 429 TooManyRequests once a device's burst is used up", async () => {
    const s = open();
    const jwt = await providerToken();
    const token = await device();
    const outcomes: string[] = [];
    for (let i = 0; i <= BURST; i++) outcomes.push(apnsOutcome(await push(s, jwt, token)));
    expect(outcomes.slice(0, BURST)).toEqual(Array(BURST).fill("200"));
    expect(outcomes[BURST]).toBe("429 TooManyRequests");
    expect((await f.admin.deliveryCount("apns")).by_target[token]).toBe(BURST);
  });

  it("answers HTTP/1.1 with 505 and closes the connection", async () => {
    const res = await rawRequest(`${f.sim.publicUrl}/3/device/${"ab".repeat(32)}`, {
      ca: f.ca,
      headers: { authorization: `bearer ${await providerToken()}`, "apns-topic": TOPIC },
      body: alert,
    });
    expect([res.status, JSON.parse(res.body), res.headers.connection]).toEqual([
      505,
      { reason: "HTTP2Required" },
      "close",
    ]);
  });
});

describe("provider tokens", () => {
  it("refuses a bad signature, an unknown key, a future iat as invalid and an iat over an hour old as expired", async () => {
    const s = open();
    const token = await device();
    const now = Math.floor(Date.now() / 1000);
    const cases: [Promise<string>, string][] = [
      [providerToken({ key: otherTeamKey }), "403 InvalidProviderToken"],
      [providerToken({ kid: "KEY9999999" }), "403 InvalidProviderToken"],
      [providerToken({ team: "TEAM000009" }), "403 InvalidProviderToken"],
      [providerToken({ iat: now + 120 }), "403 InvalidProviderToken"],
      [providerToken({ iat: now - 3700 }), "403 ExpiredProviderToken"],
    ];
    for (const [jwt, expected] of cases) expect(apnsOutcome(await push(s, await jwt, token)), expected).toBe(expected);
    expect(apnsOutcome(await push(s, "not-a-jwt", token))).toBe("403 InvalidProviderToken");
  });

  it("allows one team per connection", async () => {
    const s = open();
    expect(apnsOutcome(await push(s, await providerToken(), await device()))).toBe("200");
    const otherTeam = await providerToken({ team: "TEAM000002", kid: "KEY0000002", key: otherTeamKey });
    const res = await push(s, otherTeam, await device("com.other.app"), { "apns-topic": "com.other.app" });
    expect(apnsOutcome(res)).toBe("403 InvalidProviderToken");
    // The same token on its own connection is fine.
    const fresh = open();
    expect(
      apnsOutcome(await push(fresh, otherTeam, await device("com.other.app"), { "apns-topic": "com.other.app" })),
    ).toBe("200");
  });

  it("answers 429 TooManyProviderTokenUpdates to a token change within the interval; the old token keeps working", async () => {
    const s = open();
    const token = await device();
    const now = Math.floor(Date.now() / 1000);
    const first = await providerToken({ iat: now - 10 });
    const second = await providerToken({ iat: now });
    expect(apnsOutcome(await push(s, first, token))).toBe("200");
    expect(apnsOutcome(await push(s, second, token))).toBe("429 TooManyProviderTokenUpdates");
    expect(apnsOutcome(await push(s, first, token))).toBe("200");
    await new Promise((r) => setTimeout(r, INTERVAL_MS + 50));
    expect(apnsOutcome(await push(s, second, token))).toBe("200");
    expect((await connectionStats(s))?.apns).toMatchObject({
      team_id: TEAM,
      token_updates: 1,
      refused_token_updates: 1,
    });
  });

  it("refuses tokens of a revoked key", async () => {
    const key = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    await f.admin.registerApnsKey({
      team_id: "TEAM000003",
      key_id: "KEY0000003",
      topics: ["com.third.app"],
      p8: pem(key),
    });
    const jwt = await providerToken({ team: "TEAM000003", kid: "KEY0000003", key });
    const s = open();
    const token = await device("com.third.app");
    expect(apnsOutcome(await push(s, jwt, token, { "apns-topic": "com.third.app" }))).toBe("200");
    await f.admin.revokeApnsKey("KEY0000003");
    expect(apnsOutcome(await push(s, jwt, token, { "apns-topic": "com.third.app" }))).toBe("403 InvalidProviderToken");
  });
});

describe("faults", () => {
  it("answers injected 500 and 503 with Apple's reasons, and a throttle with 429 and no Retry-After", async () => {
    const s = open();
    const jwt = await providerToken();
    const token = await device();
    await f.admin.setFaults("apns", { error_rate: 1, error_status: 500, remaining: 1 });
    expect(apnsOutcome(await push(s, jwt, token))).toBe("500 InternalServerError");
    await f.admin.setFaults("apns", { error_rate: 1, error_status: 503, remaining: 1 });
    expect(apnsOutcome(await push(s, jwt, token))).toBe("503 ServiceUnavailable");
    await f.admin.setFaults("apns", { throttle_rate: 1, retry_after_s: 9, remaining: 1 });
    const throttled = (await push(s, jwt, token)) as H2Answer;
    expect([apnsOutcome(throttled), throttled.headers["retry-after"]]).toEqual(["429 TooManyRequests", undefined]);
    expect(apnsOutcome(await push(s, jwt, token))).toBe("200");
  });

  it("shutdown answers 503 Shutdown and sends GOAWAY with a JSON reason", async () => {
    const s = open();
    await f.admin.setFaults("apns", { shutdown: true });
    expect(apnsOutcome(await push(s, await providerToken(), await device()))).toBe("503 Shutdown");
    await waitForGoaway(s);
    expect(s.goaways).toContainEqual({ code: http2.constants.NGHTTP2_NO_ERROR, data: '{"reason":"Shutdown"}' });
  });

  it("goaway_rate answers the request, then sends GOAWAY", async () => {
    const s = open();
    await f.admin.setFaults("apns", { goaway_rate: 1 });
    expect(apnsOutcome(await push(s, await providerToken(), await device()))).toBe("200");
    await waitForGoaway(s);
    expect(s.goaways.length).toBeGreaterThan(0);
  });
});

describe("strict tokens", () => {
  it("refuses well-formed tokens the simulator never issued with BadDeviceToken", async () => {
    const strict = await startSim({ apnsStrictTokens: true });
    try {
      await strict.admin.registerApnsKey({ team_id: TEAM, key_id: KID, topics: [TOPIC], p8: pem(teamKey) });
      const s = connectH2(strict.sim.publicUrl, strict.ca);
      sessions.push(s);
      const jwt = await providerToken();
      expect(apnsOutcome(await push(s, jwt, "cd".repeat(32)))).toBe("400 BadDeviceToken");
      const [issued] = await strict.admin.createApnsDevices(TOPIC);
      expect(apnsOutcome(await push(s, jwt, issued!))).toBe("200");
    } finally {
      await strict.close();
    }
  });
});
