import { Code, ConnectError } from "@connectrpc/connect";
import type Provider from "oidc-provider";
import type { IdentityClient } from "../backends.js";
import type { Adapter } from "./adapter.js";
import type { GrantOrgs } from "./grant-orgs.js";
import { contentSecurityPolicy, logoutPage, messagePage, PAGE_HEADERS } from "./pages.js";
import { roleName } from "./member-role-names.js";
import { cookieKeys, type KeySet } from "./signing-keys.js";

/** The console's own client: static configuration, not a row (see identity.proto). */
export const CONSOLE_CLIENT_ID = "herald-console";
const DAY = 24 * 60 * 60;
/** How long a sign-in lasts: the grant, its refresh tokens and the browser session. */
export const GRANT_TTL_SECONDS = 14 * DAY;
const INTERACTION_TTL_SECONDS = 10 * 60;

/** The paths oidc-provider serves; everything else of the sign-in is the gateway's own. */
export const OAUTH_ROUTES = {
  authorization: "/oauth/auth",
  token: "/oauth/token",
  jwks: "/oauth/jwks",
  revocation: "/oauth/token/revocation",
  end_session: "/oauth/session/end",
  introspection: "/oauth/token/introspection",
  userinfo: "/oauth/me",
  registration: "/oauth/reg",
  pushed_authorization_request: "/oauth/request",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
  credential: "/oauth/credential",
};

export const interactionPath = (uid: string) => `/oauth/interaction/${uid}`;

/** The audience of access tokens: the REST API. */
export const apiResource = (issuer: string) => `${issuer}/v1`;

export interface ProviderOptions {
  issuer: string;
  keys: KeySet;
  adapter: new (name: string) => Adapter;
  identity: IdentityClient;
  grantOrgs: GrantOrgs;
  accessTokenTtlSeconds: number;
}

const notFound = (err: unknown) => err instanceof ConnectError && err.code === Code.NotFound;

// oidc-provider's context is untyped here; these hooks read only what they name.
// biome-ignore lint/suspicious/noExplicitAny: oidc-provider's Koa context has no published types
type Ctx = any;

function sendPage(ctx: Ctx, html: string, formTargets: string[] = []): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.set(name, value);
  ctx.set("content-security-policy", contentSecurityPolicy(formTargets));
  ctx.body = html;
}

/**
 * oidc-provider, with koa under it, loaded with the first provider: a gateway that only
 * ever sees API keys never loads it (a gateway at rest is some 8 MB smaller without it);
 * the first sign-in of a gateway process waits for it once.
 */
let oidcProvider: Promise<typeof import("oidc-provider")> | undefined;

/**
 * The OAuth 2.1 authorization server (panva's oidc-provider) as Herald configures it:
 * authorization code with PKCE S256 for every client, all of them public; exact redirect
 * URIs; access tokens are ES256 JWTs for the REST API (audience `${issuer}/v1`) carrying
 * the org and role chosen at sign-in; refresh tokens rotate on every use and a reused one
 * revokes its grant; revocation (RFC 7009). Sign-in and consent are the gateway's pages
 * (interactions.ts). One instance per signing-key set (oauth-server.ts swaps them).
 */
