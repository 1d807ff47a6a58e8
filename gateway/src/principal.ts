import { ApiKeyKind, KeyScope, type Principal as ProtoPrincipal } from "@herald/proto/credential";

/** A member's role in an organization, strongest first (see proto/herald/v1/identity.proto). */
export type Role = "owner" | "admin" | "developer" | "viewer";

/** An API key's kind: server keys have their scope's rights, client keys only what gateway/src/client-key-policy.ts allows. */
export type KeyKind = "server" | "client";

/** Who is calling, whether by API key or by session JWT. */
export interface Principal {
  orgId: string;
  scope: "org" | "app";
  /** The one app an app-scoped principal may touch. */
  appId?: string;
  /** What the rate limit counts against: the key id, or `jwt:<sub>`. */
  identity: string;
  rateLimitPerMinute: number;
  /**
   * Session principals only: the signed-in user and their role in orgId. An API key has
   * neither and acts with the full rights of its scope.
   */
  userId?: string;
  role?: Role;
  /** API keys only. A client key is always app-scoped. */
  keyKind?: KeyKind;
}

export function fromApiKeyPrincipal(p: ProtoPrincipal, defaultLimit: number): Principal {
  const app = p.scope === KeyScope.APP;
  if (app && !p.appId) throw new Error("app-scoped principal without app id");
  const keyKind: KeyKind = p.kind === ApiKeyKind.CLIENT ? "client" : "server";
  if (keyKind === "client" && !app) throw new Error("client key principal that is not app-scoped");
  return {
    orgId: p.orgId,
    scope: app ? "app" : "org",
    ...(app ? { appId: p.appId } : {}),
    identity: `key:${p.keyId}`,
    rateLimitPerMinute: p.rateLimitPerMinute || defaultLimit,
    keyKind,
  };
}
