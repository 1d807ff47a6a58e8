import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEOPLE_NEED_A_SESSION, ROLES } from "../src/member-roles.js";
import type { Role } from "../src/principal.js";
import type { Backends, TestGateway } from "./harness.js";
import { type OwnerStack, startOwnerStack } from "./owner-stack.js";
import { type Operation, v1Operations, validBody } from "./operations.js";
import { join } from "./people.js";
import { createOrgFixtures, operationUrl, readableState } from "./org-fixtures.js";
import type { Member } from "./session-tokens.js";

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
  if (/^\/v1\/apps\/\{app_id\}\/webhooks(\/|$)/.test(path)) return "developer";
  // Erasing a user's devices and records is device work, not app administration.
  if (/^\/v1\/apps\/\{app_id\}\/users\//.test(path)) return "developer";
  if (/^\/v1\/(org|members|invitations)(\/|$)/.test(path)) return "owner";
  if (/^\/v1\/(apps|oauth-clients)(\/|$)/.test(path)) return "admin";
  return "developer";
}
const sessionOnly = (path: string) => /^\/v1\/(me|org|members|invitations|oauth-clients)(\/|$)/.test(path);

let backends: Backends;
let gw: TestGateway;
let stack: OwnerStack;
let operations: Operation[];
let key: string;
let orgId: string;
const members = {} as Record<Role, Member>;
/** Real resources for the refused requests, by path parameter (`{id}`: by collection). */
const fixtures: Record<string, string> = {};

beforeAll(async () => {
  stack = await startOwnerStack({ rateLimitPerMinute: 1_000_000 });
  ({ backends, gw } = stack);
  const { tokens, owner } = stack;
  members.owner = owner;
  orgId = owner.orgId;
  for (const role of ["admin", "developer", "viewer"] as const) members[role] = await join(gw, tokens, owner, role);
  key = backends.bootstrapKey;

  Object.assign(fixtures, await createOrgFixtures(gw, key, owner, tokens));

  operations = await v1Operations(gw.app);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const snapshot = () => readableState(gw, members.owner.token, operations, fixtures);

const send = (op: Operation, token: string, real: boolean) =>
  gw.call(
    op.method as "GET",
    operationUrl(op, fixtures, { real }),
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
