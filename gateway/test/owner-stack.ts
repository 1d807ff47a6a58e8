import { randomUUID } from "node:crypto";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient } from "@herald/runtime";
import type { AppConfig } from "../src/app.js";
import type { IdentityClient } from "../src/backends.js";
import { gatewayConfig, startBackends, startGateway, type Backends, type TestGateway } from "./harness.js";
import { bootstrapOwner, type Member, newPassword, SessionTokens } from "./session-tokens.js";

/** The backends, a gateway and the bootstrap admin signed in as its organization's owner. */
export interface OwnerStack {
  backends: Backends;
  gw: TestGateway;
  identity: IdentityClient;
  tokens: SessionTokens;
  owner: Member & { orgId: string };
  stop(): Promise<void>;
}

/**
 * Where the suites about people start (members, roles, client keys, isolation, fuzzing):
 * the backends with a bootstrap admin, a gateway (with `overrides`), an IdentityService
 * client, session tokens of the gateway's issuer, and the admin's owner session.
 */
export async function startOwnerStack(overrides: Partial<AppConfig> = {}): Promise<OwnerStack> {
  const admin = { email: `owner-${randomUUID().slice(0, 8)}@example.com`, password: newPassword() };
  const backends = await startBackends({ bootstrapAdmin: admin });
  let gw: TestGateway | undefined;
  const identity = createRpcClient(IdentityService, backends.credentialUrl);
  const stop = async () => {
    await gw?.close();
    identity.close();
    await backends.stop();
  };
  try {
    gw = await startGateway(backends, overrides);
    const tokens = new SessionTokens(identity.client, gatewayConfig().publicUrl);
    const owner = await bootstrapOwner(identity.client, tokens, admin);
    return { backends, gw, identity: identity.client, tokens, owner, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
