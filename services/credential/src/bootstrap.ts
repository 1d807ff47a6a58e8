import type { Logger } from "@herald/runtime";
import { displayPrefix, hashSecret } from "./api-key-secret.js";
import type { IdentityStore } from "./identity-store.js";
import { normaliseEmail } from "./password-policy.js";
import { hashPassword, verifyPassword } from "./passwords.js";
import type { CredentialStore } from "./credential-store.js";

export const DEFAULT_ORG = "default";

/**
 * Makes sure the bootstrap org exists (found by its flag, so renaming it is fine) and,
 * when HERALD_BOOTSTRAP_API_KEY is set, that an org-scoped key with that secret exists:
 * the first key of a fresh install. Both inserts are ON CONFLICT, so restarts and
 * replicas starting together never duplicate them. A bootstrap key that was revoked
 * stays revoked. Returns the bootstrap org's id.
 */
export async function bootstrap(
  store: CredentialStore,
  identity: IdentityStore,
  bootstrapSecret: string | undefined,
  log: Logger,
): Promise<string> {
  const orgId = await identity.ensureBootstrapOrg(DEFAULT_ORG);
  if (bootstrapSecret === undefined) return orgId;
  const created = await store.ensureApiKey({
    orgId,
    appId: null,
    scope: "org",
    kind: "server",
    name: "bootstrap",
    prefix: displayPrefix(bootstrapSecret),
    secretHash: hashSecret(bootstrapSecret),
    rateLimitPerMinute: null,
  });
  log.info({ orgId }, created ? "bootstrap API key created" : "bootstrap API key already present");
  return orgId;
}

/**
 * Makes sure the bootstrap admin (HERALD_BOOTSTRAP_ADMIN_EMAIL/_PASSWORD) exists with that
 * password and owns the default org, also when other users exist. The user insert is ON
 * CONFLICT and the membership an upsert, so replicas starting together end with one user
 * and one membership; the password is rehashed only when it no longer verifies (two
 * replicas may both rehash, and either hash verifies). The password is never logged.
 */
export async function bootstrapAdmin(
  identity: IdentityStore,
  orgId: string,
  admin: { email: string; password: string },
  log: Logger,
): Promise<void> {
  const email = normaliseEmail(admin.email)!;
  let user = await identity.findUserByEmail(email);
  let outcome = "bootstrap admin already present";
  if (!user) {
    const created = await identity.createUser({
      email,
      name: "Admin",
      passwordHash: await hashPassword(admin.password),
    });
    if (created) outcome = "bootstrap admin created";
    user = await identity.findUserByEmail(email);
  }
  if (!user) throw new Error("bootstrap admin vanished while being created");
  if (!(await verifyPassword(user.passwordHash, admin.password))) {
    await identity.setPasswordHash(user.id, await hashPassword(admin.password));
    outcome = "bootstrap admin password reset from the environment";
  }
  await identity.ensureOwner(orgId, user.id);
  log.info({ orgId, userId: user.id }, outcome);
}
