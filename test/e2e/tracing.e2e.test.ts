import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { createPool, streamNames, webhookOutboxEvent, writeOutbox } from "@herald/runtime";
import { waitForCampaign, type Rest } from "../support/herald-client.js";
import { createMixedApp } from "../support/mixed-app.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { startStack, type Stack } from "../support/stack.js";
import { waitForValue } from "../support/wait.js";

// One trace from the REST call to every provider request, exported over OTLP/HTTP to a
// receiver in the test: half the processes speak http/json, the other half
// http/protobuf, so both encodings are exercised.

const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;
const PER_PLATFORM = 3;

let receiver: OtlpReceiver;
let stack: Stack;
let api: Rest;
let sim: SimAdminClient;
let appId: string;
const secrets: string[] = [];
/** A webhook endpoint's receiver: the webhook-id of every request. */
let hooks: http.Server | undefined;
const hooked: string[] = [];

const traceparent = () => {
  const traceId = randomBytes(16).toString("hex");
  const parentId = randomBytes(8).toString("hex");
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};

function spansUntil(check: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs = 30_000) {
  return waitForValue(what, () => receiver.spans, check, {
    timeoutMs,
    everyMs: 200,
    show: (spans) => `spans so far: ${[...new Set(spans.map((s) => `${s.service}:${s.name}`))].join(", ")}`,
  });
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const otel = (protocol: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_BSP_SCHEDULE_DELAY: "200",
  });
  stack = await startStack(inject("infra"), {
    env: { LOG_LEVEL: "info", ...otel("http/protobuf") },
    envFor: {
      gateway: otel("http/json"),
      campaign: otel("http/json"),
      "sender-webpush": otel("http/json"),
      // The simulator is not Herald: it is not traced.
      "provider-sim": { OTEL_SDK_DISABLED: "true" },
    },
  });
  secrets.push(stack.apiKey);
  sim = new SimAdminClient(stack.simAdminUrl);
  const app = await createMixedApp({
    gatewayUrl: stack.gatewayUrls[0]!,
    bootKey: stack.apiKey,
    sim,
    bundle: "com.example.traced",
    perPlatform: PER_PLATFORM,
  });
  ({ appId, api } = app);
  secrets.push(app.key, app.apns.p8.split("\n")[1]!, app.serviceAccount.privateKeyPem.split("\n")[1]!);
  secrets.push(...app.ios, ...app.android);
  for (const s of app.web) {
    secrets.push(new URL(s.subscription.endpoint).pathname, s.subscription.keys.p256dh, s.subscription.keys.auth);
  }
}, 180_000);

afterAll(async () => {
  hooks?.closeAllConnections();
  hooks?.close();
  await stack?.stop();
  await receiver?.close();
});

