import { Code } from "@connectrpc/connect";
import { Role } from "@herald/proto/identity";
import { describe, expect, it } from "vitest";
import { rawPool } from "./harness.js";
import { failure, randomPassword, startIdentity, useAdminIdentity } from "./identity-support.js";

const { config, admin, svc } = useAdminIdentity();

/** Adds a user to the org through an invitation, as the gateway would. */
async function addMember(email: string, role: Role, password = randomPassword()) {
  const { token } = await svc.identity.createInvitation({
    orgId: svc.orgId,
    email,
    role,
    invitedByUserId: svc.adminId,
  });
  const { user } = await svc.identity.acceptInvitation({ token, password, name: "Member" });
  return { id: user!.id, password };
}

describe("authenticate", () => {
  it("accepts the right password, with the email in any case and spacing", async () => {
    const { user } = await svc.identity.authenticate({
      email: `  ${admin.email.toUpperCase()} `,
      password: admin.password,
    });
    expect(user).toMatchObject({ id: svc.adminId, email: admin.email });
  });

  it("answers a wrong password and an unknown email with the same error", async () => {
    const wrong = await failure(svc.identity.authenticate({ email: admin.email, password: randomPassword() }));
    const unknown = await failure(svc.identity.authenticate({ email: "nobody@herald.test", password: admin.password }));
    const malformed = await failure(svc.identity.authenticate({ email: "not an email", password: "x" }));
    for (const err of [wrong, unknown, malformed]) {
      expect(err.code).toBe(Code.Unauthenticated);
      expect(err.rawMessage).toBe(wrong.rawMessage);
    }
  });

  it("spends comparable time on an unknown email and on a wrong password", async () => {
    const time = async (email: string) => {
      const t0 = performance.now();
      await failure(svc.identity.authenticate({ email, password: randomPassword() }));
      return performance.now() - t0;
    };
    await time("warm-up@herald.test");
    const unknown = await time("nobody@herald.test");
    const wrong = await time(admin.email);
    // argon2 dominates both; without the dummy hash the unknown email would answer in ~1 ms.
    expect(unknown).toBeGreaterThan(wrong / 4);
  });

  it("stores argon2id hashes, never the password", async () => {
    const pool = rawPool(config);
    try {
      const { rows } = await pool.query<{ password_hash: string }>("SELECT password_hash FROM users");
      for (const row of rows) {
        expect(row.password_hash).toMatch(/^\$argon2id\$/);
        expect(row.password_hash).not.toContain(admin.password);
      }
    } finally {
      await pool.end();
    }
  });
});

describe("users, memberships and the org", () => {
  it("returns a user with their memberships, and one membership", async () => {
    const { user, memberships } = await svc.identity.getUser({ userId: svc.adminId });
    expect(user).toMatchObject({ id: svc.adminId, email: admin.email });
    expect(memberships).toEqual([expect.objectContaining({ orgId: svc.orgId, orgName: "default", role: Role.OWNER })]);
    const { membership } = await svc.identity.getMembership({ orgId: svc.orgId, userId: svc.adminId });
    expect(membership).toMatchObject({ orgId: svc.orgId, userId: svc.adminId, role: Role.OWNER });
  });

  it("answers NOT_FOUND for unknown users, memberships and orgs", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const call of [
      () => svc.identity.getUser({ userId: unknown }),
      () => svc.identity.getUser({ userId: "not-a-uuid" }),
      () => svc.identity.getMembership({ orgId: svc.orgId, userId: unknown }),
      () => svc.identity.getOrg({ orgId: unknown }),
    ]) {
      expect((await failure(call())).code).toBe(Code.NotFound);
    }
  });

  it("renames the org, and a restart does not make another default org", async () => {
    const { org } = await svc.identity.updateOrg({ orgId: svc.orgId, name: "  Acme  " });
    expect(org).toMatchObject({ id: svc.orgId, name: "Acme" });
    expect((await svc.identity.getOrg({ orgId: svc.orgId })).org?.name).toBe("Acme");
    expect((await failure(svc.identity.updateOrg({ orgId: svc.orgId, name: " " }))).code).toBe(Code.InvalidArgument);

    // Another start on the same schema (a restart, or a second replica) makes no other org.
    const again = await startIdentity(config);
    const pool = rawPool(config);
    try {
      expect((await pool.query("SELECT id FROM orgs")).rows).toEqual([{ id: svc.orgId }]);
      expect(again.logs.text()).not.toContain(admin.password);
    } finally {
      await pool.end();
      await again.close();
    }
  });
});

describe("members", () => {
  it("lists members with paging, changes roles and removes members", async () => {
    const dev = await addMember("dev@herald.test", Role.DEVELOPER);
    const viewer = await addMember("viewer@herald.test", Role.VIEWER);
    const all = await svc.identity.listMembers({ orgId: svc.orgId, page: { page: 1, perPage: 50 } });
    expect(all.page?.total).toBe(3n);
    expect(all.members.map((m) => [m.user?.email, m.role])).toEqual([
      [admin.email, Role.OWNER],
      ["dev@herald.test", Role.DEVELOPER],
      ["viewer@herald.test", Role.VIEWER],
    ]);
    const second = await svc.identity.listMembers({ orgId: svc.orgId, page: { page: 2, perPage: 2 } });
    expect(second.members.map((m) => m.user?.id)).toEqual([viewer.id]);

    const { member } = await svc.identity.updateMemberRole({ orgId: svc.orgId, userId: dev.id, role: Role.ADMIN });
    expect(member).toMatchObject({ user: { id: dev.id }, role: Role.ADMIN });
    expect(
      (await failure(svc.identity.updateMemberRole({ orgId: svc.orgId, userId: dev.id, role: Role.UNSPECIFIED }))).code,
    ).toBe(Code.InvalidArgument);

    await svc.identity.removeMember({ orgId: svc.orgId, userId: viewer.id });
    expect((await failure(svc.identity.getMembership({ orgId: svc.orgId, userId: viewer.id }))).code).toBe(
      Code.NotFound,
    );
    expect((await failure(svc.identity.removeMember({ orgId: svc.orgId, userId: viewer.id }))).code).toBe(
      Code.NotFound,
    );
    // The user stays, with no membership.
    expect((await svc.identity.getUser({ userId: viewer.id })).memberships).toEqual([]);
  });

  it("refuses to demote or remove the last owner, also when two owners race", async () => {
    const demote = await failure(
      svc.identity.updateMemberRole({ orgId: svc.orgId, userId: svc.adminId, role: Role.ADMIN }),
    );
    expect(demote.code).toBe(Code.FailedPrecondition);
    expect((await failure(svc.identity.removeMember({ orgId: svc.orgId, userId: svc.adminId }))).code).toBe(
      Code.FailedPrecondition,
    );

    const other = await addMember("owner2@herald.test", Role.OWNER);
    const results = await Promise.allSettled([
      svc.identity.updateMemberRole({ orgId: svc.orgId, userId: svc.adminId, role: Role.VIEWER }),
      svc.identity.removeMember({ orgId: svc.orgId, userId: other.id }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const owners = (await svc.identity.listMembers({ orgId: svc.orgId })).members.filter((m) => m.role === Role.OWNER);
    expect(owners).toHaveLength(1);
    // Put the admin back for the other tests.
    if (owners[0]!.user!.id !== svc.adminId) {
      await svc.identity.updateMemberRole({ orgId: svc.orgId, userId: svc.adminId, role: Role.OWNER });
    }
  });
});
