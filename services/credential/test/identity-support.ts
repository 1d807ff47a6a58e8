import { randomInt } from "node:crypto";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient } from "@herald/runtime";
import { expect } from "vitest";
import type { Config } from "../src/config.js";
import type { LogCapture } from "../../../test/support/log-capture.js";
import { cleanUp, failure, serviceFixture, startService, testConfig } from "./harness.js";

/** The credential service with an IdentityService client beside the CredentialService one. */
export async function startIdentity(config: Config, logs?: LogCapture) {
  const running = await startService(config, logs);
  const rpc = createRpcClient(IdentityService, `http://127.0.0.1:${running.app.port}`);
  return {
    ...running,
    identity: rpc.client,
    close: async () => {
      rpc.close();
      await running.close();
    },
  };
}
export type RunningIdentity = Awaited<ReturnType<typeof startIdentity>>;

const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** A random alphanumeric password of that length (20 sits inside the policy's 12 to 256, src/password-policy.ts). */
export const randomPassword = (length = 20): string =>
  Array.from({ length }, () => ALNUM[randomInt(ALNUM.length)]).join("");

/** A config with a bootstrap admin, and the admin's credentials. */
export function adminConfig(overrides: Partial<Config> = {}) {
  const admin = { email: `admin.${randomInt(1e9)}@herald.test`, password: randomPassword(24) };
  const config = testConfig({ bootstrapAdminEmail: admin.email, bootstrapAdminPassword: admin.password, ...overrides });
  return { config, admin };
}

/**
 * The service of a test file with a bootstrap admin (adminConfig(overrides)): started before its
 * tests, stopped and its schema dropped after them; `svc` knows the admin's user id and org.
 * After the stop, its whole log must hold neither the admin's password nor any of `neverLogged`
 * (which the tests may add to as they go).
 */
export function useAdminIdentity(overrides: Partial<Config> = {}, opts: { neverLogged?: string[] } = {}) {
  const { config, admin } = adminConfig(overrides);
  const svc = serviceFixture(
    config,
    () => startIdentity(config),
    async (running) => {
      const adminId = (await running.identity.authenticate(admin)).user!.id;
      const orgId = (await running.identity.getUser({ userId: adminId })).memberships[0]!.orgId;
      return { ...running, adminId, orgId };
    },
    (stopped) => {
      const logs = stopped.logs.text();
      for (const secret of [admin.password, ...(opts.neverLogged ?? [])]) expect(logs).not.toContain(secret);
    },
  );
  return { config, admin, svc };
}

export { cleanUp, failure, testConfig };
