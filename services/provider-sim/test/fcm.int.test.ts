import { createPrivateKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import http2 from "node:http2";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FcmDelivery } from "../src/recorder.js";
import { connectH2, type H2Answer, type H2Outcome, type H2Session } from "./h2-client.js";
import { pkcs8Pem as pem, rawRequest, type RawResponse, type SimFixture, startSim, useSim } from "./sim-fixture.js";
import { waitUntil } from "../../../test/support/wait.js";

const PROJECT = "herald-fcm-test";
const OTHER_PROJECT = "herald-other-project";
const EMAIL = `sender@${PROJECT}.iam.gserviceaccount.com`;
const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";

const f = useSim({}, { clearFaults: "fcm" });
let tokenUri: string;
let h2: H2Session;
const accountKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;

beforeAll(async () => {
  tokenUri = `${f.sim.publicUrl}/token`;
  const view = await f.admin.registerFcmServiceAccount({
    project_id: PROJECT,
    client_email: EMAIL,
    private_key: pem(accountKey),
    private_key_id: "key-1",
  });
  expect(view).toMatchObject({ client_email: EMAIL, project_id: PROJECT, token_uri: tokenUri, tokens_issued: 0 });
  h2 = connectH2(f.sim.publicUrl, f.ca);
});
afterAll(() => {
  h2?.close();
});

/** The JWT-bearer assertion a Google client library signs with a service account's key. */
function assertion(
  claims: Record<string, unknown> = {},
  opts: { key?: KeyObject; kid?: string } = {},
): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: EMAIL, scope: SCOPE, aud: tokenUri, iat, exp: iat + 3600, ...claims })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: opts.kid ?? "key-1" })
    .sign(opts.key ?? accountKey);
}

/** POSTs to the token endpoint over HTTP/1.1, as google-auth-library does. */
function tokenRequest(
  form: Record<string, string>,
  contentType = "application/x-www-form-urlencoded",
  uri = tokenUri,
): Promise<RawResponse> {
  return rawRequest(uri, {
    ca: f.ca,
    headers: { "content-type": contentType },
    body: new URLSearchParams(form).toString(),
  });
}

/** The whole OAuth flow for an account on any simulator: sign an assertion for its token URI, exchange it. */
async function tokenFrom(
  sim: SimFixture,
  account: { client_email: string; token_uri: string; key: KeyObject; kid: string },
): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const signed = await new SignJWT({
    iss: account.client_email,
    scope: SCOPE,
    aud: account.token_uri,
    iat,
    exp: iat + 3600,
  })
    .setProtectedHeader({ alg: "RS256", kid: account.kid })
    .sign(account.key);
  const res = await rawRequest(account.token_uri, {
    ca: sim.ca,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: signed,
    }).toString(),
  });
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { access_token: string }).access_token;
}

async function accessToken(claims: Record<string, unknown> = {}): Promise<string> {
  const res = await tokenRequest({
    grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
    assertion: await assertion(claims),
  });
  expect(res.status).toBe(200);
  return (JSON.parse(res.body) as { access_token: string }).access_token;
}

function send(bearer: string | undefined, body: unknown, project = PROJECT, session = h2): Promise<H2Outcome> {
  return session.request(
    {
      ":path": `/v1/projects/${project}/messages:send`,
      "content-type": "application/json",
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
    },
    typeof body === "string" ? body : JSON.stringify(body),
  );
}

interface GoogleError {
  error: {
    code: number;
    message: string;
    status: string;
    details?: { "@type": string; errorCode?: string; reason?: string }[];
  };
}

/** `<status> <google status> <FcmError code | detail type>` */
function outcome(o: H2Outcome): string {
  if ("error" in o) return `reset ${o.rstCode ?? o.error}`;
  if (o.status === 200) return "200";
  const { error } = JSON.parse(o.body) as GoogleError;
  const detail = error.details?.[0];
  const kind = detail?.errorCode ?? detail?.reason ?? detail?.["@type"].split(".").pop() ?? "-";
  return `${o.status} ${error.status} ${kind}`;
}

async function device(project = PROJECT): Promise<string> {
  return (await f.admin.createFcmDevices(project))[0]!;
}

const notification = (token: string) => ({
  message: { token, notification: { title: "Hi", body: "there" }, data: { order: "42" } },
});

