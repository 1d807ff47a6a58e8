import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { GetSendCredentialsResponseSchema } from "@herald/proto/credential";
import { DeliveryBatchSchema, DeliveryTargetSchema } from "@herald/proto/delivery";
import { createLogger } from "@herald/runtime";
import { CredentialsError, type Http2Client } from "@herald/sender";
import { describe, expect, it } from "vitest";
import { makeServiceAccount } from "../../../test/support/credential-fixtures.js";
import type { FcmResponse } from "./fcm-errors.js";
import { FcmProvider } from "./fcm-provider.js";
import { OAuthTokenSource, type TokenEndpointResponse } from "./oauth-token.js";

// The provider's own decisions — what it refuses before sending, how it uses the token
// and reacts to answers — with a scripted transport and token endpoint, no network.
const log = createLogger("test", "silent");

function harness(
  answers: (FcmResponse | undefined)[],
  tokenAnswer: () => TokenEndpointResponse = () => ({ status: 200, body: '{"access_token":"at","expires_in":3600}' }),
) {
  const sent: { url: string; headers: Record<string, string>; body: unknown }[] = [];
  const transport: Http2Client = {
    async request(target, req) {
      sent.push({
        url: target.origin + req.path,
        headers: req.headers as Record<string, string>,
        body: JSON.parse(req.body.toString("utf8")),
      });
      const answer = answers.shift() ?? { status: 200, headers: {}, body: '{"name":"projects/p/messages/1"}' };
      return { ...answer, retire: () => undefined };
    },
    close: async () => undefined,
  };
  let tokenFetches = 0;
  const tokens = new OAuthTokenSource(async () => {
    tokenFetches++;
    return tokenAnswer();
  });
  const slept: number[] = [];
  let now = Date.now();
  const acquired: string[] = [];
  const provider = new FcmProvider({
    fcmUrl: "https://fcm.example.test/base",
    transport,
    tokens,
    ceiling: { acquire: async (appId) => void acquired.push(appId) },
    log,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  });
  const sa = makeServiceAccount({ tokenUri: "https://oauth.example.test/token", projectId: "my-proj" });
  const credentials = provider.prepareCredentials(
    create(GetSendCredentialsResponseSchema, {
      fingerprint: "f",
      credentials: { case: "fcm", value: { serviceAccountJson: sa.json } },
    }),
  );
  const send = (dataJson = "", token = "device-token") => {
    const batch = create(DeliveryBatchSchema, {
      campaignId: "c",
      appId: "app-1",
      platform: Platform.ANDROID,
      payloads: [{ index: 0, title: "T", body: "B" }],
      dataJson,
      ttlSeconds: 60,
      createdAt: timestampFromDate(new Date()),
    });
    const target = create(DeliveryTargetSchema, { deviceId: "d", pushToken: token, payloadIndex: 0 });
    return provider.send(target, {
      batch,
      payload: batch.payloads[0]!,
      credentials,
      signal: new AbortController().signal,
    });
  };
  return { provider, sent, send, slept, acquired, tokenFetches: () => tokenFetches };
}

const quota = (retryAfter?: string): FcmResponse => ({
  status: 429,
  headers: retryAfter ? { "retry-after": retryAfter } : {},
  body: JSON.stringify({
    error: {
      code: 429,
      status: "RESOURCE_EXHAUSTED",
      details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "QUOTA_EXCEEDED" }],
    },
  }),
});

