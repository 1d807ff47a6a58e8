import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Role as ProtoRole } from "@herald/proto/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEOPLE_NEED_A_SESSION } from "../src/member-roles.js";
import type { IdentityClient } from "../src/backends.js";
import { waitUntil } from "../../test/support/wait.js";
import { ACCEPTS_PER_ADDRESS_PER_MINUTE } from "../src/routes/invitation-accept.js";
import { expectError, ISO_TIMESTAMP, startGateway, type Backends, type TestGateway } from "./harness.js";
import { type OwnerStack, startOwnerStack } from "./owner-stack.js";
import { join } from "./people.js";
import { newPassword, type SessionTokens, type Member } from "./session-tokens.js";

let backends: Backends;
let gw: TestGateway;
let identity: IdentityClient;
let tokens: SessionTokens;
let owner: Member & { orgId: string };
let stack: OwnerStack;

beforeAll(async () => {
  stack = await startOwnerStack();
  ({ backends, gw, identity, tokens, owner } = stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const newEmail = (who: string) => `${who}-${randomUUID().slice(0, 8)}@example.com`;

describe("members and invitations", () => {
  it("invites, accepts as a new user, lists, changes the role and removes, never leaving the org without an owner", async () => {
    const email = newEmail("Grace");
    const invited = await gw.call("POST", "/v1/invitations", owner.token, { email, role: "developer" });
    expect(invited.status, invited.text).toBe(201);
    expect(invited.body).toEqual({
      id: expect.any(String),
      email: email.toLowerCase(),
      role: "developer",
      expires_at: expect.stringMatching(ISO_TIMESTAMP),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      token: expect.any(String),
      accept_url: `http://127.0.0.1:8080/invitations/accept?token=${encodeURIComponent(invited.body.token)}`,
    });
    const week = Date.parse(invited.body.expires_at) - Date.parse(invited.body.created_at);
    expect(week).toBeGreaterThan(6 * 24 * 3600_000);

    // The token is shown once: the list has the invitation without it.
    const pending = await gw.call("GET", "/v1/invitations", owner.token);
    expect(pending.status).toBe(200);
    const listed = pending.body.data.find((i: { id: string }) => i.id === invited.body.id);
    expect(listed).toEqual({
      id: invited.body.id,
      email: email.toLowerCase(),
      role: "developer",
      expires_at: invited.body.expires_at,
      created_at: invited.body.created_at,
    });
    expect(pending.text).not.toContain(invited.body.token);

    const password = newPassword();
    const accepted = await gw.call("POST", "/v1/invitations/accept", undefined, {
      token: invited.body.token,
      password,
      name: "Grace Hopper",
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toEqual({
      user: { id: expect.any(String), email: email.toLowerCase(), name: "Grace Hopper" },
      org_id: owner.orgId,
      role: "developer",
    });
    expect(gw.logs.text()).not.toContain(password);
    expect(gw.logs.text()).not.toContain(invited.body.token);
    const userId = accepted.body.user.id as string;
    const used = await gw.call("GET", "/v1/invitations", owner.token);
    expect(used.body.data.map((i: { id: string }) => i.id)).not.toContain(invited.body.id);

    const list = await gw.call("GET", "/v1/members", owner.token);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, per_page: 50, total: 2 });
    expect(list.body.data).toEqual(
      expect.arrayContaining([
        {
          user: {
            id: owner.userId,
            email: owner.email,
            name: expect.toSatisfy((n) => n === null || typeof n === "string"),
          },
          role: "owner",
          joined_at: expect.stringMatching(ISO_TIMESTAMP),
        },
        {
          user: { id: userId, email: email.toLowerCase(), name: "Grace Hopper" },
          role: "developer",
          joined_at: expect.stringMatching(ISO_TIMESTAMP),
        },
      ]),
    );

    const promoted = await gw.call("PATCH", `/v1/members/${userId}`, owner.token, { role: "admin" });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body).toMatchObject({ user: { id: userId }, role: "admin" });
    const again = await gw.call("GET", "/v1/members", owner.token);
    expect(again.body.data.find((m: { user: { id: string } }) => m.user.id === userId).role).toBe("admin");

    // The only owner can neither step down nor leave.
    expectError(await gw.call("PATCH", `/v1/members/${owner.userId}`, owner.token, { role: "admin" }), 409, "Conflict");
    expectError(await gw.call("DELETE", `/v1/members/${owner.userId}`, owner.token), 409, "Conflict");
    expectError(
      await gw.call("PATCH", `/v1/members/${owner.userId}`, owner.token, { role: "boss" }),
      400,
      "ValidationError",
    );
    expectError(
      await gw.call("PATCH", `/v1/members/${randomUUID()}`, owner.token, { role: "viewer" }),
      404,
      "NotFound",
    );

    expect((await gw.call("DELETE", `/v1/members/${userId}`, owner.token)).status).toBe(204);
    const after = await gw.call("GET", "/v1/members", owner.token);
    expect(after.body.data.map((m: { user: { id: string } }) => m.user.id)).toEqual([owner.userId]);
    expectError(await gw.call("DELETE", `/v1/members/${userId}`, owner.token), 404, "NotFound");
  });

  it("answers 404 for a used, revoked, expired or unknown token", async () => {
    const expired = await identity.createInvitation({
      orgId: owner.orgId,
      email: newEmail("late"),
      role: ProtoRole.VIEWER,
      invitedByUserId: owner.userId,
      ttlSeconds: 1,
    });
    const member = await join(gw, tokens, owner, "viewer");
    expect(member.role).toBe("viewer");

    const revoked = await gw.call("POST", "/v1/invitations", owner.token, {
      email: newEmail("revoked"),
      role: "viewer",
    });
    expect((await gw.call("DELETE", `/v1/invitations/${revoked.body.id}`, owner.token)).status).toBe(204);
    expectError(await gw.call("DELETE", `/v1/invitations/${revoked.body.id}`, owner.token), 404, "NotFound");

    const used = await gw.call("POST", "/v1/invitations", owner.token, { email: newEmail("twice"), role: "viewer" });
    const first = await gw.call("POST", "/v1/invitations/accept", undefined, {
      token: used.body.token,
      password: newPassword(),
    });
    expect(first.status, first.text).toBe(200);

    // A ttl is whole seconds: the expiring invitation comes first, so that its second
    // passes while the others are made; then its expires_at (the database's clock) is waited for.
    const expiresAt = timestampDate(expired.invitation!.expiresAt!).getTime();
    await waitUntil("the invitation to expire", () => Date.now() > expiresAt, 2_000, 20);

    for (const token of [used.body.token, revoked.body.token, expired.token, "not-a-token", "A".repeat(43)]) {
      const res = await gw.call("POST", "/v1/invitations/accept", undefined, { token, password: newPassword() });
      expectError(res, 404, "NotFound");
    }
  });

  it("lets an existing user join with their current password, and refuses a wrong one with 401", async () => {
    const existing = await join(gw, tokens, owner, "viewer");
    // Invited again after leaving: the account exists, so its own password is the proof.
    expect((await gw.call("DELETE", `/v1/members/${existing.userId}`, owner.token)).status).toBe(204);
    const invited = await gw.call("POST", "/v1/invitations", owner.token, { email: existing.email, role: "developer" });
    expect(invited.status, invited.text).toBe(201);
    const wrong = await gw.call("POST", "/v1/invitations/accept", undefined, {
      token: invited.body.token,
      password: newPassword(),
    });
    expectError(wrong, 401, "Unauthorized");
    const right = await gw.call("POST", "/v1/invitations/accept", undefined, {
      token: invited.body.token,
      password: existing.password,
    });
    expect(right.status, right.text).toBe(200);
    expect(right.body).toMatchObject({ user: { id: existing.userId }, role: "developer" });
  });

  it("refuses an invitation for someone who is already a member (409) and bad input (400)", async () => {
    expectError(
      await gw.call("POST", "/v1/invitations", owner.token, { email: owner.email, role: "viewer" }),
      409,
      "Conflict",
    );
    expectError(
      await gw.call("POST", "/v1/invitations", owner.token, { email: "not an email", role: "viewer" }),
      400,
      "ValidationError",
    );
    expectError(await gw.call("POST", "/v1/invitations/accept", undefined, { token: "x" }), 400, "ValidationError");
  });

  it("keeps the organization, its people and OAuth clients away from API keys", async () => {
    for (const [method, url, body] of [
      ["GET", "/v1/me"],
      ["GET", "/v1/org"],
      ["PATCH", "/v1/org", { name: "Taken over" }],
      ["GET", "/v1/members"],
      ["DELETE", `/v1/members/${owner.userId}`],
      ["POST", "/v1/invitations", { email: newEmail("key"), role: "owner" }],
      ["GET", "/v1/invitations"],
      ["POST", "/v1/oauth-clients", { name: "x", redirect_uris: ["https://x.example/cb"] }],
    ] as const) {
      const res = await gw.call(method, url, backends.bootstrapKey, body);
      expectError(res, 403, "Forbidden");
      if (url !== "/v1/me") expect(res.body.message, url).toBe(PEOPLE_NEED_A_SESSION);
    }
  });

  it("renames the organization and registers OAuth clients", async () => {
    const org = await gw.call("GET", "/v1/org", owner.token);
    expect(org.body).toEqual({
      id: owner.orgId,
      name: expect.any(String),
      created_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    const renamed = await gw.call("PATCH", "/v1/org", owner.token, { name: "Acme" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toMatchObject({ id: owner.orgId, name: "Acme" });
    expect((await gw.call("GET", "/v1/me", owner.token)).body.org).toEqual({ id: owner.orgId, name: "Acme" });

    const client = await gw.call("POST", "/v1/oauth-clients", owner.token, {
      name: "Release CLI",
      redirect_uris: ["http://127.0.0.1:53682/callback"],
    });
    expect(client.status, client.text).toBe(201);
    expect(client.body).toEqual({
      client_id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      name: "Release CLI",
      redirect_uris: ["http://127.0.0.1:53682/callback"],
      created_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    const list = await gw.call("GET", "/v1/oauth-clients", owner.token);
    expect(list.body.data).toEqual([client.body]);
    expectError(
      await gw.call("POST", "/v1/oauth-clients", owner.token, {
        name: "Bad",
        redirect_uris: ["http://evil.example/cb"],
      }),
      400,
      "ValidationError",
    );
    expect((await gw.call("DELETE", `/v1/oauth-clients/${client.body.client_id}`, owner.token)).status).toBe(204);
    expectError(await gw.call("DELETE", `/v1/oauth-clients/${client.body.client_id}`, owner.token), 404, "NotFound");
  });

  it("rate-limits accepting per client address", async () => {
    const fresh = await startGateway(backends);
    const attempt = { token: "A".repeat(43), password: newPassword() };
    try {
      for (let i = 0; i < ACCEPTS_PER_ADDRESS_PER_MINUTE; i++) {
        const res = await fresh.call("POST", "/v1/invitations/accept", undefined, attempt);
        expect(res.status).toBe(404);
        expect(res.headers["x-ratelimit-limit"]).toBe(String(ACCEPTS_PER_ADDRESS_PER_MINUTE));
      }
      const limited = await fresh.call("POST", "/v1/invitations/accept", undefined, attempt);
      expectError(limited, 429, "RateLimited");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    } finally {
      await fresh.close();
    }
  });
});
