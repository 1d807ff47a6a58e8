import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { waitUntil } from "../../test/support/wait.js";
import { createApp, type TestGateway } from "./harness.js";
import { deviceFacingFixtures, type Operation } from "./operations.js";
import { join } from "./people.js";
import type { SessionTokens } from "./session-tokens.js";

/**
 * Real resources of one organization, by the path parameter that names them (`{id}` by
 * its collection: devices, segments, campaigns), so that tests over every /v1 operation
 * can address each route with something that exists: an app and one of each thing in it,
 * a member, an invitation and an OAuth client.
 */
export async function createOrgFixtures(
  gw: TestGateway,
  key: string,
  owner: { token: string; orgId: string },
  tokens: SessionTokens,
  /** The token the fixture device is registered with (a client key proves it). */
  { pushToken = apnsToken() } = {},
): Promise<Record<string, string>> {
  const fixtures: Record<string, string> = {};
  const created = async (what: string, res: Promise<{ status: number; text: string; body: any }>) => {
    const reply = await res;
    expect(reply.status, `${what}: ${reply.text}`).toBeLessThan(300);
    return reply.body;
  };
  const app = await createApp(gw, key);
  fixtures.app_id = app.id;
  const call = (method: "POST", path: string, body: unknown, token = key) => gw.call(method, path, token, body);
  fixtures.key_id = (await created("key", call("POST", `/v1/apps/${app.id}/api-keys`, { name: "fixture" }))).id;
  fixtures.devices = (
    await created(
      "device",
      call("POST", "/v1/devices/register", { app_id: app.id, push_token: pushToken, platform: "ios" }),
    )
  ).id;
  // A user with a device of their own: DELETE /v1/apps/{app_id}/users/{external_id} erases it.
  fixtures.external_id = `fixture-user-${randomUUID().slice(0, 8)}`;
  await created(
    "user's device",
    call("POST", "/v1/devices/register", {
      app_id: app.id,
      push_token: apnsToken(),
      platform: "ios",
      external_id: fixtures.external_id,
    }),
  );
  fixtures.segments = (
    await created(
      "segment",
      call("POST", "/v1/segments", { app_id: app.id, name: "beta", rule: { tags_any: ["beta"] } }),
    )
  ).id;
  fixtures.channel_id = (
    await created("channel", call("POST", `/v1/apps/${app.id}/android-channels`, { id: "news", name: "News" }))
  ).id;
  fixtures.message_id = (
    await created(
      "in-app message",
      call("POST", `/v1/apps/${app.id}/in-app-messages`, {
        name: "welcome",
        contents: { en: { title: "Hi", body: "Welcome" } },
        audience: { kind: "all" },
      }),
    )
  ).id;
  fixtures.webhook_id = (
    await created(
      "webhook",
      call("POST", `/v1/apps/${app.id}/webhooks`, {
        url: "https://example.com/hook",
        events: ["webhook.test"],
        enabled: false,
      }),
    )
  ).id;
  fixtures.event_id = (
    await created("webhook test event", call("POST", `/v1/apps/${app.id}/webhooks/${fixtures.webhook_id}/test`, {}))
  ).event_id;
  // The endpoint is disabled: its delivery ends without a request. Wait for that, so the
  // state the tests compare no longer moves.
  await waitUntil("the fixture webhook's delivery to settle", async () => {
    const res = await gw.call("GET", `/v1/apps/${app.id}/webhooks/${fixtures.webhook_id}/attempts`, key);
    return res.body?.data?.[0]?.status === "failed";
  });
  fixtures.campaigns = (
    await created(
      "campaign",
      call("POST", "/v1/push/send", {
        app_id: app.id,
        name: "later",
        contents: { en: { title: "Hi", body: "Later" } },
        scheduled_at: new Date(Date.now() + 7 * 24 * 3600_000).toISOString(),
      }),
    )
  ).id;
  fixtures.user_id = (await join(gw, tokens, owner, "viewer")).userId;
  fixtures.invitation_id = (
    await created(
      "invitation",
      call(
        "POST",
        "/v1/invitations",
        { email: `pending-${randomUUID().slice(0, 8)}@example.com`, role: "viewer" },
        owner.token,
      ),
    )
  ).id;
  fixtures.client_id = (
    await created(
      "OAuth client",
      call(
        "POST",
        "/v1/oauth-clients",
        { name: "CLI", redirect_uris: ["http://127.0.0.1:53682/callback"] },
        owner.token,
      ),
    )
  ).client_id;
  await deviceFacingFixtures(gw, key, fixtures);
  return fixtures;
}

/**
 * The operation's URL with the fixtures for its path parameters (and app_id query); with
 * `real` false, with ids that name nothing; with `orUnknown`, those only where a fixture
 * is missing (otherwise a missing fixture is the test's mistake).
 */
export function operationUrl(
  op: Operation,
  fixtures: Record<string, string>,
  { real = true, orUnknown = false } = {},
): string {
  const collection = op.path.split("/")[2]!;
  const unknown = (name: string) => (name === "client_id" ? "hc_nothing" : randomUUID());
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = real ? fixtures[name === "id" ? collection : name] : unknown(name);
    if (value) return value;
    if (orUnknown) return unknown(name);
    throw new Error(`no fixture for {${name}} of ${op.path}: add one to createOrgFixtures`);
  });
  return op.query.includes("app_id") ? `${path}?app_id=${fixtures.app_id}` : path;
}

/**
 * Everything `token` can read through the GET operations whose parameters all have
 * fixtures, by path: compared before and after refused requests, it shows they changed
 * nothing.
 */
export async function readableState(
  gw: TestGateway,
  token: string,
  operations: Operation[],
  fixtures: Record<string, string>,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const op of operations.filter((o) => o.method === "GET" && !o.isPublic)) {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => (m[1] === "id" ? op.path.split("/")[2]! : m[1]!));
    if (!params.every((p) => fixtures[p])) continue;
    const res = await gw.call("GET", operationUrl(op, fixtures), token);
    expect(res.status, `GET ${op.path}: ${res.text}`).toBe(200);
    out[op.path] = res.body;
  }
  return out;
}
