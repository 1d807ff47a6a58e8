import { randomInt } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient } from "@herald/runtime";
import type { Config } from "../src/config.js";
import type { LogCapture } from "../../../test/support/log-capture.js";
import { cleanUp, startService, testConfig } from "./harness.js";

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

/** The ConnectError a call failed with; fails the test if it succeeded. */
export const failure = (p: Promise<unknown>): Promise<ConnectError> =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => ConnectError.from(e),
  );

/** A config with a bootstrap admin, and the admin's credentials. */
export function adminConfig(overrides: Partial<Config> = {}) {
  const admin = { email: `admin.${randomInt(1e9)}@herald.test`, password: randomPassword(24) };
  const config = testConfig({ bootstrapAdminEmail: admin.email, bootstrapAdminPassword: admin.password, ...overrides });
  return { config, admin };
}

export { cleanUp, testConfig };