describe("OAuth token endpoint", () => {
  it("exchanges a service account's assertion for a Bearer token, and the token sends", async () => {
    const res = await tokenRequest({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: await assertion(),
    });
    const body = JSON.parse(res.body) as { access_token: string; expires_in: number; token_type: string };
    expect([res.status, body.expires_in, body.token_type, res.headers["cache-control"]]).toEqual([
      200,
      3599,
      "Bearer",
      "no-store",
    ]);
    expect(body.access_token).toMatch(/^ya29\./);

    const token = await device();
    const sent = (await send(body.access_token, notification(token))) as H2Answer;
    expect(sent.status).toBe(200);
    const { name } = JSON.parse(sent.body) as { name: string };
    expect(name).toMatch(new RegExp(`^projects/${PROJECT}/messages/0:\\d+%[0-9a-f]{16}$`));

    const { deliveries } = await f.admin.deliveries({ platform: "fcm", target: token });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      platform: "fcm",
      target: token,
      project: PROJECT,
      name,
      message: notification(token).message,
      payload: JSON.stringify(notification(token).message),
    } satisfies Partial<FcmDelivery>);
  });

  it("serves HTTP/2 as well", async () => {
    const res = (await h2.request(
      { ":path": "/token", "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion: await assertion(),
      }).toString(),
    )) as H2Answer;
    expect(res.status).toBe(200);
  });

  it("issues one token that a sender reuses for every send: the issuance count shows caching", async () => {
    const before = (await f.admin.fcmServiceAccounts()).service_accounts.find(
      (a) => a.client_email === EMAIL,
    )!.tokens_issued;
    const bearer = await accessToken();
    const tokens = await f.admin.createFcmDevices(PROJECT, 5);
    const outcomes = await Promise.all(tokens.map((t) => send(bearer, notification(t))));
    expect(outcomes.map(outcome)).toEqual(Array(5).fill("200"));
    const after = (await f.admin.fcmServiceAccounts()).service_accounts.find(
      (a) => a.client_email === EMAIL,
    )!.tokens_issued;
    expect(after - before).toBe(1);
  });

  it("works end to end with a service-account JSON the simulator generates", async () => {
    const json = await f.admin.createFcmServiceAccount(OTHER_PROJECT);
    expect(json).toMatchObject({ type: "service_account", project_id: OTHER_PROJECT, token_uri: tokenUri });
    const access_token = await tokenFrom(f, {
      ...json,
      key: createPrivateKey(json.private_key),
      kid: json.private_key_id,
    });
    expect(outcome(await send(access_token, notification(await device(OTHER_PROJECT)), OTHER_PROJECT))).toBe("200");
  });

  it("refuses bad requests and bad assertions the way Google's endpoint does", async () => {
    const grant = "urn:ietf:params:oauth:grant-type:jwt-bearer";
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const cases: [Promise<RawResponse>, number, string][] = [
      [tokenRequest({ grant_type: "client_credentials", assertion: "x" }), 400, "unsupported_grant_type"],
      [tokenRequest({ grant_type: grant }), 400, "invalid_request"],
      [tokenRequest({ grant_type: grant, assertion: await assertion() }, "application/json"), 400, "invalid_request"],
      [tokenRequest({ grant_type: grant, assertion: await assertion({}, { key: other }) }), 400, "invalid_grant"],
      [
        tokenRequest({ grant_type: grant, assertion: await assertion({ aud: "https://oauth2.googleapis.com/token" }) }),
        400,
        "invalid_grant",
      ],
      [
        tokenRequest({ grant_type: grant, assertion: await assertion({ iat: now - 7200, exp: now - 3600 }) }),
        400,
        "invalid_grant",
      ],
      [
        tokenRequest({ grant_type: grant, assertion: await assertion({ iss: "nobody@x.iam.gserviceaccount.com" }) }),
        400,
        "invalid_grant",
      ],
      [
        tokenRequest({
          grant_type: grant,
          assertion: await assertion({ scope: "https://www.googleapis.com/auth/drive" }),
        }),
        400,
        "invalid_scope",
      ],
    ];
    for (const [res, status, error] of cases) {
      const r = await res;
      expect([r.status, (JSON.parse(r.body) as { error: string }).error], error).toEqual([status, error]);
    }
  });

  it("is never faulted: FCM faults apply to sends only", async () => {
    await f.admin.setFaults("fcm", { error_rate: 1, error_status: 503 });
    const bearer = await accessToken();
    expect(outcome(await send(bearer, notification(await device())))).toBe("503 UNAVAILABLE UNAVAILABLE");
  });
});

