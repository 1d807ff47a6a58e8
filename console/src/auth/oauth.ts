import * as oauth from "oauth4webapi";

/**
 * The console's side of OAuth 2.1: authorization code with PKCE (S256) against the
 * gateway's own authorization server, found through its RFC 8414 metadata. The console
 * is the public client `herald-console`; its redirect URI is registered as
 * `${HERALD_PUBLIC_URL}/console/callback`, so it signs in from that origin only.
 */
export const CLIENT_ID = "herald-console";
export const SCOPE = "openid offline_access";

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

interface PendingAuthorization {
  verifier: string;
  state: string;
  returnTo: string;
}

const PENDING_KEY = "herald.console.authorization";
const redirectUri = () => `${location.origin}/console/callback`;
const options = () => ({ [oauth.allowInsecureRequests]: location.protocol === "http:" });

let metadata: Promise<oauth.AuthorizationServer> | undefined;

/** The authorization server's metadata, fetched once per page load. */
export function authorizationServer(): Promise<oauth.AuthorizationServer> {
  metadata ??= (async () => {
    const issuer = new URL(location.origin);
    const response = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...options() });
    try {
      return await oauth.processDiscoveryResponse(issuer, response);
    } catch (err) {
      if (err instanceof oauth.OperationProcessingError && err.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
        throw new Error(`This console signs in on its issuer's own address: open ${issuerOf(err)}/console instead.`);
      }
      throw err;
    }
  })();
  metadata.catch(() => {
    metadata = undefined;
  });
  return metadata;
}

function issuerOf(err: oauth.OperationProcessingError): string {
  const body = (err.cause as { body?: { issuer?: unknown } } | undefined)?.body;
  return typeof body?.issuer === "string" ? body.issuer.replace(/\/$/, "") : "the gateway's public URL";
}

function clientFor(as: oauth.AuthorizationServer): oauth.Client {
  // The ID token is signed with the issuer's ES256 keys; say so when the metadata does not.
  return as.id_token_signing_alg_values_supported
    ? { client_id: CLIENT_ID }
    : { client_id: CLIENT_ID, id_token_signed_response_alg: "ES256" };
}

/** Sends the browser to the authorization endpoint; `forceLogin` after an explicit sign-out. */
export async function startSignIn(returnTo: string, forceLogin = false): Promise<never> {
  const as = await authorizationServer();
  if (!as.authorization_endpoint) throw new Error("the authorization server has no authorization_endpoint");
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pending: PendingAuthorization = { verifier, state, returnTo };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: redirectUri(),
    response_type: "code",
    scope: SCOPE,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    ...(forceLogin ? { prompt: "login" } : {}),
  }).toString();
  location.assign(url.href);
  return new Promise<never>(() => {});
}

/** On /console/callback: checks state, redeems the code with the PKCE verifier. */
export async function completeSignIn(callbackUrl: URL): Promise<{ tokens: TokenSet; returnTo: string }> {
  const raw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  if (!raw) throw new Error("This sign-in was not started here (or was already completed). Sign in again.");
  const pending = JSON.parse(raw) as PendingAuthorization;
  const as = await authorizationServer();
  const client = clientFor(as);
  const params = oauth.validateAuthResponse(as, client, callbackUrl, pending.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri(),
    pending.verifier,
    options(),
  );
  const result = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { tokens: tokenSet(result), returnTo: pending.returnTo };
}

/** Redeems the refresh token (which rotates: the answer carries the next one). */
export async function refresh(refreshToken: string): Promise<TokenSet> {
  const as = await authorizationServer();
  const client = clientFor(as);
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, options());
  const result = await oauth.processRefreshTokenResponse(as, client, response);
  return tokenSet(result, refreshToken);
}

/** RFC 7009: the refresh token (and with it the grant) stops working. */
export async function revoke(token: string): Promise<void> {
  const as = await authorizationServer();
  if (!as.revocation_endpoint) return;
  const client = clientFor(as);
  const response = await oauth.revocationRequest(as, client, oauth.None(), token, options());
  await oauth.processRevocationResponse(response);
}

function tokenSet(result: oauth.TokenEndpointResponse, previousRefresh?: string): TokenSet {
  const lifetime = (result.expires_in ?? 900) * 1000;
  const refreshToken = result.refresh_token ?? previousRefresh;
  return {
    accessToken: result.access_token,
    ...(refreshToken ? { refreshToken } : {}),
    ...(result.id_token ? { idToken: result.id_token } : {}),
    expiresAt: Date.now() + lifetime,
  };
}

/** Readable text for what went wrong during sign-in (RFC 6749 errors carry a description). */
export function signInErrorMessage(err: unknown): string {
  if (err instanceof oauth.AuthorizationResponseError || err instanceof oauth.ResponseBodyError) {
    return err.error_description ? `${err.error}: ${err.error_description}` : err.error;
  }
  return err instanceof Error ? err.message : String(err);
}
