import type { Logger } from "@herald/runtime";
import { displayPrefix, hashSecret } from "./api-key-secret.js";
import type { CredentialStore } from "./store.js";

export const DEFAULT_ORG = "default";

/**
 * Makes sure the default org exists and, when HERALD_BOOTSTRAP_API_KEY is set, that an
 * org-scoped key with that secret exists: the first key of a fresh install. Both
 * inserts are ON CONFLICT, so restarts and replicas starting together never duplicate
 * them. A bootstrap key that was revoked stays revoked.
 */
export async function bootstrap(
  store: CredentialStore,
  bootstrapSecret: string | undefined,
  log: Logger,
): Promise<void> {
  const orgId = await store.ensureOrg(DEFAULT_ORG);
  if (bootstrapSecret === undefined) return;
  const created = await store.ensureApiKey({
    orgId,
    appId: null,
    scope: "org",
    name: "bootstrap",
    prefix: displayPrefix(bootstrapSecret),
    secretHash: hashSecret(bootstrapSecret),
    rateLimitPerMinute: null,
  });
  log.info({ orgId }, created ? "bootstrap API key created" : "bootstrap API key already present");
}
