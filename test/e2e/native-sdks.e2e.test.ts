import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { type Counts, runMaven, runSwift, surefireCounts, xctestCounts } from "../../scripts/native-sdks.mjs";
import { clientFixture as fixture } from "../support/client-fixtures.js";
import { nativeLiveEnv } from "../support/native-live.js";
import { restClient, startStack, type Stack } from "../support/stack.js";

// The native client libraries against a whole Herald: the shared fixtures of sdks/fixtures
// checked against this gateway, then sdks/ios's XCTest suites (unit and live) inside the
// Swift root and sdks/android's JUnit suites (core, glue against the stubs, live), each
// given an app of its own (test/support/native-live.ts). Their counts go to
// test-results/native-tests.json, which .ci/run adds to vitest's.
const root = path.resolve(import.meta.dirname, "../..");
const COUNTS_FILE = path.join(root, "test-results/native-tests.json");
const SUITE_TIMEOUT = 20 * 60_000;

let stack: Stack;
let sim: SimAdminClient;

beforeAll(async () => {
  stack = await startStack(inject("infra"), { env: { LOG_LEVEL: "info" } });
  sim = new SimAdminClient(stack.simAdminUrl);
});

afterAll(async () => {
  await stack?.stop();
});

/** An app of the fixtures' own, with a client key and an iOS and an Android token the simulator knows. */
async function fixtureApp() {
  const env = await nativeLiveEnv({
    gatewayUrl: stack.gatewayUrls[0]!,
    bootKey: stack.apiKey,
    simAdminUrl: stack.simAdminUrl,
    name: "fixtures",
  });
  return {
    appId: env.HERALD_LIVE_APP_ID,
    server: restClient(env.HERALD_LIVE_BASE_URL, env.HERALD_LIVE_SERVER_KEY),
    client: restClient(env.HERALD_LIVE_BASE_URL, env.HERALD_LIVE_CLIENT_KEY),
    topic: env.HERALD_LIVE_APNS_TOPIC,
  };
}

