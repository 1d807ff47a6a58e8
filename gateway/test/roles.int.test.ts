import { randomUUID } from "node:crypto";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient } from "@herald/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apnsToken } from "../../test/support/device-tokens.js";
import { PEOPLE_NEED_A_SESSION, ROLES } from "../src/member-roles.js";
import type { Role } from "../src/principal.js";
import { createApp, gatewayConfig, startBackends, startGateway, type Backends, type TestGateway } from "./harness.js";
import { deviceFacingFixtures, type Operation, v1Operations, validBody } from "./operations.js";
import { join } from "./people.js";
import { bootstrapOwner, newPassword, SessionTokens, type Member } from "./session-tokens.js";

/**
 * Every /v1 operation of the OpenAPI document (so a new route is covered the day it is
 * added) × every role, and an org-scoped API key: refused callers get exactly 403 and
 * change nothing; allowed ones get past the role check.
 */

/** The roles of docs/architecture.md §Roles, by method and path, to check each route's declaration against. */
function policyRole(method: string, path: string): Role {
  if (method === "GET" || `${method} ${path}` === "POST /v1/segments/preview") return "viewer";
  // What a device did with an in-app message is an acknowledgement, not a change to the app.
  if (/^\/v1\/devices\/\{id\}\/in-app-messages\//.test(path)) return "viewer";
  if (/^\/v1\/apps\/\{app_id\}\/in-app-messages(\/|$)/.test(path)) return "developer";
  if (/^\/v1\/(org|members|invitations)(\/|$)/.test(path)) return "owner";
  if (/^\/v1\/(apps|oauth-clients)(\/|$)/.test(path)) return "admin";
  return "developer";
}
const sessionOnly = (path: string) => /^\/v1\/(me|org|members|invitations|oauth-clients)(\/|$)/.test(path);

let backends: Backends;
let gw: TestGateway;
let closeIdentity: () => void;
let operations: Operation[];
let key: string;
let orgId: string;
const members = {} as Record<Role, Member>;
/** Real resources for the refused requests, by path parameter (`{id}`: by collection). */
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  const admin = { email: `owner-${randomUUID().slice(0, 8)}@example.com`, password: newPassword() };
  backends = await startBackends({ bootstrapAdmin: admin });
  gw = await startGateway(backends, { rateLimitPerMinute: 1_000_000 });
  const identity = createRpcClient(IdentityService, backends.credentialUrl);
  closeIdentity = identity.close;
  const tokens = new SessionTokens(identity.client, gatewayConfig().publicUrl);
  const owner = await bootstrapOwner(identity.client, tokens, admin);
  members.owner = owner;
  orgId = owner.orgId;
  for (const role of ["admin", "developer", "viewer"] as const) members[role] = await join(gw, tokens, owner, role);
  key = backends.bootstrapKey;

  const app = await createApp(gw, key);
  fixtures.app_id = app.id;
  const apiKey = await gw.call("POST", `/v1/apps/${app.id}/api-keys`, key, { name: "fixture" });
  expect(apiKey.status, apiKey.text).toBe(201);
  fixtures.key_id = apiKey.body.id;
  const device = await gw.call("POST", "/v1/devices/register", key, {
    app_id: app.id,
    push_token: apnsToken(),
    platform: "ios",
  });
  expect(device.status, device.text).toBe(200);
  fixtures.devices = device.body.id;
  const segment = await gw.call("POST", "/v1/segments", key, {
    app_id: app.id,
    name: "beta",
    rule: { tags_any: ["beta"] },
  });
  expect(segment.status, segment.text).toBe(201);
  fixtures.segments = segment.body.id;
  const channel = await gw.call("POST", `/v1/apps/${app.id}/android-channels`, key, { id: "news", name: "News" });
  expect(channel.status, channel.text).toBe(201);
  fixtures.channel_id = channel.body.id;
  const message = await gw.call("POST", `/v1/apps/${app.id}/in-app-messages`, key, {
    name: "welcome",
    contents: { en: { title: "Hi", body: "Welcome" } },
    audience: { kind: "all" },
  });
  expect(message.status, message.text).toBe(201);
  fixtures.message_id = message.body.id;
  const campaign = await gw.call("POST", "/v1/push/send", key, {
    app_id: app.id,
    name: "later",
    contents: { en: { title: "Hi", body: "Later" } },
    scheduled_at: new Date(Date.now() + 7 * 24 * 3600_000).toISOString(),
  });
  expect(campaign.status, campaign.text).toBe(201);
  fixtures.campaigns = campaign.body.id;
  fixtures.user_id = (await join(gw, tokens, owner, "viewer")).userId;
  const invitation = await gw.call("POST", "/v1/invitations", owner.token, {
    email: `pending-${randomUUID().slice(0, 8)}@example.com`,
    role: "viewer",
  });
  expect(invitation.status, invitation.text).toBe(201);
  fixtures.invitation_id = invitation.body.id;
  const client = await gw.call("POST", "/v1/oauth-clients", owner.token, {
    name: "CLI",
    redirect_uris: ["http://127.0.0.1:53682/callback"],
  });
  expect(client.status, client.text).toBe(201);
  fixtures.client_id = client.body.client_id;
  await deviceFacingFixtures(gw, key, fixtures);

  operations = await v1Operations(gw.app);
}, 120_000);

