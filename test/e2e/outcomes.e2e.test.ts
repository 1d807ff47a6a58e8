import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { WEBHOOK_EVENT_TYPES } from "@herald/runtime";
import type { Rest } from "../support/herald-client.js";
import { waitForCampaign } from "../support/herald-client.js";
import { configureMixedApp, type ConfiguredApp } from "../support/mixed-app.js";
import { seedRegistryDevices } from "../support/registry-seed.js";
import { startStack, type Stack } from "../support/stack.js";
import { waitUntil } from "../support/wait.js";

// Outcomes a backend can act on, from the outside: a 20,000-device campaign to iOS,
// Android and web with bounces and failures, every webhook event type at a real HTTP
// receiver (Standard Webhooks signatures checked by the reference library) across a
// kill -9 of the dispatcher, the per-device receipts against the simulator's records,
// their export, a device's receipts, a user's erasure checked in the tables, and a
// 200,000-row export streamed through the gateway in bounded memory.

const PER = { ios: 8_000, android: 8_000, web: 4_000 };
/** Dead tokens per platform (APNs: Unregistered and BadDeviceToken, FCM: UNREGISTERED, Web Push: 410). */
const DEAD = { ios: 500, android: 300, web: 200 };

interface Hook {
  id: string;
  type: string;
  body: { type: string; timestamp: string; data: Record<string, any> };
}

let stack: Stack;
let app: ConfiguredApp;
let api: Rest;
let sim: SimAdminClient;
let server: http.Server;
let secret: string;
const hooks: Hook[] = [];
/** Device index → what is expected of it. */
const devices: { ext: string; platform: "ios" | "android" | "web"; target: string; dead: boolean }[] = [];
let campaignId: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      // The reference verifier throws on a bad signature: the receiver then answers 400 and the test sees it missing.
      try {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const parsed = JSON.parse(body);
      hooks.push({ id: String(req.headers["webhook-id"]), type: parsed.type, body: parsed });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  stack = await startStack(inject("infra"), {
    envFor: {
      webhooks: { HERALD_WEBHOOK_RETRY_SCHEDULE_MS: "200,400,800,1600,3200,6400,6400" },
      "sender-apns": { SENDER_RETRY_BASE_MS: "50", SENDER_RETRY_MAX_ATTEMPTS: "3" },
      "sender-fcm": { SENDER_RETRY_BASE_MS: "50", SENDER_RETRY_MAX_ATTEMPTS: "3" },
    },
  });
  sim = new SimAdminClient(stack.simAdminUrl);
  app = await configureMixedApp({
    gatewayUrl: stack.gatewayUrls[0]!,
    bootKey: stack.apiKey,
    sim,
    bundle: "com.example.outcomes",
  });
  api = app.api;
  const hook = await api("POST", `/v1/apps/${app.appId}/webhooks`, {
    url: receiverUrl,
    // Every type a change announces (webhook.test goes only to the endpoint tested).
    events: WEBHOOK_EVENT_TYPES.filter((t) => t !== "webhook.test"),
  });
  expect(hook.status, hook.text).toBe(201);
  secret = hook.body.secret;

  // The devices, with what the simulator will answer for each.
  const ios = await sim.createApnsDevices("com.example.outcomes", PER.ios);
  const android = await sim.createFcmDevices(app.serviceAccount.projectId, PER.android);
  const web = await sim.createWebPushSubscriptions(app.vapidPublicKey, PER.web);
  const lines: string[] = [];
  const add = (platform: "ios" | "android" | "web", target: string, token: string, dead: boolean) => {
    const ext = `d${devices.length}`;
    devices.push({ ext, platform, target, dead });
    lines.push(JSON.stringify({ platform, push_token: token, external_id: ext }));
  };
  for (const [i, t] of ios.entries()) add("ios", t, t, i < DEAD.ios);
  for (const [i, t] of android.entries()) add("android", t, t, i < DEAD.android);
  for (const [i, s] of web.entries()) add("web", s.id, JSON.stringify(s.subscription), i < DEAD.web);
  const imported = await fetch(`${stack.gatewayUrls[0]}/v1/devices/import?app_id=${app.appId}`, {
    method: "POST",
    headers: { authorization: `Bearer ${app.key}`, "content-type": "application/x-ndjson" },
    body: `${lines.join("\n")}\n`,
  });
  expect(imported.status, await imported.clone().text()).toBe(200);
  // Tokens die after they were registered (a death observed before the registration would
  // not invalidate the device: the app registered it again since).
  for (const [i, t] of ios.slice(0, DEAD.ios).entries()) {
    if (i < DEAD.ios / 2) await sim.unregisterApnsDevice(t);
    else await sim.markApnsDeviceBad(t);
  }
  for (const t of android.slice(0, DEAD.android)) await sim.unregisterFcmDevice(t);
  for (const s of web.slice(0, DEAD.web)) await sim.markWebPushGone(s.id);
}, 300_000);

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await stack?.stop();
});