describe("access tokens on send", () => {
  it("needs a Bearer token the simulator issued, for an account of the project", async () => {
    const token = await device();
    expect(outcome(await send(undefined, notification(token)))).toBe("401 UNAUTHENTICATED CREDENTIALS_MISSING");
    expect(outcome(await send("ya29.made-up", notification(token)))).toBe("401 UNAUTHENTICATED -");
    const bearer = await accessToken();
    expect(outcome(await send(bearer, notification(await device(OTHER_PROJECT)), OTHER_PROJECT))).toBe(
      "403 PERMISSION_DENIED IAM_PERMISSION_DENIED",
    );
  });

  it("answers 403 SENDER_ID_MISMATCH for a registration token of another project", async () => {
    const bearer = await accessToken();
    expect(outcome(await send(bearer, notification(await device(OTHER_PROJECT))))).toBe(
      "403 PERMISSION_DENIED SENDER_ID_MISMATCH",
    );
  });

  it("stops taking a revoked account's assertions and tokens", async () => {
    const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
    const email = `revoked@${PROJECT}.iam.gserviceaccount.com`;
    await f.admin.registerFcmServiceAccount({ project_id: PROJECT, client_email: email, private_key: pem(key) });
    const signed = () => assertion({ iss: email }, { key });
    const res = await tokenRequest({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: await signed(),
    });
    const { access_token } = JSON.parse(res.body) as { access_token: string };
    await f.admin.revokeFcmServiceAccount(email);
    const again = await tokenRequest({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: await signed(),
    });
    expect([again.status, JSON.parse(again.body)]).toEqual([
      400,
      { error: "invalid_grant", error_description: "Invalid grant: account not found" },
    ]);
    expect(outcome(await send(access_token, notification(await device())))).toBe("401 UNAUTHENTICATED -");
  });

  it("refuses an expired access token with ACCESS_TOKEN_EXPIRED", async () => {
    const short = await startSim({ fcmTokenTtlS: 1 });
    const session = connectH2(short.sim.publicUrl, short.ca);
    try {
      const json = await short.admin.createFcmServiceAccount(PROJECT);
      const accessToken = await tokenFrom(short, {
        ...json,
        key: createPrivateKey(json.private_key),
        kid: json.private_key_id,
      });
      // Issued before this instant, so expired (ttl 1 s, the least) one second after it.
      const expiresBy = Date.now() + 1_000;
      const [token] = await short.admin.createFcmDevices(PROJECT);
      expect(outcome(await send(accessToken, notification(token!), PROJECT, session))).toBe("200");
      // A TTL wait remains: the sim's clock is not injectable through start().
      await waitUntil("the access token to expire", () => Date.now() > expiresBy, 2_000, 20);
      expect(outcome(await send(accessToken, notification(token!), PROJECT, session))).toBe(
        "401 UNAUTHENTICATED ACCESS_TOKEN_EXPIRED",
      );
    } finally {
      session.close();
      await short.close();
    }
  });
});

