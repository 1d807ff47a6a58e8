import type { Adapter } from "./adapter.js";

/**
 * The organization a grant acts in, chosen at sign-in. oidc-provider's Grant has no room
 * for it, so it is a model of its own in the same storage, keyed and revoked by the grant
 * id: tokens refreshed from the grant keep their org, and revoking the grant (sign-out,
 * a reused code or refresh token) drops it too.
 */
export class GrantOrgs {
  constructor(private readonly adapter: Adapter) {}

  async set(grantId: string, orgId: string, ttlSeconds: number): Promise<void> {
    await this.adapter.upsert(grantId, { grantId, orgId }, ttlSeconds);
  }

  async get(grantId: string): Promise<string | undefined> {
    const payload = await this.adapter.find(grantId);
    return typeof payload?.orgId === "string" ? payload.orgId : undefined;
  }
}
