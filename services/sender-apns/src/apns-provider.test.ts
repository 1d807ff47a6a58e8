import { generateKeyPairSync } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import { DeliveryBatchSchema } from "@herald/proto/delivery";
import {
  CredentialsError,
  type Http2Client,
  type Http2Request,
  type Http2Response,
  type Http2Target,
  type SendResult,
} from "@herald/sender";
import { describe, expect, it } from "vitest";
import { ApnsProvider, classify, parseError, tokenAccepted, type ApnsCredentials } from "./apns-provider.js";
import { ProviderTokens } from "./provider-token.js";

const err = (reason: string, extra: Record<string, unknown> = {}) => JSON.stringify({ reason, ...extra });

describe("classify", () => {
  // Every status and reason of docs/providers.md §APNs errors, and the outcome it must become.
  const table: [number, string, SendResult][] = [
    [400, "BadCollapseId", { kind: "failed", reason: "BadCollapseId" }],
    [400, "BadDeviceToken", { kind: "bounced", reason: "BadDeviceToken" }],
    [400, "BadExpirationDate", { kind: "failed", reason: "BadExpirationDate" }],
    [400, "BadMessageId", { kind: "failed", reason: "BadMessageId" }],
    [400, "BadPriority", { kind: "failed", reason: "BadPriority" }],
    [400, "BadTopic", { kind: "failed", reason: "BadTopic" }],
    [400, "DeviceTokenNotForTopic", { kind: "failed", reason: "DeviceTokenNotForTopic" }],
    [400, "DuplicateHeaders", { kind: "failed", reason: "DuplicateHeaders" }],
    [400, "IdleTimeout", { kind: "retry", reason: "IdleTimeout" }],
    [400, "InvalidPushType", { kind: "failed", reason: "InvalidPushType" }],
    [400, "MissingDeviceToken", { kind: "failed", reason: "MissingDeviceToken" }],
    [400, "MissingTopic", { kind: "failed", reason: "MissingTopic" }],
    [400, "PayloadEmpty", { kind: "failed", reason: "PayloadEmpty" }],
    [400, "TopicDisallowed", { kind: "failed", reason: "TopicDisallowed" }],
    [403, "BadCertificate", { kind: "failed", reason: "BadCertificate" }],
    [403, "BadCertificateEnvironment", { kind: "failed", reason: "BadCertificateEnvironment" }],
    [
      403,
      "ExpiredProviderToken",
      {
        kind: "failed",
        reason: "ExpiredProviderToken: APNs calls the provider token expired; check this host's clock",
      },
    ],
    [403, "Forbidden", { kind: "failed", reason: "Forbidden" }],
    [
      403,
      "InvalidProviderToken",
      {
        kind: "failed",
        reason: "InvalidProviderToken: APNs rejected the provider token; check the .p8 key, key id and team id",
      },
    ],
    [403, "MissingProviderToken", { kind: "failed", reason: "MissingProviderToken: APNs saw no provider token" }],
    [404, "BadPath", { kind: "failed", reason: "BadPath" }],
    [405, "MethodNotAllowed", { kind: "failed", reason: "MethodNotAllowed" }],
    [410, "Unregistered", { kind: "bounced", reason: "Unregistered" }],
    [410, "ExpiredToken", { kind: "bounced", reason: "ExpiredToken" }],
    [413, "PayloadTooLarge", { kind: "failed", reason: "PayloadTooLarge" }],
    [429, "TooManyProviderTokenUpdates", { kind: "retry", reason: "TooManyProviderTokenUpdates", throttled: true }],
    [429, "TooManyRequests", { kind: "retry", reason: "TooManyRequests", throttled: true }],
    [500, "InternalServerError", { kind: "retry", reason: "InternalServerError" }],
    [503, "ServiceUnavailable", { kind: "retry", reason: "ServiceUnavailable" }],
    [503, "Shutdown", { kind: "retry", reason: "Shutdown" }],
  ];

  it.each(table)("%i %s", (status, reason, expected) => {
    expect(classify(status, parseError({ status, body: err(reason) }))).toEqual(expected);
  });

  it("delivers on 200 with an empty body", () => {
    expect(classify(200, parseError({ status: 200, body: "" }))).toEqual({ kind: "delivered" });
  });

  it("passes a 410's timestamp on as when the token was seen dead", () => {
    const body = err("Unregistered", { timestamp: 1_790_000_000_000 });
    expect(classify(410, parseError({ status: 410, body }))).toEqual({
      kind: "bounced",
      reason: "Unregistered",
      observedAt: new Date(1_790_000_000_000),
    });
  });

  it("ignores a 410's timestamp that is no time a Date can hold", () => {
    for (const timestamp of [9e15, 1e300, "1e300", -1, "soon"]) {
      const body = err("Unregistered", { timestamp });
      expect(classify(410, parseError({ status: 410, body }))).toEqual({ kind: "bounced", reason: "Unregistered" });
    }
  });

  it("honours Retry-After and names answers without a reason by status", () => {
    expect(classify(429, {}, "3")).toEqual({ kind: "retry", reason: "HTTP429", throttled: true, retryAfterMs: 3000 });
    expect(classify(502, parseError({ status: 502, body: "<html>bad gateway</html>" }))).toEqual({
      kind: "retry",
      reason: "HTTP502",
    });
    expect(classify(418, {})).toEqual({ kind: "failed", reason: "HTTP418" });
  });

  it("knows which answers show the token was accepted", () => {
    expect(tokenAccepted(200, "")).toBe(true);
    expect(tokenAccepted(410, err("Unregistered"))).toBe(true);
    expect(tokenAccepted(400, err("BadDeviceToken"))).toBe(true);
    expect(tokenAccepted(429, err("TooManyRequests"))).toBe(true);
    expect(tokenAccepted(403, err("InvalidProviderToken"))).toBe(false);
    expect(tokenAccepted(429, err("TooManyProviderTokenUpdates"))).toBe(false);
    expect(tokenAccepted(503, err("ServiceUnavailable"))).toBe(false);
  });
});