export async function createProvider(o: ProviderOptions): Promise<Provider> {
  const { default: Provider, errors } = await (oidcProvider ??= import("oidc-provider"));
  const resource = apiResource(o.issuer);
  const { identity, grantOrgs } = o;

  const provider = new Provider(o.issuer, {
    adapter: o.adapter,
    clients: [
      {
        client_id: CONSOLE_CLIENT_ID,
        client_name: "Herald console",
        redirect_uris: [`${o.issuer}/console/callback`],
        post_logout_redirect_uris: [`${o.issuer}/console/`],
      },
    ],
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "ES256",
    },
    clientAuthMethods: ["none"],
    // Browsers may call the token and revocation endpoints from a client's redirect origin.
    clientBasedCORS: (_ctx: Ctx, origin: string, client: { redirectUris: string[] }) =>
      origin !== "null" && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    jwks: { keys: o.keys.keys.map((k) => k.privateJwk) },
    cookies: {
      keys: cookieKeys(o.keys),
      names: { session: "herald_session", interaction: "herald_interaction", resume: "herald_resume" },
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    responseTypes: ["code"],
    pkce: { required: () => true },
    scopes: ["openid", "offline_access"],
    claims: { openid: ["sub"], email: ["email"], profile: ["name"] },
    extraParams: ["org_id"],
    allowOmittingSingleRegisteredRedirectUri: false,
    enabledJWA: { idTokenSigningAlgValues: ["ES256"] },
    routes: OAUTH_ROUTES,
    features: {
      devInteractions: { enabled: false },
      // A client revokes only its own tokens (revoking a refresh token ends its grant).
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx: Ctx, client: { clientId: string }, token: { clientId: string }) =>
          token.clientId === client.clientId,
      },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: Ctx, form: string) => sendPage(ctx, logoutPage(form)),
        postLogoutSuccessSource: async (ctx: Ctx) =>
          sendPage(
            ctx,
            messagePage({
              title: "Signed out",
              message: "You are signed out of Herald.",
              link: { href: "/console/", text: "Back to the console" },
            }),
          ),
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: Ctx, indicator: string) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`the only resource is ${resource}`);
          return {
            scope: "",
            audience: resource,
            accessTokenTTL: o.accessTokenTtlSeconds,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
    interactions: { url: async (_ctx: Ctx, interaction: { uid: string }) => interactionPath(interaction.uid) },
    ttl: {
      AccessToken: o.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: o.accessTokenTtlSeconds,
      Interaction: INTERACTION_TTL_SECONDS,
      Grant: GRANT_TTL_SECONDS,
      Session: GRANT_TTL_SECONDS,
      RefreshToken: GRANT_TTL_SECONDS,
    },
    // Every refresh rotates the refresh token (OAuth 2.1 for public clients), and every
    // grant gets one: the console keeps its sign-in without asking for prompt=consent.
    rotateRefreshToken: () => true,
    issueRefreshToken: async (_ctx: Ctx, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed("refresh_token"),
    expiresWithSession: async () => false,

    findAccount: async (_ctx: Ctx, sub: string) => {
      try {
        const { user } = await identity.getUser({ userId: sub });
        if (!user) return undefined;
        return {
          accountId: user.id,
          claims: async () => ({ sub: user.id, email: user.email, name: user.name }),
        };
      } catch (err) {
        if (notFound(err)) return undefined;
        throw err;
      }
    },

    // The org chosen at sign-in and the member's current role there. A member removed
    // since cannot refresh into a new token.
    extraTokenClaims: async (_ctx: Ctx, token: { kind: string; grantId?: string; accountId?: string }) => {
      if (token.kind !== "AccessToken" || !token.grantId || !token.accountId) return undefined;
      const orgId = await grantOrgs.get(token.grantId);
      if (!orgId) throw new errors.InvalidGrant("the grant has no organization");
      try {
        const { membership } = await identity.getMembership({ orgId, userId: token.accountId });
        const role = membership && roleName(membership.role);
        if (!role) throw new errors.InvalidGrant("no longer a member of the organization");
        return { org_id: orgId, role, grant_id: token.grantId };
      } catch (err) {
        if (notFound(err)) throw new errors.InvalidGrant("no longer a member of the organization");
        throw err;
      }
    },

    // A request for another org than the session's grant was made for needs a new grant
    // (the consent step, which checks the membership).
    loadExistingGrant: async (ctx: Ctx) => {
      const fromInteraction = ctx.oidc.result?.consent?.grantId as string | undefined;
      const grantId = fromInteraction ?? ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (!grantId) return undefined;
      const requestedOrg = ctx.oidc.params.org_id as unknown;
      if (!fromInteraction && typeof requestedOrg === "string" && requestedOrg) {
        if ((await grantOrgs.get(grantId)) !== requestedOrg.toLowerCase()) return undefined;
      }
      return ctx.oidc.provider.Grant.find(grantId);
    },

    renderError: async (ctx: Ctx, out: { error: string; error_description?: string }) => {
      sendPage(
        ctx,
        messagePage({
          title: "Sign-in failed",
          message: out.error_description ? `${out.error}: ${out.error_description}` : out.error,
          isError: true,
        }),
      );
    },
  });
  return provider;
}
