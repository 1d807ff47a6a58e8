import { beforeAll, describe, expect, it } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { createApp, expectError, useGatewayStack } from "./harness.js";

// Inputs that once reached the services and came back as 500s: numbers that are not
// finite, NUL characters, path ids longer than the router's default limit. Each is a
// clear 4xx with the API's error body now, on every route that takes them. The later
// ones were found by the REST fuzzing (fuzz.int.test.ts): answers the document does not
// name, input echoed whole, a header schema never applied, nesting that overflowed.
const gw = useGatewayStack();
let appId: string;

beforeAll(async () => {
  appId = (await createApp(gw, gw.key)).id;
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
        const res = await gw.call("GET", `${route}${sep}page=${page}&per_page=10`, gw.key);
        expect(res.status, `${route} page=${page}: ${res.text}`).toBe(400);
        expect(res.body.error).toBe("ValidationError");
      }
    }
  });

  it("answers 400 to a NUL character in any string of a body, naming the field", async () => {
    const app = await gw.call("POST", "/v1/apps", gw.key, {
      name: "a\u0000b",
      platform: "ios",
      bundle_id: "com.x.nul",
    });
    expectError(app, 400, "ValidationError");
    expect(app.body.details).toEqual([{ field: "/name", message: "must not contain NUL characters" }]);
    const apiKey = await gw.call("POST", `/v1/apps/${appId}/api-keys`, gw.key, { name: "k\u0000" });
    expectError(apiKey, 400, "ValidationError");
    for (const body of [
      { app_id: appId, name: "n\u0000", contents: { en: { title: "t" } } },
      { app_id: appId, name: "n", contents: { en: { title: "t\u0000" } } },
    ]) {
      const send = await gw.call("POST", "/v1/push/send", gw.key, body);
      expectError(send, 400, "ValidationError");
    }
  });

  it("answers 404 with the API's body to a path id of any length", async () => {
    for (const length of [101, 1_000, 5_000]) {
      const res = await gw.call("GET", `/v1/apps/${"a".repeat(length)}`, gw.key);
      expectError(res, 404, "NotFound");
    }
    // Authentication still comes first.
    const anonymous = await gw.call("GET", `/v1/apps/${"a".repeat(200)}`, undefined);
    expect(anonymous.status).toBe(401);
  });

  it("answers 404 with the API's body to a path id that is not even valid percent-encoding", async () => {
    // Found by fuzzing: a 400 that no operation with a path id documents.
    for (const url of ["/v1/apps/%ZZ", "/v1/devices/%C0%AF/opt-out", "/v1/segments/%", "/v1/campaigns/%E0%A4%A"]) {
      const res = await gw.call(url.endsWith("opt-out") ? "POST" : "GET", url, gw.key);
      expectError(res, 404, "NotFound");
    }
  });

  it("echoes at most 64 characters of an offending key", async () => {
    // Found by fuzzing: an unknown field, or a key holding a NUL, came back whole, twice.
    const long = "k".repeat(1_000);
    const unknown = await gw.call("POST", "/v1/apps", gw.key, {
      name: "x",
      platform: "ios",
      bundle_id: "com.x",
      [long]: 1,
    });
    expectError(unknown, 400, "ValidationError");
    expect(unknown.body.details).toEqual([{ field: `/${"k".repeat(64)}`, message: "is not a known field" }]);
    const nul = await gw.call("POST", "/v1/push/send", gw.key, {
      app_id: appId,
      name: "n",
      contents: { en: { title: "t" } },
      data: { [long]: "\u0000" },
    });
    expectError(nul, 400, "ValidationError");
    expect(nul.body.details).toEqual([
      { field: `/data/${"k".repeat(64)}`, message: "must not contain NUL characters" },
    ]);
    expect(nul.text.length).toBeLessThan(500);
  });

  it("answers 400, not 500, to a body nested deeper than 64 levels, and checks every level below", async () => {
    // Found by fuzzing: storing data or a service account as text overflowed the stack (500),
    // and a NUL 65 levels down got past the input rules.
    const nested = (depth: number, inner: string) => `${'{"a":'.repeat(depth)}${inner}${"}".repeat(depth)}`;
    const send = (data: string) =>
      gw.call(
        "POST",
        "/v1/push/send",
        gw.key,
        `{"app_id":"${appId}","name":"n","contents":{"en":{"title":"t"}},"data":${data}}`,
      );
    for (const data of [
      nested(70, '"\\u0000"'),
      nested(70, "1e400"),
      `{"x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
    ]) {
      const res = await send(data);
      expectError(res, 400, "ValidationError");
      expect(res.body.message).toBe("request body is nested more than 64 levels deep");
    }
    const account = await gw.call(
      "POST",
      `/v1/apps/${appId}/platform-config`,
      gw.key,
      `{"platform":"android","fcm_service_account":${nested(10_000, "1")}}`,
    );
    expectError(account, 400, "ValidationError");
    // Within the limit, the rules reach the bottom.
    expectError(await send(nested(62, '"\\u0000"')), 400, "ValidationError");
    expect((await send(nested(62, '"ok"'))).status).toBe(201);
  });

  it("answers 400 to an Idempotency-Key that is not printable ASCII, and sends nothing", async () => {
    // Found by fuzzing: the header's schema was never applied (fastify lower-cases header
    // names in schemas only for its own validator), so any key went through.
    const before = (await gw.call("GET", `/v1/campaigns?app_id=${appId}&per_page=200`, gw.key)).body.total;
    for (const idempotencyKey of ["cl\u00e9", "\u00ff", "k".repeat(256)]) {
      const res = await gw.call(
        "POST",
        "/v1/push/send",
        gw.key,
        { app_id: appId, name: "n", contents: { en: { title: "t" } } },
        { "idempotency-key": idempotencyKey },
      );
      expectError(res, 400, "ValidationError");
      expect(res.body.details[0].field).toBe("/idempotency-key");
    }
    expect((await gw.call("GET", `/v1/campaigns?app_id=${appId}&per_page=200`, gw.key)).body.total).toBe(before);
  });

  it("treats an X-Herald-Push-Token of any length as a token: wrong for a client key (403), ignored for a server key", async () => {
    // Found by fuzzing: one over 8,192 characters got a 400 these routes do not document.
    const device = await gw.call("POST", "/v1/devices/register", gw.key, {
      app_id: appId,
      push_token: apnsToken(),
      platform: "ios",
    });
    expect(device.status, device.text).toBe(200);
    const client = await gw.call("POST", `/v1/apps/${appId}/api-keys`, gw.key, { name: "client", kind: "client" });
    expect(client.status, client.text).toBe(201);
    const huge = { "x-herald-push-token": "a".repeat(10_000) };
    expectError(
      await gw.call("GET", `/v1/devices/${device.body.id}`, client.body.secret, undefined, huge),
      403,
      "Forbidden",
    );
    expect((await gw.call("GET", `/v1/devices/${device.body.id}`, gw.key, undefined, huge)).status).toBe(200);
  });
});
