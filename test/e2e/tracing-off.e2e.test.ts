import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { waitForCampaign, webPushApp } from "../support/herald-client.js";
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlp-receiver.js";
import { startStack, type Stack } from "../support/stack.js";

// Tracing is off unless an OTLP endpoint is named, and OTEL_SDK_DISABLED turns it off even
// then: a campaign runs with receivers listening at the OTLP default address (where an
// SDK with no endpoint would send) and at a named endpoint, and neither hears anything.

const DEFAULT_OTLP_PORT = 4318;
/** OTEL_BSP_SCHEDULE_DELAY of every process: a batch span processor would export this often. */
const EXPORT_DELAY_MS = 100;

let stack: Stack;
let atDefault: OtlpReceiver;
let named: OtlpReceiver;

beforeAll(async () => {
  atDefault = await startOtlpReceiver(DEFAULT_OTLP_PORT);
  named = await startOtlpReceiver();
  const disabled = {
    OTEL_EXPORTER_OTLP_ENDPOINT: named.url,
    OTEL_SDK_DISABLED: "true",
    OTEL_BSP_SCHEDULE_DELAY: String(EXPORT_DELAY_MS),
  };
  stack = await startStack(inject("infra"), {
    env: { LOG_LEVEL: "info", OTEL_BSP_SCHEDULE_DELAY: String(EXPORT_DELAY_MS) },
    // No OTEL endpoint at all for the gateway, credential and device-registry; an endpoint
    // with the SDK disabled for the campaign service and the senders.
    envFor: {
      campaign: disabled,
      "sender-webpush": disabled,
      "sender-apns": disabled,
      "sender-fcm": disabled,
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await atDefault?.close();
  await named?.close();
});

it("exports nothing with no OTLP endpoint, nor with OTEL_SDK_DISABLED=true", async () => {
  const sim = new SimAdminClient(stack.simAdminUrl);
  const { appId, api, vapidPublicKey } = await webPushApp(stack, "Untraced", "com.example.untraced");
  const [sub] = await sim.createWebPushSubscriptions(vapidPublicKey, 1);
  const reg = await api("POST", "/v1/devices/register", {
    app_id: appId,
    platform: "web",
    push_token: JSON.stringify(sub!.subscription),
  });
  expect(reg.status, reg.text).toBe(200);
  const send = await api(
    "POST",
    "/v1/push/send",
    { app_id: appId, name: "untraced", contents: { en: { title: "Hi" } } },
    { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
  );
  expect(send.status, send.text).toBe(201);
  const done = await waitForCampaign(api, send.body.id, ["completed"], 60_000);
  expect(done.stats.delivered).toBe(1);
  // A bounded wait remains (nothing being sent has no event): ten export intervals pass, so an
  // exporter, had one started, would have sent the campaign's spans by now.
  await new Promise((r) => setTimeout(r, 10 * EXPORT_DELAY_MS));
  expect(atDefault.requests).toEqual({});
  expect(named.requests).toEqual({});
  // And no log line carries a trace id: with no SDK there is no recording span.
  expect(stack.logs()).not.toContain('"trace_id"');
}, 120_000);