afterAll(async () => {
  await gw?.close();
  closeIdentity?.();
  await backends?.stop();
});

/** The operation's URL with real fixtures, or with ids that name nothing. */
function url(op: Operation, real: boolean): string {
  const collection = op.path.split("/")[2]!;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!real) return name === "client_id" ? "hc_nothing" : randomUUID();
    const value = fixtures[name === "id" ? collection : name];
    if (!value) throw new Error(`no fixture for {${name}} of ${op.path}: add one to this test`);
    return value;
  });
  return op.query.includes("app_id") ? `${path}?app_id=${fixtures.app_id}` : path;
}

/** Everything an owner can read, for comparing before and after. */
async function snapshot(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const op of operations.filter((o) => o.method === "GET" && !o.isPublic)) {
    const res = await gw.call("GET", url(op, true), members.owner.token);
    expect(res.status, `GET ${op.path}: ${res.text}`).toBe(200);
    out[op.path] = res.body;
  }
  return out;
}

const send = (op: Operation, token: string, real: boolean) =>
  gw.call(
    op.method as "GET",
    url(op, real),
    token,
    op.method === "GET" || op.method === "DELETE" ? undefined : real ? validBody(op, fixtures) : {},
  );

describe("role enforcement on every /v1 route", () => {
  it("covers every operation: each declares the role the policy gives it, only accepting an invitation is public", () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.filter((op) => op.isPublic).map((op) => `${op.method} ${op.path}`)).toEqual([
      "POST /v1/invitations/accept",
    ]);
    for (const op of operations.filter((o) => !o.isPublic)) {
      expect(op.minRole, `${op.method} ${op.path}`).toBe(policyRole(op.method, op.path));
    }
  });

  it("refuses weaker roles and API keys on people routes with exactly 403, changing nothing", async () => {
    const before = await snapshot();
    let refusals = 0;
    for (const op of operations.filter((o) => !o.isPublic)) {
      const needed = policyRole(op.method, op.path);
      for (const role of ROLES.slice(ROLES.indexOf(needed) + 1)) {
        const res = await send(op, members[role].token, true);
        expect(res.status, `${role} ${op.method} ${op.path}: ${res.text}`).toBe(403);
        expect(res.body).toEqual({
          error: "Forbidden",
          message: `this needs the ${needed} role or higher; your role in this organization is ${role}`,
        });
        refusals++;
      }
      if (sessionOnly(op.path)) {
        const res = await send(op, key, true);
        expect(res.status, `API key ${op.method} ${op.path}: ${res.text}`).toBe(403);
        expect(res.body).toEqual({
          error: "Forbidden",
          message: op.path === "/v1/me" ? expect.stringContaining("API key") : PEOPLE_NEED_A_SESSION,
        });
        refusals++;
      }
    }
    expect(refusals).toBeGreaterThan(50);
    expect(await snapshot()).toEqual(before);
  }, 120_000);

  it("lets the role and every stronger one through: reads answer 200, writes reach their validation or lookup", async () => {
    for (const op of operations.filter((o) => !o.isPublic)) {
      const needed = policyRole(op.method, op.path);
      const callers = ROLES.slice(0, ROLES.indexOf(needed) + 1).map((role) => [role, members[role].token] as const);
      if (!sessionOnly(op.path)) callers.push(["API key" as Role, key]);
      for (const [who, token] of callers) {
        const res = await send(op, token, op.method === "GET");
        const label = `${who} ${op.method} ${op.path}: ${res.text}`;
        if (op.method === "GET") expect(res.status, label).toBe(200);
        else {
          expect(res.status, label).not.toBe(403);
          expect(res.status, label).toBeLessThan(500);
        }
      }
    }
  }, 120_000);

  it("answers GET /v1/me with the session's user, organization and role", async () => {
    for (const role of ROLES) {
      const res = await gw.call("GET", "/v1/me", members[role].token);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({
        user: { id: members[role].userId, email: members[role].email },
        org: { id: orgId },
        role,
        memberships: [{ org_id: orgId, role }],
      });
    }
  });
});