describe("the shared client fixtures (sdks/fixtures) hold against the gateway", () => {
  let app: Awaited<ReturnType<typeof fixtureApp>>;
  beforeAll(async () => {
    app = await fixtureApp();
  });

  it("register.json: every body registers, with the fields it sends", async () => {
    const { cases } = fixture("register.json");
    for (const c of cases) {
      const body = { ...c.body, app_id: app.appId };
      const res = await app.client("POST", "/v1/devices/register", body);
      expect(res.status, `${c.name}: ${res.text}`).toBe(200);
      for (const [k, v] of Object.entries(body)) expect(res.body[k], `${c.name}: ${k}`).toEqual(v);
    }
  });

  it("locale.json: every value kept registers, every value left out would have been refused", async () => {
    const { languages, timezones } = fixture("locale.json");
    const register = (extra: Record<string, string>) =>
      app.client("POST", "/v1/devices/register", {
        app_id: app.appId,
        platform: "android",
        push_token: "fcm:locale-fixture",
        ...extra,
      });
    for (const l of languages) {
      if (l.tag === "") continue;
      const res = await register({ language: l.language ?? l.tag });
      expect(res.status, `${l.tag}: ${res.text}`).toBe(l.language === null ? 400 : 200);
      if (l.language !== null) expect(res.body.language).toBe(l.language);
    }
    for (const z of timezones) {
      if (z.zone === "") continue;
      const res = await register({ timezone: z.timezone ?? z.zone });
      expect(res.status, `${z.zone}: ${res.text}`).toBe(z.timezone === null ? 400 : 200);
    }
  });

  it("channels.json: the list has the fixture's shape, an ETag, and 304 for it", async () => {
    const { steps } = fixture("channels.json");
    const first = steps[0].answer.body.data[0];
    const { id, app_id: _app, created_at: _c, updated_at: _u, ...settings } = first;
    const created = await app.server("POST", `/v1/apps/${app.appId}/android-channels`, { id, ...settings });
    expect(created.status, created.text).toBe(201);
    const list = await app.client("GET", `/v1/apps/${app.appId}/android-channels`);
    expect(list.status, list.text).toBe(200);
    expect(Object.keys(list.body).sort()).toEqual(Object.keys(steps[0].answer.body).sort());
    expect(Object.keys(list.body.data[0]).sort()).toEqual(Object.keys(first).sort());
    expect({ ...list.body.data[0], app_id: _app, created_at: _c, updated_at: _u }).toEqual(first);
    const etag = list.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await app.client("GET", `/v1/apps/${app.appId}/android-channels`, undefined, {
      "if-none-match": etag!,
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  it("in-app.json and events.json: a device's messages have the fixture's fields, the event bodies are accepted", async () => {
    const [token] = await sim.createApnsDevices(app.topic, 1);
    const device = await app.client("POST", "/v1/devices/register", {
      app_id: app.appId,
      platform: "ios",
      push_token: token,
      language: "de",
    });
    expect(device.status, device.text).toBe(200);
    const proof = { "x-herald-push-token": token! };
    const message = await app.server("POST", `/v1/apps/${app.appId}/in-app-messages`, {
      name: "welcome",
      contents: { de: { title: "Willkommen", body: "Schön" }, en: { title: "Welcome", body: "Nice" } },
      action_url: "https://example.com/welcome",
      audience: { kind: "all" },
    });
    expect(message.status, message.text).toBe(201);
    const listed = await app.client("GET", `/v1/devices/${device.body.id}/in-app-messages`, undefined, proof);
    expect(listed.status, listed.text).toBe(200);
    const shape = fixture("in-app.json").cases[0].body;
    expect(Object.keys(listed.body)).toEqual(Object.keys(shape));
    expect(Object.keys(listed.body.data[0]).sort()).toEqual(Object.keys(shape.data[0]).sort());
    expect(listed.body.data[0]).toMatchObject({ language: "de", title: "Willkommen" });

    const events = fixture("events.json");
    const at = (p: string) => p.replace(events.device_id, device.body.id);
    for (const e of events.in_app_events) {
      const res = await app.client(e.method, at(e.path).replace(e.message_id, message.body.id), e.body, proof);
      expect(res.status, `${e.type}: ${res.text}`).toBe(204);
    }
    // A campaign of another app, or none: 404, which the fixture says to drop.
    for (const e of events.notification_events) {
      const res = await app.client(e.method, at(e.path), e.body, proof);
      expect(res.status, `${e.type}: ${res.text}`).toBe(404);
      expect(events.notification_outcomes["404"]).toBe("drop");
    }
  });
});

/** The suites' counts, kept for .ci/run's closing line. */
function record(suite: "ios" | "android", counts: Counts | undefined): void {
  mkdirSync(path.dirname(COUNTS_FILE), { recursive: true });
  let all: Record<string, Counts> = {};
  try {
    all = JSON.parse(readFileSync(COUNTS_FILE, "utf8"));
  } catch {}
  all[suite] = counts ?? { passed: 0, failed: 1, skipped: 0 };
  writeFileSync(COUNTS_FILE, `${JSON.stringify(all, null, 2)}\n`);
}

/** Runs a library's suite with an app of its own; the live tests must run, never skip. */
async function runSuite(
  suite: "ios" | "android",
  run: (env: NodeJS.ProcessEnv) => Promise<{ status: number; output: string }>,
  count: (output: string) => Counts | undefined,
): Promise<void> {
  const live = await nativeLiveEnv({
    gatewayUrl: stack.gatewayUrls[0]!,
    bootKey: stack.apiKey,
    simAdminUrl: stack.simAdminUrl,
    name: suite,
  });
  const { status, output } = await run({ ...process.env, ...live });
  const counts = count(output);
  record(suite, counts);
  expect(counts, `no test count in the ${suite} output:\n${output.slice(-4000)}`).toBeDefined();
  expect(counts!.failed, output.slice(-8000)).toBe(0);
  expect(counts!.skipped, "live tests skipped").toBe(0);
  expect(counts!.passed).toBeGreaterThan(0);
  expect(status, output.slice(-8000)).toBe(0);
}

describe("the native libraries' own suites against this Herald", () => {
  it(
    "sdks/ios: swift test (XCTest: core unit tests and the live suite)",
    () => runSuite("ios", (env) => runSwift(["test", "--disable-swift-testing"], { env }), xctestCounts),
    SUITE_TIMEOUT,
  );

  it(
    "sdks/android: mvn test (JUnit: core, glue through the stubs, and the live suite)",
    () => runSuite("android", (env) => runMaven(["test"], { env }), surefireCounts),
    SUITE_TIMEOUT,
  );
});
