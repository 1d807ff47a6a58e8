import { Code } from "@connectrpc/connect";
import { Role } from "@herald/proto/identity";
import { ConfigError } from "@herald/runtime";
import { afterAll, describe, expect, it } from "vitest";
import type { Config } from "../src/config.js";
import { LogCapture } from "../../../test/support/log-capture.js";
import { rawPool } from "./harness.js";
import {
  adminConfig,
  cleanUp,
  failure,
  randomPassword,
  type RunningIdentity,
  startIdentity,
  testConfig,
} from "./identity-support.js";

const configs: Config[] = [];
const passwords: string[] = [];
const logs: LogCapture[] = [];

/** Starts, runs the check, and stops: each start is a restart of the same install. */
async function withService<T>(config: Config, check: (svc: RunningIdentity) => Promise<T>): Promise<T> {
  if (!configs.includes(config)) configs.push(config);
  if (config.bootstrapAdminPassword) passwords.push(config.bootstrapAdminPassword);
  const capture = new LogCapture();
  logs.push(capture);
  const svc = await startIdentity(config, capture);
  try {
    return await check(svc);
  } finally {
    await svc.close();
  }
}

async function counts(config: Config) {
  const pool = rawPool(config);
  try {
    const n = async (q: string) => (await pool.query<{ n: number }>(q)).rows[0]!.n;
    return {
      users: await n("SELECT count(*)::int AS n FROM users"),
      owners: await n("SELECT count(*)::int AS n FROM memberships WHERE role = 'owner'"),
      orgs: await n("SELECT count(*)::int AS n FROM orgs"),
    };
  } finally {
    await pool.end();
  }
}

const roleIn = async (svc: RunningIdentity, email: string, password: string) => {
  const { user } = await svc.identity.authenticate({ email, password });
  return (await svc.identity.getUser({ userId: user!.id })).memberships.map((m) => [m.orgName, m.role]);
};

afterAll(async () => {
  for (const config of configs) await cleanUp(config);
  const text = logs.map((l) => l.text()).join("");
  for (const password of passwords) expect(text).not.toContain(password);
});

describe("bootstrap admin", () => {
  it("is an owner of the default org, created once across restarts and replicas starting together", async () => {
    const { config, admin } = adminConfig();
    await withService(config, async (svc) => {
      expect(await roleIn(svc, admin.email, admin.password)).toEqual([["default", Role.OWNER]]);
    });
    const replicas = await Promise.all([startIdentity(config), startIdentity(config), startIdentity(config)]);
    await Promise.all(replicas.map((r) => r.close()));
    expect(await counts(config)).toEqual({ users: 1, owners: 1, orgs: 1 });
    await withService(config, async (svc) => {
      expect(svc.logs.text()).toContain("bootstrap admin already present");
    });
  });

  it("takes a new password from the environment and restores a demoted admin's ownership", async () => {
    const { config, admin } = adminConfig();
    const other = randomPassword();
    await withService(config, async (svc) => {
      const orgId = (await svc.identity.getUser({ userId: (await svc.identity.authenticate(admin)).user!.id }))
        .memberships[0]!.orgId;
      const { token } = await svc.identity.createInvitation({ orgId, email: "second@herald.test", role: Role.OWNER });
      const second = (await svc.identity.acceptInvitation({ token, password: other })).user!;
      const adminId = (await svc.identity.authenticate(admin)).user!.id;
      await svc.identity.updateMemberRole({ orgId, userId: adminId, role: Role.VIEWER });
      expect(second.id).not.toBe(adminId);
    });

    const changed = { ...config, bootstrapAdminPassword: randomPassword(30) };
    await withService(changed, async (svc) => {
      expect(await roleIn(svc, admin.email, changed.bootstrapAdminPassword!)).toEqual([["default", Role.OWNER]]);
      const old = await failure(svc.identity.authenticate(admin));
      expect(old.code).toBe(Code.Unauthenticated);
    });
  });

  it("makes a new email an owner while other users exist", async () => {
    const { config, admin } = adminConfig();
    await withService(config, async () => undefined);
    const next = {
      ...config,
      bootstrapAdminEmail: "Second.Admin@Herald.Test",
      bootstrapAdminPassword: randomPassword(),
    };
    await withService(next, async (svc) => {
      expect(await roleIn(svc, "second.admin@herald.test", next.bootstrapAdminPassword!)).toEqual([
        ["default", Role.OWNER],
      ]);
      expect(await roleIn(svc, admin.email, admin.password)).toEqual([["default", Role.OWNER]]);
    });
    expect(await counts(config)).toEqual({ users: 2, owners: 2, orgs: 1 });
  });

  it("refuses half a configuration or a weak password, naming the variables and never the values", async () => {
    const password = "short-pw";
    const cases: Partial<Config>[] = [
      { bootstrapAdminEmail: "a@herald.test" },
      { bootstrapAdminPassword: randomPassword() },
      { bootstrapAdminEmail: "a@herald.test", bootstrapAdminPassword: password },
      { bootstrapAdminEmail: "not an email", bootstrapAdminPassword: randomPassword() },
    ];
    for (const overrides of cases) {
      const err = await startIdentity(testConfig(overrides)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/HERALD_BOOTSTRAP_ADMIN_(EMAIL|PASSWORD)/);
      expect((err as Error).message).not.toContain(password);
      if (overrides.bootstrapAdminPassword)
        expect((err as Error).message).not.toContain(overrides.bootstrapAdminPassword);
    }
  });
});