const byType = (type: string) => hooks.filter((h) => h.type === type);

/** Reads an export to the end and answers its text and headers. */
async function exportOf(query: string) {
  const res = await fetch(`${stack.gatewayUrls[0]}/v1/campaigns/${campaignId}/deliveries/export?${query}`, {
    headers: { authorization: `Bearer ${app.key}` },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("outcomes of a 20,000-device campaign", () => {
  it("delivers every event across a kill -9 of the dispatcher, and the receipts match the simulator exactly", async () => {
    await sim.clearDeliveries();
    // FCM answers 500 to a third of the requests: with three attempts a device, some fail for good.
    await sim.setFaults("fcm", { error_rate: 0.35, error_status: 500, seed: 31 });
    const sent = await api("POST", "/v1/push/send", {
      app_id: app.appId,
      name: "outcomes",
      contents: { en: { title: "Hello", body: "World" } },
    });
    expect(sent.status, sent.text).toBe(201);
    campaignId = sent.body.id;
    // The dispatcher dies while the campaign's events are being produced.
    await waitUntil("campaign.started delivered", () => byType("campaign.started").length > 0, 60_000);
    await stack.kill("webhooks");
    const done = await waitForCampaign(api, campaignId, ["completed"], 180_000);
    await stack.restart("webhooks");
    await sim.clearFaults("fcm");
    const total = PER.ios + PER.android + PER.web;

    // Receipts: the NDJSON export, one line per device, each as the simulator saw it.
    const nd = await exportOf("format=ndjson");
    expect(nd.status).toBe(200);
    expect(nd.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    expect(nd.headers.get("content-disposition")).toContain(`campaign-${campaignId}-deliveries.ndjson`);
    const receipts = nd.text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(receipts).toHaveLength(total);
    const byExt = new Map(receipts.map((r) => [r.external_id, r]));
    expect(byExt.size).toBe(total);
    // The simulator's records: what it accepted for this campaign, by its key of the device.
    const accepted = new Set(
      (await sim.allDeliveries()).filter((d) => d.payload.includes(campaignId)).map((d) => d.target),
    );
    const count: Record<string, number> = { delivered: 0, failed: 0, bounced: 0, throttled: 0 };
    for (const d of devices) {
      const r = byExt.get(d.ext);
      expect(r, d.ext).toBeDefined();
      count[r.outcome] = (count[r.outcome] ?? 0) + 1;
      expect(r.platform, d.ext).toBe(d.platform);
      // Delivered exactly when the simulator accepted it; bounced only when its token is dead.
      expect(r.outcome === "delivered", d.ext).toBe(accepted.has(d.target));
      if (r.outcome === "bounced") expect(d.dead, d.ext).toBe(true);
      if (d.dead) expect(r.outcome, d.ext).not.toBe("delivered");
      if (r.outcome !== "delivered") expect(r.reason, d.ext).toBeTruthy();
    }
    expect(done.stats).toMatchObject({ sent: total, ...count });
    expect(count.failed).toBeGreaterThan(0);
    expect(count.bounced).toBeGreaterThan(DEAD.ios);
    // CSV: a header and one row per device.
    const csv = await exportOf("format=csv&outcome=bounced");
    expect(csv.status).toBe(200);
    const rows = csv.text.trim().split(/\r?\n/);
    expect(rows[0]).toContain("device_id");
    expect(rows.length - 1).toBe(count.bounced);
    const page = await api("GET", `/v1/campaigns/${campaignId}/deliveries?outcome=failed&per_page=200&page=1`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.total).toBe(count.failed);

    // Webhooks: started and completed once, every bounced and failed device once, every event signed.
    await waitUntil("campaign.completed delivered", () => byType("campaign.completed").length > 0, 60_000);
    const bouncedIds = new Set(receipts.filter((r) => r.outcome === "bounced").map((r) => r.device_id));
    const failedIds = new Set(receipts.filter((r) => r.outcome === "failed").map((r) => r.device_id));
    const idsIn = (type: string) => {
      // A retried delivery repeats its webhook-id: count each event once.
      const events = new Map(byType(type).map((h) => [h.id, h]));
      return [...events.values()].flatMap((h) => h.body.data.deliveries.map((x: { device_id: string }) => x.device_id));
    };
    await waitUntil(
      "every bounce and failure announced",
      () =>
        idsIn("deliveries.bounced").length === bouncedIds.size && idsIn("deliveries.failed").length === failedIds.size,
      60_000,
    );
    expect(new Set(idsIn("deliveries.bounced"))).toEqual(bouncedIds);
    expect(new Set(idsIn("deliveries.failed"))).toEqual(failedIds);
    expect(new Set(byType("campaign.started").map((h) => h.id))).toEqual(new Set([`campaign.started.${campaignId}`]));
    const completed = byType("campaign.completed");
    expect(new Set(completed.map((h) => h.id)).size).toBe(1);
    expect(completed[0]!.body.data).toMatchObject({
      campaign_id: campaignId,
      app_id: app.appId,
      stats: { sent: total },
    });
    // Dead tokens are invalidated and announced, each once.
    await waitUntil(
      "dead tokens announced",
      () => new Set(byType("device.invalidated").map((h) => h.body.data.device_id)).size >= bouncedIds.size,
      60_000,
    );
    const invalidated = new Set(byType("device.invalidated").map((h) => h.body.data.device_id));
    for (const id of bouncedIds) expect(invalidated.has(id), id).toBe(true);
    for (const id of invalidated) expect(bouncedIds.has(id) || failedIds.has(id), id).toBe(true);
  });

  it("answers a device's receipts, and announces opt-out and opt-in", async () => {
    const r = byExt(await exportOf("format=ndjson"), "d9000");
    const mine = await api("GET", `/v1/devices/${r.device_id}/deliveries`);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data).toEqual([
      expect.objectContaining({ campaign_id: campaignId, outcome: "delivered", platform: "android" }),
    ]);
    expect((await api("POST", `/v1/devices/${r.device_id}/opt-out`)).status).toBe(200);
    expect((await api("POST", `/v1/devices/${r.device_id}/opt-in`)).status).toBe(200);
    await waitUntil("opt-out and opt-in announced", () => byType("device.opted_in").length > 0, 30_000);
    expect(byType("device.opted_out").map((h) => h.body.data)).toEqual([
      expect.objectContaining({ device_id: r.device_id, external_id: "d9000" }),
    ]);
    expect(byType("device.opted_in").map((h) => h.body.data)).toEqual([
      expect.objectContaining({ device_id: r.device_id }),
    ]);
  });

  it("erases a user: no row names the device afterwards, a repeat answers zeros, user.erased announced", async () => {
    const r = byExt(await exportOf("format=ndjson"), "d12345");
    // Audiences naming the user: a scheduled campaign to users and an in-app message.
    const later = await api("POST", "/v1/push/send-to-users", {
      app_id: app.appId,
      name: "later, to users",
      contents: { en: { title: "Later", body: "Soon" } },
      external_ids: ["d12345", "d12346"],
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(later.status, later.text).toBe(201);
    const message = await api("POST", `/v1/apps/${app.appId}/in-app-messages`, {
      name: "for d12345",
      contents: { en: { title: "Hi", body: "You" } },
      audience: { kind: "external_ids", external_ids: ["d12345"] },
    });
    expect(message.status, message.text).toBe(201);
    const erased = await api("DELETE", `/v1/apps/${app.appId}/users/d12345`);
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({ devices: 1, receipts: 1, audiences: 2 });
    const again = await api("DELETE", `/v1/apps/${app.appId}/users/d12345`);
    expect(again.body).toMatchObject({ devices: 0, receipts: 0, engagements: 0, in_app_states: 0, audiences: 0 });
    await waitUntil("user.erased delivered", () => byType("user.erased").length > 0, 30_000);
    expect(byType("user.erased")[0]!.body.data).toMatchObject({
      app_id: app.appId,
      external_id: "d12345",
      devices: 1,
      receipts: 1,
      audiences: 2,
    });
    expect((await api("GET", `/v1/campaigns/${later.body.id}`)).body.target).toEqual({
      type: "users",
      external_ids_count: 1,
    });

    // In the tables: every column of every table of the campaign and registry schemas that holds a uuid or
    // uuid[] (the device id), or text or text[] (the external id).
    const client = new pg.Client({ connectionString: inject("infra").databaseUrl });
    await client.connect();
    try {
      for (const schema of [stack.schemas.campaign!, stack.schemas["device-registry"]!]) {
        const { rows: columns } = await client.query<{ table_name: string; column_name: string; udt_name: string }>(
          `SELECT table_name, column_name, udt_name FROM information_schema.columns
           WHERE table_schema = $1 AND udt_name IN ('uuid', '_uuid', 'text', '_text')`,
          [schema],
        );
        for (const c of columns) {
          const test = c.udt_name.startsWith("_") ? `$1 = ANY ("${c.column_name}")` : `"${c.column_name}" = $1`;
          const { rows } = await client.query(
            `SELECT count(*)::int AS n FROM "${schema}"."${c.table_name}" WHERE ${test}`,
            [c.udt_name.endsWith("uuid") ? r.device_id : "d12345"],
          );
          expect(rows[0].n, `${schema}.${c.table_name}.${c.column_name}`).toBe(0);
        }
      }
    } finally {
      await client.end();
    }
    const list = await api("GET", `/v1/campaigns/${campaignId}/deliveries?per_page=1`);
    expect(list.body.total).toBe(PER.ios + PER.android + PER.web - 1);
  });
});

function byExt(nd: { text: string }, ext: string) {
  const line = nd.text.split("\n").find((l) => l.includes(`"external_id":"${ext}"`));
  expect(line, ext).toBeDefined();
  return JSON.parse(line!);
}

describe("the export of a large campaign", () => {
  it("streams 200,000 receipts in bounded memory while the client reads slowly", async () => {
    const ROWS = 200_000;
    const boot = restClient0();
    const created = await boot("POST", "/v1/apps", { name: "Big", platform: "ios", bundle_id: "com.example.big" });
    const bigApp = created.body.id as string;
    // Devices straight into the registry, receipts straight into the campaign service's table:
    // the export's path (gateway, RPC stream, registry lookups) is what this measures.
    await seedRegistryDevices(
      inject("infra").databaseUrl,
      stack.schemas["device-registry"]!,
      bigApp,
      Array.from({ length: ROWS }, (_, i) => ({
        platform: "ios",
        token: `${i.toString(16).padStart(8, "0")}${"a".repeat(56)}`,
      })),
    );
    const later = await boot("POST", "/v1/push/send", {
      app_id: bigApp,
      name: "big",
      contents: { en: { title: "t", body: "b" } },
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(later.status, later.text).toBe(201);
    const id = later.body.id as string;
    const client = new pg.Client({ connectionString: inject("infra").databaseUrl });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO "${stack.schemas.campaign}".receipt_batches
           (campaign_id, platform, sequence, devices, device_ids, outcomes, reasons, attempts, delivered, failed, bounced, throttled)
         SELECT $1, 1, b.seq, "${stack.schemas.campaign}".uuid_range(b.ids[1], b.ids[cardinality(b.ids)], '[]'), b.ids,
                array_fill(1::smallint, ARRAY[cardinality(b.ids)]), array_fill(NULL::text, ARRAY[cardinality(b.ids)]),
                array_fill(1::smallint, ARRAY[cardinality(b.ids)]), cardinality(b.ids), 0, 0, 0
         FROM (SELECT (rn - 1) / 500 AS seq, array_agg(id ORDER BY id) AS ids
               FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM "${stack.schemas["device-registry"]}".devices WHERE app_id = $2) d
               GROUP BY 1) b`,
        [id, bigApp],
      );
    } finally {
      await client.end();
    }
    const gateway = stack.process("gateway").child.pid!;
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gateway}/status`, "utf8"))![1]) / 1024;
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 50);
    let lines = 0;
    let bytes = 0;
    try {
      // node:http rather than fetch: the socket's byte count shows when the gateway stops sending.
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http
          .get(
            `${stack.gatewayUrls[0]}/v1/campaigns/${id}/deliveries/export?format=csv`,
            { headers: { authorization: `Bearer ${stack.apiKey}` } },
            resolve,
          )
          .on("error", reject),
      );
      expect(res.statusCode).toBe(200);
      let paused = false;
      for await (const chunk of res) {
        bytes += (chunk as Buffer).length;
        for (const b of chunk as Buffer) if (b === 10) lines++;
        // Stop reading a tenth of the way in until the gateway stops sending (TCP backpressure
        // reached it): a gateway that does not wait for the client would buffer the rest meanwhile.
        if (!paused && lines > ROWS / 10) {
          paused = true;
          res.pause();
          let last = -1;
          await waitUntil(
            "the gateway to stop sending to a client that does not read",
            () => {
              const read = res.socket.bytesRead;
              const still = read === last;
              last = read;
              return still;
            },
            30_000,
            500,
          );
          res.resume();
        }
      }
    } finally {
      clearInterval(sampler);
    }
    expect(lines).toBe(ROWS + 1);
    console.log(
      `export of ${ROWS} rows: ${(bytes / 2 ** 20).toFixed(1)} MB; gateway RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB`,
    );
    // The CSV is some 20 MB; holding it (or its rows as objects) would show as more than that.
    expect(peak - before).toBeLessThan(bytes / 2 ** 20);
  }, 180_000);
});

function restClient0(): Rest {
  return (async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.gatewayUrls[0]}${path}`, {
      method,
      headers: { authorization: `Bearer ${stack.apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }) as unknown as Rest;
}