/** A pool that answers from a script and records what it was asked: the provider's loop is under test. */
function scriptedPool(answers: [number, string][]) {
  const requests: (Http2Request & { target: Http2Target })[] = [];
  const retired: string[] = [];
  const pool = {
    async request(target: Http2Target, req: Http2Request): Promise<Http2Response> {
      requests.push({ ...req, target });
      const [status, body] = answers.shift() ?? [200, ""];
      return { status, headers: {}, body, retire: (reason) => retired.push(reason) };
    },
    close: async () => undefined,
  };
  return { pool: pool satisfies Http2Client, requests, retired };
}

function credentialsResponse(
  overrides: Partial<{ p8Key: string; keyId: string; teamId: string; topic: string; environment: string }> = {},
) {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return create(GetSendCredentialsResponseSchema, {
    fingerprint: "fp",
    credentials: {
      case: "apns",
      value: {
        p8Key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        keyId: "KEY1234567",
        teamId: "TEAM123456",
        topic: "com.example.app",
        environment: "sandbox",
        ...overrides,
      },
    },
  });
}

function sendSetup(answers: [number, string][], opts: { baseUrl?: string; now?: () => number } = {}) {
  const { pool, requests, retired } = scriptedPool(answers);
  const tokens = new ProviderTokens({ now: opts.now });
  const provider = new ApnsProvider({ pool, tokens, baseUrl: opts.baseUrl });
  const credentials = provider.prepareCredentials(credentialsResponse());
  const batch = create(DeliveryBatchSchema, {
    campaignId: "c1",
    appId: "a1",
    platform: Platform.IOS,
    payloads: [{ index: 0, title: "Hi", body: "There" }],
    createdAt: timestampFromDate(new Date()),
  });
  const send = (token = "ab".repeat(32)) =>
    provider.send({ deviceId: "d1", pushToken: token, payloadIndex: 0 } as never, {
      batch,
      payload: batch.payloads[0]!,
      credentials: credentials as ApnsCredentials,
      signal: new AbortController().signal,
    });
  return { send, requests, retired };
}