describe("FcmProvider", () => {
  it("posts the message to its project's messages:send with the access token, within the app's ceiling", async () => {
    const h = harness([]);
    expect(await h.send(JSON.stringify({ n: 1 }))).toEqual({ kind: "delivered" });
    expect(h.sent).toEqual([
      {
        url: "https://fcm.example.test/base/v1/projects/my-proj/messages:send",
        headers: { authorization: "Bearer at", "content-type": "application/json; charset=utf-8" },
        body: {
          message: {
            token: "device-token",
            notification: { title: "T", body: "B" },
            data: { n: "1", herald_campaign_id: "c" },
            android: { priority: "normal", ttl: "60s" },
          },
        },
      },
    ]);
    expect(h.acquired).toEqual(["app-1"]);
  });

  it("fails without sending: reserved data keys, oversized payloads, missing tokens", async () => {
    const h = harness([]);
    expect(await h.send(JSON.stringify({ "google.x": "1" }))).toEqual({
      kind: "failed",
      reason: "ReservedDataKey: google.x",
    });
    expect(await h.send(JSON.stringify({ big: "x".repeat(4096) }))).toEqual({
      kind: "failed",
      reason: "PayloadTooLarge",
    });
    expect(await h.send("", "")).toEqual({ kind: "failed", reason: "MissingDeviceToken" });
    expect(h.sent).toHaveLength(0);
    expect(h.acquired).toHaveLength(0);
  });

  it("fails every send with a readable reason when the token endpoint rejects the account", async () => {
    const h = harness([], () => ({
      status: 400,
      body: '{"error":"invalid_grant","error_description":"Invalid grant: account not found"}',
    }));
    const results = await Promise.all([h.send(), h.send(), h.send()]);
    expect(results).toEqual(
      Array(3).fill({ kind: "failed", reason: "OAuthRejected: invalid_grant: Invalid grant: account not found" }),
    );
    expect(h.tokenFetches()).toBe(1);
    expect(h.sent).toHaveLength(0);
  });

  it("retries while the token endpoint is unavailable", async () => {
    const h = harness([], () => ({ status: 503, body: "" }));
    expect(await h.send()).toEqual({ kind: "retry", reason: "OAuthUnavailable: token endpoint answered 503" });
  });

  it("fetches a new access token after FCM refused the old one", async () => {
    const h = harness([{ status: 401, headers: {}, body: '{"error":{"code":401,"status":"UNAUTHENTICATED"}}' }]);
    expect(await h.send()).toEqual({ kind: "retry", reason: "UNAUTHENTICATED" });
    expect(await h.send()).toEqual({ kind: "delivered" });
    expect(h.tokenFetches()).toBe(2);
  });

  it("holds the project's later sends back for Retry-After after QUOTA_EXCEEDED", async () => {
    const h = harness([quota("3")]);
    expect(await h.send()).toMatchObject({ kind: "retry", throttled: true, retryAfterMs: 3_000 });
    expect(await h.send()).toEqual({ kind: "delivered" });
    expect(h.slept).toEqual([3_000]);
  });

  it("sends token requests to FCM_TOKEN_URL when it is set, and to the account's token_uri otherwise", () => {
    const creds = (override?: string) => {
      const provider = new FcmProvider({
        fcmUrl: "https://fcm.example.test",
        tokenUrlOverride: override,
        transport: {
          request: async () => ({ status: 200, headers: {}, body: "{}", retire: () => undefined }),
          close: async () => undefined,
        },
        tokens: new OAuthTokenSource(async () => ({ status: 200, body: '{"access_token":"at","expires_in":3600}' })),
        ceiling: { acquire: async () => undefined },
        log,
      });
      const sa = makeServiceAccount({ tokenUri: "https://oauth2.example.test/token" });
      return provider.prepareCredentials(
        create(GetSendCredentialsResponseSchema, {
          credentials: { case: "fcm", value: { serviceAccountJson: sa.json } },
        }),
      );
    };
    expect(creds().tokenUri).toBe("https://oauth2.example.test/token");
    expect(creds("https://127.0.0.1:4443/token").tokenUri).toBe("https://127.0.0.1:4443/token");
  });

  it("refuses credentials that are not a usable service account", () => {
    const h = harness([]);
    const prepare = (json: string) =>
      h.provider.prepareCredentials(
        create(GetSendCredentialsResponseSchema, { credentials: { case: "fcm", value: { serviceAccountJson: json } } }),
      );
    const sa = JSON.parse(makeServiceAccount().json) as Record<string, string>;
    expect(() => prepare("{not json")).toThrow(CredentialsError);
    expect(() => prepare(JSON.stringify({ ...sa, token_uri: "http://oauth.example.test/token" }))).toThrow(
      "token_uri must be https",
    );
    expect(() => prepare(JSON.stringify({ ...sa, private_key: "nope" }))).toThrow("not a readable PEM key");
    expect(() => prepare(JSON.stringify({ ...sa, project_id: "" }))).toThrow("missing project_id");
    expect(() => h.provider.prepareCredentials(create(GetSendCredentialsResponseSchema, {}))).toThrow(
      "holds no service account",
    );
    try {
      prepare(JSON.stringify({ ...sa, private_key: sa.private_key!.slice(0, 200) }));
    } catch (err) {
      expect((err as Error).message).not.toContain("PRIVATE KEY");
    }
  });
});
