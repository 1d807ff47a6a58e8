import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { createHeraldClient, type HeraldClient, HeraldError, pages, paginate, unwrap } from "@herald/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backends, startBackends, startGateway, type TestGateway } from "../../../gateway/test/harness.js";
import { apnsToken } from "../../../test/support/device-tokens.js";

// The typed client against the real gateway (over HTTP) and the real credential,
// device-registry and campaign services. No sender runs: campaigns stay "sending".
let backends: Backends;
let gw: TestGateway;
let baseUrl: string;
let herald: HeraldClient;

beforeAll(async () => {
  backends = await startBackends();
  gw = await startGateway(backends);
  await gw.app.listen({ host: "127.0.0.1", port: 0 });
  baseUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}/`;
  herald = createHeraldClient({ baseUrl, apiKey: backends.bootstrapKey });
});

afterAll(async () => {
  await gw?.close();
  await backends?.stop();
});

describe("@herald/client", () => {
  it("creates an app, registers devices, sends a campaign and pages through the devices", async () => {
    const app = unwrap(
      await herald.POST("/v1/apps", {
        body: { name: "Client flow", platform: "ios", bundle_id: `com.example.${randomUUID().slice(0, 8)}` },
      }),
    );
    expect(app.id).toMatch(/^[0-9a-f-]{36}$/);

    const tokens = Array.from({ length: 5 }, apnsToken);
    const ids: string[] = [];
    for (const [i, token] of tokens.entries()) {
      const device = unwrap(
        await herald.POST("/v1/devices/register", {
          body: { app_id: app.id, push_token: token, platform: "ios", language: i % 2 ? "de" : "en", tags: ["beta"] },
        }),
      );
      ids.push(device.id);
    }
    // Registering a known token again updates that device: no duplicate.
    const again = unwrap(
      await herald.POST("/v1/devices/register", {
        body: { app_id: app.id, push_token: tokens[0]!, platform: "ios", timezone: "Europe/Berlin" },
      }),
    );
    expect(again).toMatchObject({ id: ids[0], timezone: "Europe/Berlin", opted_in: true, invalid: false });

    const idempotencyKey = randomUUID();
    const send = () =>
      herald.POST("/v1/push/send", {
        params: { header: { "Idempotency-Key": idempotencyKey } },
        body: {
          app_id: app.id,
          name: "Typed client",
          contents: { en: { title: "Hello", body: "From @herald/client" }, de: { title: "Hallo" } },
          data: { action_url: "https://example.com/welcome" },
        },
      });
    const first = await send();
    expect(first.response.status).toBe(201);
    const campaign = unwrap(first);
    expect(campaign).toMatchObject({ app_id: app.id, name: "Typed client", target: { type: "all" } });
    const replay = await send();
    expect(replay.response.status).toBe(200);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(unwrap(replay).id).toBe(campaign.id);
    expect(unwrap(await herald.GET("/v1/campaigns/{id}", { params: { path: { id: campaign.id } } })).id).toBe(
      campaign.id,
    );

    const query = { app_id: app.id, per_page: 2 };
    const seen: number[] = [];
    for await (const page of pages(herald, "/v1/devices", { params: { query } })) {
      expect(page).toMatchObject({ per_page: 2, total: 5 });
      seen.push(page.data.length);
    }
    expect(seen).toEqual([2, 2, 1]);
    const all: string[] = [];
    for await (const device of paginate(herald, "/v1/devices", { params: { query } })) all.push(device.id);
    expect(all).toEqual(ids);
    // Paging may start anywhere; a filter narrows `total`.
    const german: string[] = [];
    for await (const d of paginate(herald, "/v1/devices", { params: { query: { ...query, language: "de" } } })) {
      german.push(d.id);
    }
    expect(german).toEqual([ids[1], ids[3]]);
    const fromPage2: string[] = [];
    for await (const d of paginate(herald, "/v1/devices", { params: { query: { ...query, page: 2 } } })) {
      fromPage2.push(d.id);
    }
    expect(fromPage2).toEqual(ids.slice(2));

    const optedOut = unwrap(await herald.POST("/v1/devices/{id}/opt-out", { params: { path: { id: ids[4]! } } }));
    expect(optedOut.opted_in).toBe(false);
    const deleted = await herald.DELETE("/v1/devices/{id}", { params: { path: { id: ids[4]! } } });
    expect(deleted.response.status).toBe(204);
  });

  it("throws HeraldError with the API's error name, message and request id", async () => {
    const missing = await herald.GET("/v1/devices/{id}", { params: { path: { id: randomUUID() } } });
    const err = (() => {
      try {
        unwrap(missing);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({ status: 404, error: "NotFound", message: expect.any(String) });
    expect((err as HeraldError).requestId).toBeTruthy();

    const invalid = await herald.POST("/v1/apps", {
      // A body the schema forbids, as an untyped caller could send it.
      body: { name: "x", platform: "symbian", bundle_id: "com.example.x" } as never,
    });
    expect(() => unwrap(invalid)).toThrow(HeraldError);
    expect(invalid.error).toMatchObject({ error: "ValidationError", details: expect.any(Array) });

    const stranger = createHeraldClient({ baseUrl, apiKey: "hk_live_not_a_key" });
    await expect(pages(stranger, "/v1/apps").next()).rejects.toMatchObject({ status: 401, error: "Unauthorized" });
  });

  it("asks a token function for the current token on every request", async () => {
    let calls = 0;
    const client = createHeraldClient({
      baseUrl,
      accessToken: async () => {
        calls++;
        return backends.bootstrapKey;
      },
    });
    unwrap(await client.GET("/v1/apps"));
    unwrap(await client.GET("/v1/apps"));
    expect(calls).toBe(2);
    expect(() => createHeraldClient({ baseUrl: "herald.example.com", apiKey: "k" })).toThrow(/absolute URL/);
  });
});