/** The traceparent header of the message with this JetStream dedup id in the stack's WEBHOOKS stream. */
async function webhookMessageTraceparent(msgId: string): Promise<string | undefined> {
  const names = streamNames(stack.process("webhooks").env.NATS_NAMESPACE);
  const nc = await connect({ servers: inject("infra").natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const { state } = await jsm.streams.info(names.webhooksStream);
    for (let seq = state.first_seq; seq <= state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(names.webhooksStream, { seq });
      if (m?.header.get("Nats-Msg-Id") === msgId) return m.header.get("traceparent") || undefined;
    }
    throw new Error(`no message ${msgId} in ${names.webhooksStream}`);
  } finally {
    await nc.close();
  }
}

describe("tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)", () => {
  it("turns one send with an incoming traceparent into one trace from the gateway to each provider request", async () => {
    const tp = traceparent();
    const res = await api(
      "POST",
      "/v1/push/send",
      { app_id: appId, name: "traced", contents: { en: { title: "Traced", body: "end to end" } } },
      { traceparent: tp.header },
    );
    expect(res.status, res.text).toBe(201);
    const campaignId = res.body.id as string;
    await waitForCampaign(api, campaignId, ["completed"], 60_000);

    const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === tp.traceId);
    const providerSpans = (spans: ReceivedSpan[]) =>
      inTrace(spans).filter((s) => s.kind === SPAN_KIND.client && s.name.endsWith(" send"));
    await spansUntil((s) => providerSpans(s).length >= 3 * PER_PLATFORM, "a provider span per device");
    // The outcome consumers and their links come right after.
    await spansUntil(
      (s) => s.some((x) => x.name.startsWith("process ") && x.links.some((l) => l.traceId === tp.traceId)),
      "an outcome consumer span linked to the trace",
    );
    const trace = inTrace(receiver.spans);
    const census = new Map<string, number>();
    for (const s of trace) census.set(`${s.service} ${s.name}`, (census.get(`${s.service} ${s.name}`) ?? 0) + 1);
    console.log(
      `one send, ${trace.length} spans in its trace:\n${[...census].map(([k, n]) => `  ${n} × ${k}`).join("\n")}`,
    );
    const byId = new Map(trace.map((s) => [s.spanId, s]));

    // The gateway's server span continues the incoming context, named after the route.
    const server = trace.find((s) => s.service === "herald-gateway" && s.kind === SPAN_KIND.server);
    expect(server?.name).toBe("POST /v1/push/send");
    expect(server?.parentSpanId).toBe(tp.parentId);
    expect(server?.attributes["http.route"]).toBe("/v1/push/send");
    // Every parent resolves inside the trace, except the caller's own span.
    for (const s of trace) {
      if (s.parentSpanId === tp.parentId) continue;
      expect(byId.has(s.parentSpanId), `${s.service}:${s.name} has an unknown parent`).toBe(true);
    }
    const services = new Set(trace.map((s) => s.service));
    for (const name of [
      "herald-gateway",
      "herald-campaign",
      "herald-device-registry",
      "herald-credential",
      "herald-sender-apns",
      "herald-sender-fcm",
      "herald-sender-webpush",
    ]) {
      expect(services, name).toContain(name);
    }
    // Connect RPCs, client and server side.
    expect(
      trace.some(
        (s) => s.service === "herald-campaign" && s.kind === SPAN_KIND.server && s.name.endsWith("/CreateCampaign"),
      ),
    ).toBe(true);
    expect(
      trace.some(
        (s) =>
          s.service === "herald-gateway" && s.kind === SPAN_KIND.client && s.attributes["rpc.system"] === "connect_rpc",
      ),
    ).toBe(true);
    // The fan-out continues the trace, with the campaign on it.
    const fanout = trace.find((s) => s.name === "fan-out campaign");
    expect(fanout?.attributes["herald.campaign.id"]).toBe(campaignId);
    expect(fanout?.attributes["herald.app.id"]).toBe(appId);
    // The JetStream hop: a producer span per batch, and the sender's consumer span its child.
    const producers = trace.filter((s) => s.kind === SPAN_KIND.producer && s.name.includes("delivery."));
    const consumers = trace.filter((s) => s.kind === SPAN_KIND.consumer && s.name.includes("delivery."));
    expect(producers.length).toBeGreaterThanOrEqual(3);
    expect(consumers.length).toBe(producers.length);
    for (const c of consumers) expect(byId.get(c.parentSpanId)?.kind).toBe(SPAN_KIND.producer);
    // One provider request span per device, each under its batch's consumer span.
    const providers = providerSpans(receiver.spans);
    expect(providers).toHaveLength(3 * PER_PLATFORM);
    for (const p of providers) {
      expect(byId.get(p.parentSpanId)?.kind).toBe(SPAN_KIND.consumer);
      expect(p.attributes["herald.campaign.id"]).toBe(campaignId);
      expect(p.attributes["http.response.status_code"]).toBeGreaterThanOrEqual(200);
      expect(p.attributes["herald.attempt"]).toBe(1);
      expect(typeof p.attributes["server.address"]).toBe("string");
    }
    expect(new Set(providers.map((p) => p.attributes["herald.platform"]))).toEqual(new Set(["ios", "android", "web"]));
    // Database and Redis calls are traced too.
    expect(
      trace.some((s) => s.attributes["db.system"] === "postgresql" || s.attributes["db.system.name"] === "postgresql"),
    ).toBe(true);
    // Log lines written inside the trace carry its ids.
    expect(stack.logs()).toContain(`"trace_id":"${tp.traceId}"`);
    expect(receiver.requests["application/json"]).toBeGreaterThan(0);
    expect(receiver.requests["application/x-protobuf"]).toBeGreaterThan(0);
  }, 120_000);

  it("links the firing of a scheduled campaign to the request that created it", async () => {
    const tp = traceparent();
    const at = new Date(Date.now() + 2_000).toISOString();
    const res = await api(
      "POST",
      "/v1/push/send",
      { app_id: appId, name: "scheduled", scheduled_at: at, contents: { en: { title: "Later" } } },
      { traceparent: tp.header },
    );
    expect(res.status, res.text).toBe(201);
    await waitForCampaign(api, res.body.id, ["completed"], 60_000);
    const spans = await spansUntil(
      (s) =>
        s.some((x) => x.name === "fan-out scheduled campaign" && x.attributes["herald.campaign.id"] === res.body.id),
      "the scheduled fan-out span",
    );
    const firing = spans.find(
      (x) => x.name === "fan-out scheduled campaign" && x.attributes["herald.campaign.id"] === res.body.id,
    )!;
    expect(firing.traceId).not.toBe(tp.traceId);
    expect(firing.links.map((l) => l.traceId)).toContain(tp.traceId);
    const creator = spans.find(
      (s) => s.traceId === tp.traceId && s.service === "herald-campaign" && s.kind === SPAN_KIND.server,
    );
    expect(creator, "the creating RPC's span").toBeDefined();
    expect(firing.links.find((l) => l.traceId === tp.traceId)?.spanId).toBe(creator!.spanId);
  }, 120_000);

  it("links each webhook attempt to the trace of the change its event announces", async () => {
    hooks = http.createServer((req, res) => {
      hooked.push(String(req.headers["webhook-id"]));
      req.resume().on("end", () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => hooks!.listen(0, "127.0.0.1", resolve));
    // A path that is a capability, as some receivers' are: it must not reach a span.
    const hookPath = `/hooks/${randomBytes(16).toString("hex")}`;
    const created = await api("POST", `/v1/apps/${appId}/webhooks`, {
      url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}${hookPath}`,
      events: ["campaign.started", "webhook.test"],
    });
    expect(created.status, created.text).toBe(201);
    secrets.push(created.body.secret, hookPath);
    const webhooksDb = createPool({ url: inject("infra").databaseUrl, schema: stack.schemas.webhooks! });
    const campaignDb = createPool({ url: inject("infra").databaseUrl, schema: stack.schemas.campaign! });
    const storedContext = async (eventId: string) =>
      (
        await webhooksDb.query<{ trace_context: string | null }>("SELECT trace_context FROM events WHERE id = $1", [
          eventId,
        ])
      ).rows[0]?.trace_context;
    /** The dispatcher's spans of an event (recording, first attempt) and, when it was traced, its producer span. */
    const spansOf = async (eventId: string, traced: boolean) => {
      const find = (spans: ReceivedSpan[], name: string, key: string) =>
        spans.find((x) => x.name === name && x.attributes[key] === eventId);
      const found = (spans: ReceivedSpan[]) => ({
        spans,
        attempt: find(spans, "webhook.attempt", "herald.webhook.event_id")!,
        recorded: find(spans, "record webhook event", "herald.webhook.event_id")!,
        producer: find(spans, "publish webhook", "messaging.message.id"),
      });
      return found(
        await spansUntil((s) => {
          const f = found(s);
          return Boolean(f.attempt && f.recorded && (f.producer || !traced));
        }, `the spans of ${eventId}`),
      );
    };
    try {
      // campaign.started: written by the fan-out's claim, in the trace of the send that created it.
      const tp = traceparent();
      const res = await api(
        "POST",
        "/v1/push/send",
        { app_id: appId, name: "announced", contents: { en: { title: "Hooked" } } },
        { traceparent: tp.header },
      );
      expect(res.status, res.text).toBe(201);
      const started = `campaign.started.${res.body.id}`;
      const { spans, attempt, recorded, producer } = await spansOf(started, true);
      expect(hooked).toContain(started);
      // The relay published it in a producer span of the send's trace, under the campaign's creation…
      expect(producer).toMatchObject({ traceId: tp.traceId, service: "herald-campaign", kind: SPAN_KIND.producer });
      const creator = spans.find((s) => s.spanId === producer!.parentSpanId);
      expect(creator).toMatchObject({ service: "herald-campaign", kind: SPAN_KIND.server });
      expect(creator!.name).toMatch(/\/CreateCampaign$/);
      // …whose context the message carried and the dispatcher kept with the event…
      const carried = `00-${tp.traceId}-${producer!.spanId}-01`;
      expect(await webhookMessageTraceparent(started)).toBe(carried);
      expect(await storedContext(started)).toBe(carried);
      // …and both the recording and the attempt, each a trace of its own, link to it.
      expect(recorded).toMatchObject({ kind: SPAN_KIND.consumer, service: "herald-webhooks" });
      expect(recorded!.traceId).not.toBe(tp.traceId);
      expect(recorded!.links).toEqual([{ traceId: tp.traceId, spanId: producer!.spanId }]);
      expect(attempt).toMatchObject({ kind: SPAN_KIND.client, service: "herald-webhooks" });
      expect(attempt.traceId).not.toBe(tp.traceId);
      expect(attempt.links).toEqual([{ traceId: tp.traceId, spanId: producer!.spanId }]);
      expect(attempt.attributes["herald.campaign.id"]).toBe(res.body.id);

      // webhook.test, published at once by the webhooks service: in the trace of its request.
      const tp2 = traceparent();
      const test = await api("POST", `/v1/apps/${appId}/webhooks/${created.body.id}/test`, undefined, {
        traceparent: tp2.header,
      });
      expect(test.status, test.text).toBe(202);
      const tested = await spansOf(test.body.event_id, true);
      expect(tested.producer).toMatchObject({ traceId: tp2.traceId, service: "herald-webhooks" });
      expect(tested.attempt.links).toEqual([{ traceId: tp2.traceId, spanId: tested.producer!.spanId }]);

      // A row written outside any trace (here by the test, which traces nothing): the relay
      // publishes it without trace headers, the dispatcher keeps NULL, nothing is linked.
      const campaignId = randomUUID();
      const untraced = `campaign.started.${campaignId}`;
      await writeOutbox(campaignDb, [
        webhookOutboxEvent({
          id: untraced,
          type: "campaign.started",
          appId,
          timestamp: new Date(),
          data: { campaign_id: campaignId, app_id: appId, started_at: new Date().toISOString() },
        }),
      ]);
      const plain = await spansOf(untraced, false);
      expect(hooked).toContain(untraced);
      expect(await webhookMessageTraceparent(untraced)).toBeUndefined();
      expect(await storedContext(untraced)).toBeNull();
      expect(plain.recorded.links).toEqual([]);
      expect(plain.attempt.links).toEqual([]);
      expect(plain.producer).toBeUndefined();
    } finally {
      await webhooksDb.end();
      await campaignDb.end();
    }
  }, 120_000);

  it("puts no push token, endpoint, key or secret in any attribute of any span", () => {
    expect(receiver.spans.length).toBeGreaterThan(50);
    const leaks: string[] = [];
    for (const s of receiver.spans) {
      const values = [
        s.name,
        ...Object.values(s.attributes).map(String),
        ...s.events.flatMap((e) => Object.values(e.attributes).map(String)),
      ];
      for (const v of values) {
        for (const secret of secrets)
          if (secret.length >= 8 && v.includes(secret)) leaks.push(`${s.service}:${s.name}`);
        if (/\/wp\/|\/3\/device\/|Bearer |hk_live_/.test(v)) leaks.push(`${s.service}:${s.name}: ${v.slice(0, 40)}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
