import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { accessDenial, ROLES, roleAtLeast } from "./member-roles.js";
import type { Principal, Role } from "./principal.js";
import { roleCheckedApp } from "../test/role-check-app.js";

const ORG = "aaaaaaaa-0000-4000-8000-000000000001";
const apiKey: Principal = { orgId: ORG, scope: "org", identity: "key:k", rateLimitPerMinute: 1000 };
const session = (role: Role): Principal => ({
  orgId: ORG,
  scope: "org",
  identity: `jwt:${role}`,
  rateLimitPerMinute: 1000,
  userId: "11111111-0000-4000-8000-000000000001",
  role,
});

describe("roles", () => {
  it("are ordered owner ⊃ admin ⊃ developer ⊃ viewer", () => {
    const allowed = ROLES.map((role) => ROLES.filter((min) => roleAtLeast(role, min)));
    expect(allowed).toEqual([
      ["owner", "admin", "developer", "viewer"],
      ["admin", "developer", "viewer"],
      ["developer", "viewer"],
      ["viewer"],
    ]);
  });

  it("refuse a weaker role, naming the role needed", () => {
    expect(accessDenial(session("viewer"), { minRole: "developer" })).toBe(
      "this needs the developer role or higher; your role in this organization is viewer",
    );
    expect(accessDenial(session("admin"), { minRole: "developer" })).toBeNull();
    expect(accessDenial(session("owner"), { minRole: "owner", sessionOnly: "sessions only" })).toBeNull();
  });

  it("leave API keys to their scope, except on session-only routes", () => {
    expect(accessDenial(apiKey, { minRole: "owner" })).toBeNull();
    expect(accessDenial(apiKey, { minRole: "viewer", sessionOnly: "sessions only" })).toBe("sessions only");
  });
});

/** The principal named by the test header: the API key, or a session of that role. */
const appWith = (routes: (scope: FastifyInstance) => void, schemas?: Map<string, unknown>) =>
  roleCheckedApp((as) => (as === "key" ? apiKey : session(as as Role)), routes, schemas);

describe("registerRoleCheck", () => {
  it("refuses to register a route that declares no role", async () => {
    await expect(appWith((v1) => v1.get("/things", async () => ({})))).rejects.toThrow(
      "GET /v1/things declares no minRole",
    );
    await expect(
      appWith((v1) => v1.get("/things", { config: { minRole: "nobody" as Role } }, async () => ({}))),
    ).rejects.toThrow(/declares no minRole/);
  });

  it("answers 403 with the API's error body before the handler or the body validation run", async () => {
    let handled = 0;
    const app = await appWith((v1) =>
      v1.post(
        "/things",
        {
          config: { minRole: "developer" },
          schema: { body: { type: "object", required: ["name"], properties: { name: { type: "string" } } } },
        },
        async () => {
          handled++;
          return { ok: true };
        },
      ),
    );
    const viewer = await app.inject({ method: "POST", url: "/v1/things", headers: { "x-as": "viewer" }, payload: {} });
    expect(viewer.statusCode).toBe(403);
    expect(viewer.json()).toEqual({
      error: "Forbidden",
      message: "this needs the developer role or higher; your role in this organization is viewer",
    });
    const developer = await app.inject({
      method: "POST",
      url: "/v1/things",
      headers: { "x-as": "developer" },
      payload: { name: "x" },
    });
    expect(developer.statusCode).toBe(200);
    const key = await app.inject({ method: "POST", url: "/v1/things", headers: { "x-as": "key" }, payload: {} });
    expect(key.statusCode).toBe(400);
    expect(handled).toBe(1);
  });

  it("refuses API keys on session-only routes and documents the rule in the schema", async () => {
    const schemas = new Map<string, unknown>();
    const app = await appWith(
      (v1) =>
        v1.get(
          "/me",
          {
            config: { minRole: "viewer", sessionOnly: "no user behind an API key" },
            schema: { description: "Who.", response: { 200: { type: "object" } } },
          },
          async () => ({}),
        ),
      schemas,
    );
    const key = await app.inject({ url: "/v1/me", headers: { "x-as": "key" } });
    expect(key.statusCode).toBe(403);
    expect(key.json().message).toBe("no user behind an API key");
    expect((await app.inject({ url: "/v1/me", headers: { "x-as": "viewer" } })).statusCode).toBe(200);
    expect(schemas.get("GET /v1/me")).toMatchObject({
      description: "Who.\n\nSigned-in users with the viewer role or higher; API keys get 403.",
      "x-herald-min-role": "viewer",
      response: { 403: { $ref: "Error#" } },
    });
  });

  it("lets unknown paths reach the not-found answer", async () => {
    const app = await appWith((v1) => v1.get("/known", { config: { minRole: "viewer" } }, async () => ({})));
    expect((await app.inject({ url: "/v1/unknown", headers: { "x-as": "viewer" } })).statusCode).toBe(404);
  });
});