describe("messages", () => {
  it("applies the v1 rules to the request body", async () => {
    const bearer = await accessToken();
    const token = await device();
    const cases: [unknown, string][] = [
      [{ message: { notification: { title: "t" } } }, "400 INVALID_ARGUMENT INVALID_ARGUMENT"],
      [{ message: { token, topic: "news" } }, "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, data: { count: 1 } } }, "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, data: { from: "me" } } }, "400 INVALID_ARGUMENT INVALID_ARGUMENT"],
      [{ message: { token, data: { "google.x": "1" } } }, "400 INVALID_ARGUMENT INVALID_ARGUMENT"],
      [{ message: { token, priority: "high" } }, "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, android: { ttl: 3600 } } }, "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, android: { priority: "urgent" } } }, "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, data: { pad: "x".repeat(4096) } } }, "400 INVALID_ARGUMENT INVALID_ARGUMENT"],
      ["{not json", "400 INVALID_ARGUMENT BadRequest"],
      [{ message: { token, android: { priority: "high", ttl: "3600s", collapse_key: "k" } } }, "200"],
      [
        { message: { token, android: { collapseKey: "k", directBootOk: true }, fcmOptions: { analyticsLabel: "l" } } },
        "200",
      ],
    ];
    for (const [body, expected] of cases)
      expect(outcome(await send(bearer, body)), JSON.stringify(body).slice(0, 80)).toBe(expected);
  });

  it("validate_only checks everything and records nothing", async () => {
    const bearer = await accessToken();
    const token = await device();
    const res = (await send(bearer, { ...notification(token), validate_only: true })) as H2Answer;
    expect([res.status, JSON.parse(res.body)]).toEqual([200, { name: `projects/${PROJECT}/messages/fake_message_id` }]);
    expect(outcome(await send(bearer, { message: { token, data: { n: 1 } }, validateOnly: true }))).toBe(
      "400 INVALID_ARGUMENT BadRequest",
    );
    expect((await f.admin.deliveries({ platform: "fcm", target: token })).deliveries).toEqual([]);
  });

  it("answers 404 UNREGISTERED for an unregistered token, until revived", async () => {
    const bearer = await accessToken();
    const token = await device();
    await f.admin.unregisterFcmDevice(token);
    const res = (await send(bearer, notification(token))) as H2Answer;
    expect(JSON.parse(res.body)).toEqual({
      error: {
        code: 404,
        message: "Requested entity was not found.",
        status: "NOT_FOUND",
        details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode: "UNREGISTERED" }],
      },
    });
    await f.admin.reviveFcmDevice(token);
    expect(outcome(await send(bearer, notification(token)))).toBe("200");
  });

  it("accepts registration tokens it never issued unless strict, then refuses them as invalid", async () => {
    const bearer = await accessToken();
    const madeUp = `fake:APA91b${"z".repeat(140)}`;
    expect(outcome(await send(bearer, notification(madeUp)))).toBe("200");
    const strict = await startSim({ fcmStrictTokens: true });
    const session = connectH2(strict.sim.publicUrl, strict.ca);
    try {
      const account = await strict.admin.registerFcmServiceAccount({
        project_id: PROJECT,
        client_email: EMAIL,
        private_key: pem(accountKey),
        private_key_id: "key-1",
      });
      const access_token = await tokenFrom(strict, { ...account, key: accountKey, kid: "key-1" });
      const refused = (await send(access_token, notification(madeUp), PROJECT, session)) as H2Answer;
      expect(outcome(refused)).toBe("400 INVALID_ARGUMENT INVALID_ARGUMENT");
      expect((JSON.parse(refused.body) as GoogleError).error.message).toBe(
        "The registration token is not a valid FCM registration token",
      );
      const [issued] = await strict.admin.createFcmDevices(PROJECT);
      expect(outcome(await send(access_token, notification(issued!), PROJECT, session))).toBe("200");
    } finally {
      session.close();
      await strict.close();
    }
  });

  it("takes sends over HTTP/1.1 too", async () => {
    const bearer = await accessToken();
    const res = await rawRequest(`${f.sim.publicUrl}/v1/projects/${PROJECT}/messages:send`, {
      ca: f.ca,
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify(notification(await device())),
    });
    expect(res.status).toBe(200);
  });
});

describe("faults", () => {
  it("answers a throttle with 429 QUOTA_EXCEEDED and Retry-After, and errors with INTERNAL and UNAVAILABLE", async () => {
    const bearer = await accessToken();
    const token = await device();
    await f.admin.setFaults("fcm", { throttle_rate: 1, retry_after_s: 30, remaining: 1 });
    const throttled = (await send(bearer, notification(token))) as H2Answer;
    expect([outcome(throttled), throttled.headers["retry-after"]]).toEqual([
      "429 RESOURCE_EXHAUSTED QUOTA_EXCEEDED",
      "30",
    ]);
    await f.admin.setFaults("fcm", { error_rate: 1, error_status: 500, remaining: 1 });
    expect(outcome(await send(bearer, notification(token)))).toBe("500 INTERNAL INTERNAL");
    await f.admin.setFaults("fcm", { error_rate: 1, error_status: 503, remaining: 1 });
    expect(outcome(await send(bearer, notification(token)))).toBe("503 UNAVAILABLE UNAVAILABLE");
    expect(outcome(await send(bearer, notification(token)))).toBe("200");
    expect((await f.admin.deliveryCount("fcm")).by_target[token]).toBe(1);
  });

  it("drops and delays on demand", async () => {
    const bearer = await accessToken();
    const token = await device();
    await f.admin.setFaults("fcm", { drop_rate: 1, remaining: 1 });
    expect(outcome(await send(bearer, notification(token)))).toBe(`reset ${http2.constants.NGHTTP2_INTERNAL_ERROR}`);
    await f.admin.setFaults("fcm", { latency_ms: 250, remaining: 1 });
    const started = performance.now();
    expect(outcome(await send(bearer, notification(token)))).toBe("200");
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });
});
