import { createHash } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { toJsonString } from "@bufbuild/protobuf";
import { ListInvitationsResponseSchema, Role } from "@herald/proto/identity";
import { describe, expect, it } from "vitest";
import { rawPool } from "./harness.js";
import { failure, randomPassword, useAdminIdentity } from "./identity-support.js";

/** Every password and token handed around: none may reach a log line. */
const secrets: string[] = [];
const { config, admin, svc } = useAdminIdentity({}, { neverLogged: secrets });

const invite = async (email: string, role = Role.DEVELOPER, ttlSeconds = 0) => {
  const res = await svc.identity.createInvitation({
    orgId: svc.orgId,
    email,
    role,
    invitedByUserId: svc.adminId,
    ttlSeconds,
  });
  secrets.push(res.token);
  return res;
};

async function sql(query: string, params: unknown[] = []) {
  const pool = rawPool(config);
  try {
    return (await pool.query(query, params)).rows;
  } finally {
    await pool.end();
  }
}

describe("invitations", () => {
  it("creates an invitation whose token is returned once and stored only as its hash", async () => {
    const before = Date.now();
    const { invitation, token } = await invite("  New.Person@Herald.Test ", Role.ADMIN);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(invitation).toMatchObject({
      orgId: svc.orgId,
      email: "new.person@herald.test",
      role: Role.ADMIN,
      invitedByUserId: svc.adminId,
    });
    const ttl = Number(invitation!.expiresAt!.seconds) * 1000 - before;
    expect(ttl).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(ttl).toBeLessThan(7 * 86_400_000 + 60_000);

    const rows = await sql("SELECT token_hash FROM invitations WHERE id = $1", [invitation!.id]);
    expect(rows[0].token_hash).toEqual(createHash("sha256").update(token).digest());
    expect(JSON.stringify(await sql("SELECT * FROM invitations"))).not.toContain(token);

    const listed = await svc.identity.listInvitations({ orgId: svc.orgId });
    expect(listed.invitations.map((i) => i.id)).toContain(invitation!.id);
    expect(toJsonString(ListInvitationsResponseSchema, listed)).not.toContain(token);
  });

  it("rejects bad emails, roles and an email that is already a member", async () => {
    const cases = [
      () => invite("not-an-email"),
      () => invite("x@herald.test", Role.UNSPECIFIED),
      () => invite("x@herald.test", Role.VIEWER, 365 * 86_400),
      () => invite(admin.email.toUpperCase()),
    ];
    const codes: Code[] = [];
    for (const call of cases) codes.push((await failure(call())).code);
    expect(codes).toEqual([Code.InvalidArgument, Code.InvalidArgument, Code.InvalidArgument, Code.AlreadyExists]);
  });

  it("peeks at a pending invitation and lets a new user accept it once with a password", async () => {
    const { invitation, token } = await invite("newbie@herald.test", Role.VIEWER);
    const peek = await svc.identity.peekInvitation({ token });
    expect(peek).toMatchObject({ invitation: { id: invitation!.id, email: "newbie@herald.test" }, orgName: "default" });
    expect(peek.userExists).toBe(false);

    const short = await failure(svc.identity.acceptInvitation({ token, password: "too-short" }));
    expect(short.code).toBe(Code.InvalidArgument);
    expect(short.rawMessage).toBe("password must be 12 to 256 characters");

    const password = randomPassword(20);
    secrets.push(password);
    const { user, membership } = await svc.identity.acceptInvitation({ token, password, name: "  New Bie " });
    expect(user).toMatchObject({ email: "newbie@herald.test", name: "New Bie" });
    expect(membership).toMatchObject({ orgId: svc.orgId, userId: user!.id, role: Role.VIEWER, orgName: "default" });
    expect((await svc.identity.authenticate({ email: "newbie@herald.test", password })).user?.id).toBe(user!.id);

    for (const call of [
      () => svc.identity.acceptInvitation({ token, password }),
      () => svc.identity.peekInvitation({ token }),
    ]) {
      expect((await failure(call())).code).toBe(Code.NotFound);
    }
    expect((await svc.identity.listInvitations({ orgId: svc.orgId })).invitations.map((i) => i.id)).not.toContain(
      invitation!.id,
    );
  });

  it("makes an existing user give their current password", async () => {
    const other = await svc.identity.createInvitation({
      orgId: svc.orgId,
      email: "twice@herald.test",
      role: Role.VIEWER,
    });
    const password = randomPassword();
    secrets.push(other.token, password);
    await svc.identity.acceptInvitation({ token: other.token, password });
    await svc.identity.removeMember({
      orgId: svc.orgId,
      userId: (await svc.identity.authenticate({ email: "twice@herald.test", password })).user!.id,
    });

    const { token } = await invite("twice@herald.test", Role.DEVELOPER);
    expect((await svc.identity.peekInvitation({ token })).userExists).toBe(true);
    const wrong = await failure(svc.identity.acceptInvitation({ token, password: randomPassword() }));
    expect(wrong.code).toBe(Code.Unauthenticated);
    // A wrong password does not use the invitation up.
    const { user, membership } = await svc.identity.acceptInvitation({ token, password, name: "ignored" });
    expect(user?.name).toBe("");
    expect(membership?.role).toBe(Role.DEVELOPER);
  });

  it("is accepted by exactly one of several racing calls", async () => {
    const { token } = await invite("racer@herald.test");
    const password = randomPassword();
    secrets.push(password);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => svc.identity.acceptInvitation({ token, password })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: Code.NotFound });
    expect(await sql("SELECT id FROM users WHERE email = 'racer@herald.test'")).toHaveLength(1);
  });

  it("refuses expired and revoked invitations, and unknown or malformed tokens", async () => {
    const expired = await invite("late@herald.test");
    await sql("UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [
      expired.invitation!.id,
    ]);
    const revoked = await invite("revoked@herald.test");
    await svc.identity.revokeInvitation({ orgId: svc.orgId, invitationId: revoked.invitation!.id });
    expect(
      (await failure(svc.identity.revokeInvitation({ orgId: svc.orgId, invitationId: revoked.invitation!.id }))).code,
    ).toBe(Code.NotFound);

    const password = randomPassword();
    for (const token of [expired.token, revoked.token, "A".repeat(43), "short", ""]) {
      expect((await failure(svc.identity.peekInvitation({ token }))).code).toBe(Code.NotFound);
      expect((await failure(svc.identity.acceptInvitation({ token, password }))).code).toBe(Code.NotFound);
    }
    const pending = (await svc.identity.listInvitations({ orgId: svc.orgId })).invitations.map((i) => i.id);
    expect(pending).not.toContain(expired.invitation!.id);
    expect(pending).not.toContain(revoked.invitation!.id);
  });
});