describe("ApnsProvider", () => {
  it("posts to /3/device/<token> on Apple's host for the environment with a bearer token", async () => {
    const { send, requests } = sendSetup([[200, ""]]);
    expect(await send()).toEqual({ kind: "delivered" });
    expect(requests[0]!.target.origin).toBe("https://api.sandbox.push.apple.com");
    expect(requests[0]!.path).toBe(`/3/device/${"ab".repeat(32)}`);
    expect(requests[0]!.headers.authorization).toMatch(/^bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(requests[0]!.headers["apns-topic"]).toBe("com.example.app");
  });

  it("sends to APNS_URL for both environments when it is set", async () => {
    const { send, requests } = sendSetup([[200, ""]], { baseUrl: "https://127.0.0.1:4443" });
    await send();
    expect(requests[0]!.target.origin).toBe("https://127.0.0.1:4443");
  });

  it("bounces a token that is not hex without sending it", async () => {
    const { send, requests } = sendSetup([]);
    expect(await send("../../admin")).toEqual({ kind: "bounced", reason: "BadDeviceToken" });
    expect(requests).toHaveLength(0);
  });

  it("refreshes the token once on ExpiredProviderToken (when it is old enough) and retries", async () => {
    let now = Date.now();
    const { send, requests } = sendSetup(
      [
        [200, ""],
        [403, err("ExpiredProviderToken")],
        [200, ""],
      ],
      { now: () => now },
    );
    await send();
    now += 30 * 60_000;
    expect(await send()).toEqual({ kind: "delivered" });
    expect(requests).toHaveLength(3);
    expect(requests[2]!.headers.authorization).not.toBe(requests[1]!.headers.authorization);
  });

  it("does not re-sign a young token that APNs calls expired", async () => {
    const { send, requests } = sendSetup([[403, err("ExpiredProviderToken")]]);
    expect(await send()).toMatchObject({ kind: "failed", reason: expect.stringMatching(/^ExpiredProviderToken/) });
    expect(requests).toHaveLength(1);
  });

  it("moves to a new connection on TooManyProviderTokenUpdates, once", async () => {
    const { send, retired } = sendSetup([
      [429, err("TooManyProviderTokenUpdates")],
      [200, ""],
    ]);
    expect(await send()).toEqual({ kind: "delivered" });
    expect(retired).toEqual(["TooManyProviderTokenUpdates"]);
    const again = sendSetup([
      [429, err("TooManyProviderTokenUpdates")],
      [429, err("TooManyProviderTokenUpdates")],
    ]);
    expect(await again.send()).toMatchObject({ kind: "retry", throttled: true });
    expect(again.requests).toHaveLength(2);
  });

  it("retires a connection APNs is shutting down", async () => {
    const { send, retired } = sendSetup([[503, err("Shutdown")]]);
    expect(await send()).toEqual({ kind: "retry", reason: "Shutdown" });
    expect(retired).toEqual(["Shutdown"]);
  });

  it("fails the following sends of a rejected token without asking APNs again", async () => {
    const { send, requests } = sendSetup([[403, err("InvalidProviderToken")]]);
    const first = await send();
    expect(first).toMatchObject({ kind: "failed", reason: expect.stringMatching(/^InvalidProviderToken: /) });
    expect(await send()).toEqual(first);
    expect(requests).toHaveLength(1);
  });

  it("fails payloads over 4096 bytes without sending", async () => {
    const { pool, requests } = scriptedPool([]);
    const provider = new ApnsProvider({ pool, tokens: new ProviderTokens() });
    const credentials = provider.prepareCredentials(credentialsResponse());
    const batch = create(DeliveryBatchSchema, {
      payloads: [{ index: 0, title: "t", body: "b" }],
      dataJson: JSON.stringify({ x: "y".repeat(5000) }),
    });
    const r = await provider.send({ deviceId: "d", pushToken: "ab".repeat(32), payloadIndex: 0 } as never, {
      batch,
      payload: batch.payloads[0]!,
      credentials,
      signal: new AbortController().signal,
    });
    expect(r).toEqual({ kind: "failed", reason: "PayloadTooLarge" });
    expect(requests).toHaveLength(0);
  });

  it("turns unusable credentials into a readable CredentialsError", () => {
    const provider = new ApnsProvider({ pool: scriptedPool([]).pool, tokens: new ProviderTokens() });
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const cases: [Parameters<typeof credentialsResponse>[0], RegExp][] = [
      [{ p8Key: "not a key" }, /does not parse/],
      [{ p8Key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() }, /not a P-256 key/],
      [{ keyId: "short" }, /10 characters/],
      [{ topic: "" }, /no topic/],
      [{ environment: "staging" }, /unknown APNs environment/],
    ];
    for (const [overrides, message] of cases) {
      expect(() => provider.prepareCredentials(credentialsResponse(overrides))).toThrow(CredentialsError);
      expect(() => provider.prepareCredentials(credentialsResponse(overrides))).toThrow(message);
    }
    expect(() => provider.prepareCredentials(create(GetSendCredentialsResponseSchema, {}))).toThrow(CredentialsError);
  });
});
