import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { apnsToken } from "../../test/support/device-tokens.js";
import type { TestGateway } from "./harness.js";
import { waitUntil } from "../../test/support/wait.js";

/** One /v1 operation of the gateway's OpenAPI document, with what the access tests need. */
export interface Operation {
  method: string;
  path: string;
  operationId: string;
  /** `x-herald-min-role`: the weakest role that may call it. */
  minRole: unknown;
  /** `x-herald-client-key`: whether and how a client key may call it. */
  clientKey: unknown;
  isPublic: boolean;
  query: string[];
}

interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  [extension: `x-${string}`]: unknown;
}

/**
 * Every /v1 operation the running gateway documents, so that tests over all routes cover
 * a new route without being told.
 */
export async function v1Operations(app: FastifyInstance): Promise<Operation[]> {
  const doc = (await app.inject({ url: "/openapi.json" })).json() as {
    paths: Record<string, Record<string, OpenApiOperation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    path.startsWith("/v1/")
      ? Object.entries(item).map(([method, op]) => ({
          method: method.toUpperCase(),
          path,
          operationId: op.operationId,
          minRole: op["x-herald-min-role"],
          clientKey: op["x-herald-client-key"],
          isPublic: Array.isArray(op.security) && op.security.length === 0,
          query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        }))
      : [],
  );
}

/**
 * A body each write operation accepts, given the ids a test created (app_id, segments,
 * devices), so that a refusal is the access rule's and not the body's.
 */
export function validBody(op: Operation, fixtures: Record<string, string>): unknown {
  const app_id = fixtures.app_id;
  const contents = { en: { title: "Hi", body: "Now" } };
  const bodies: Record<string, unknown> = {
    createApp: { name: "Other", platform: "web", bundle_id: `com.example.${randomUUID().slice(0, 8)}` },
    updateApp: { name: "Renamed" },
    createApiKey: { name: "extra", scope: "org" },
    setPlatformConfig: { platform: "web", vapid_subject: "mailto:push@example.com" },
    registerDevice: { app_id, push_token: apnsToken(), platform: "ios" },
    importDevices: `${JSON.stringify({ push_token: apnsToken(), platform: "ios" })}\n`,
    createSegment: { app_id, name: "extra", rule: { tags_any: ["x"] } },
    updateSegment: { name: "renamed" },
    createAndroidChannel: { id: `extra-${randomUUID().slice(0, 8)}`, name: "Extra" },
    updateAndroidChannel: { name: "Renamed" },
    createInAppMessage: { name: "extra", contents, audience: { kind: "all" } },
    updateInAppMessage: { name: "Renamed" },
    recordInAppMessageEvent: { type: "impression" },
    recordNotificationEvent: { campaign_id: fixtures.sent_campaign ?? randomUUID(), type: "received" },
    previewSegment: { app_id, rule: { tags_any: ["beta"] } },
    send: { app_id, name: "now", contents },
    sendToUsers: { app_id, name: "now", contents, external_ids: ["u1"] },
    sendToSegment: { app_id, name: "now", contents, segment_id: fixtures.segments },
    sendToDevices: { app_id, name: "now", contents, device_ids: [fixtures.devices] },
    updateOrg: { name: "Renamed" },
    updateMember: { role: "owner" },
    createInvitation: { email: `x-${randomUUID().slice(0, 8)}@example.com`, role: "owner" },
    createOAuthClient: { name: "Evil", redirect_uris: ["https://evil.example/cb"] },
  };
  return bodies[op.operationId] ?? {};
}

/**
 * What the device-facing routes of an app need to answer 2xx: a web config (the public
 * VAPID key a client key reads) and a campaign that fan-out has handed to the senders
 * (a device may report on it). Sets `fixtures.sent_campaign`.
 */
export async function deviceFacingFixtures(
  gw: TestGateway,
  key: string,
  fixtures: Record<string, string>,
): Promise<void> {
  const app_id = fixtures.app_id!;
  const web = await gw.call("POST", `/v1/apps/${app_id}/platform-config`, key, {
    platform: "web",
    vapid_subject: "mailto:push@example.com",
  });
  if (web.status !== 200) throw new Error(`web config: ${web.text}`);
  const sent = await gw.call("POST", "/v1/push/send", key, {
    app_id,
    name: "sent",
    contents: { en: { title: "Hi", body: "Now" } },
  });
  if (sent.status !== 201) throw new Error(`send: ${sent.text}`);
  // No sender runs in these tests: the campaign stays "sending" once fan-out has started.
  await waitUntil(
    "the fixture campaign to start sending",
    async () =>
      ["sending", "completed"].includes((await gw.call("GET", `/v1/campaigns/${sent.body.id}`, key)).body.status),
    10_000,
  );
  fixtures.sent_campaign = sent.body.id;
}
