import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, expectError, startBackends, startGateway, type Backends, type TestGateway } from "./harness.js";

// Inputs that once reached the services and came back as 500s: numbers that are not
// finite, NUL characters, path ids longer than the router's default limit. Each is a
// clear 4xx with the API's error body now, on every route that takes them.
let backends: Backends;
let gw: TestGateway;
let key: string;
let appId: string;

beforeAll(async () => {
  backends = await startBackends();
  gw = await startGateway(backends);
  key = backends.bootstrapKey;
  appId = (await createApp(gw, key)).id;
});

afterAll(async () => {
  await gw?.close();
  await backends?.stop();
});

describe("input rules beyond the schemas", () => {
  it("answers 400 to page numbers that are not finite, on every list route", async () => {
    for (const route of [
      "/v1/apps",
      `/v1/devices?app_id=${appId}`,
      `/v1/campaigns?app_id=${appId}`,
      `/v1/segments?app_id=${appId}`,
    ]) {
      for (const page of ["1e400", "1e309", "Infinity", "-Infinity"]) {
        const sep = route.includes("?") ? "&" : "?";
        const res = await gw.call("GET", `${route}${sep}page=${page}&per_page=10`, key);
        expect(res.status, `${route} page=${page}: ${res.text}`).toBe(400);
        expect(res.body.error).toBe("ValidationError");
      }
    }
  });

  it("answers 400 to a NUL character in any string of a body, naming the field", async () => {
    const app = await gw.call("POST", "/v1/apps", key, { name: "a\u0000b", platform: "ios", bundle_id: "com.x.nul" });
    expectError(app, 400, "ValidationError");
    expect(app.body.details).toEqual([{ field: "/name", message: "must not contain NUL characters" }]);
    const apiKey = await gw.call("POST", `/v1/apps/${appId}/api-keys`, key, { name: "k\u0000" });
    expectError(apiKey, 400, "ValidationError");
    for (const body of [
      { app_id: appId, name: "n\u0000", contents: { en: { title: "t" } } },
      { app_id: appId, name: "n", contents: { en: { title: "t\u0000" } } },
    ]) {
      const send = await gw.call("POST", "/v1/push/send", key, body);
      expectError(send, 400, "ValidationError");
    }
  });

  it("answers 404 with the API's body to a path id of any length", async () => {
    for (const length of [101, 1_000, 5_000]) {
      const res = await gw.call("GET", `/v1/apps/${"a".repeat(length)}`, key);
      expectError(res, 404, "NotFound");
    }
    // Authentication still comes first.
    const anonymous = await gw.call("GET", `/v1/apps/${"a".repeat(200)}`, undefined);
    expect(anonymous.status).toBe(401);
  });
});
