import { randomUUID } from "node:crypto";
import { IdentityService } from "@herald/proto/identity";
import { createRpcClient } from "@herald/runtime";
import type { AppConfig } from "../src/app.js";
import type { IdentityClient } from "../src/backends.js";
import { type GatewayStack, gatewayConfig, startGatewayStack } from "./harness.js";
import { bootstrapOwner, type Member, newPassword, SessionTokens } from "./session-tokens.js";

/** The backends, a gateway and the bootstrap admin signed in as its organization's owner. */
export interface OwnerStack extends GatewayStack {
  identity: IdentityClient;
  tokens: SessionTokens;
  owner: Member & { orgId: string };
}

/**
 * Where the suites about people start (members, roles, client keys, isolation, fuzzing):
 * the backends with a bootstrap admin, a gateway (with `overrides`), an IdentityService
 * client, session tokens of the gateway's issuer, and the admin's owner session.
 */
export async function startOwnerStack(overrides: Partial<AppConfig> = {}): Promise<OwnerStack> {
  const admin = { email: `owner-${randomUUID().slice(0, 8)}@example.com`, password: newPassword() };
  const stack = await startGatewayStack(overrides, { bootstrapAdmin: admin });
  const identity = createRpcClient(IdentityService, stack.backends.credentialUrl);
  const stop = async () => {
    identity.close();
    await stack.stop();
  };
  try {
    const tokens = new SessionTokens(identity.client, gatewayConfig().publicUrl);
    const owner = await bootstrapOwner(identity.client, tokens, admin);
    return { ...stack, identity: identity.client, tokens, owner, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
