import type { Logger } from "@herald/runtime/service";
import { readBody, sendJson } from "../http-util.js";
import type { ProviderHandler, ProviderRequest, ProviderResponse } from "../platform.js";
import { JWT_BEARER_GRANT, verifyAssertion, type AccessTokenStore, type OAuthRefusal } from "./oauth.js";
import type { ServiceAccountStore } from "./service-accounts.js";

export const TOKEN_PATH = "/token";
/** An assertion is a few hundred bytes; anything near this is not one. */
const MAX_BODY = 64 * 1024;

/**
 * The OAuth 2.0 token endpoint a service account's `token_uri` points at (Google's is
 * oauth2.googleapis.com/token): exchanges a JWT-bearer assertion for an access token.
 * HTTP/1.1 and HTTP/2 alike, as Google's client libraries use either. Not a push
 * provider itself, so faults never apply to it.
 */
export class TokenEndpoint implements ProviderHandler {
  readonly platform = null;

  constructor(
    private readonly deps: {
      accounts: ServiceAccountStore;
      tokens: AccessTokenStore;
      /** The URL assertions must name as `aud`. */
      tokenUri: string;
      ttlS: number;
      log: Logger;
      now?: () => number;
    },
  ) {}

  owns(pathname: string): boolean {
    return pathname === TOKEN_PATH;
  }

  async handle(req: ProviderRequest, res: ProviderResponse): Promise<void> {
    const refusal = await this.exchange(req, res);
    if (refusal) {
      this.deps.log.debug({ status: refusal.status, error: refusal.error }, "oauth token request refused");
      sendJson(
        res,
        refusal.status,
        { error: refusal.error, error_description: refusal.description },
        { "cache-control": "no-store" },
      );
    }
  }

  refuseWithFault(): void {
    throw new Error("the token endpoint is never faulted");
  }

  /** Answers the token on success; returns the refusal otherwise. */
  private async exchange(req: ProviderRequest, res: ProviderResponse): Promise<OAuthRefusal | undefined> {
    if (req.method !== "POST") return { status: 405, error: "invalid_request", description: "Use POST." };
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/x-www-form-urlencoded") {
      return {
        status: 400,
        error: "invalid_request",
        description: "Content-Type must be application/x-www-form-urlencoded.",
      };
    }
    const body = await readBody(req, MAX_BODY);
    if (body.tooLarge) return { status: 400, error: "invalid_request", description: "Request body too large." };
    const form = new URLSearchParams(body.bytes.toString("utf8"));
    const grantType = form.get("grant_type");
    if (!grantType)
      return { status: 400, error: "invalid_request", description: "Missing required parameter: grant_type" };
    if (grantType !== JWT_BEARER_GRANT) {
      return {
        status: 400,
        error: "unsupported_grant_type",
        description: `Invalid grant_type: ${grantType.slice(0, 100)}`,
      };
    }
    const assertion = form.get("assertion");
    if (!assertion)
      return { status: 400, error: "invalid_request", description: "Missing required parameter: assertion" };

    const nowMs = (this.deps.now ?? Date.now)();
    const checked = await verifyAssertion(assertion, this.deps.accounts, this.deps.tokenUri, Math.floor(nowMs / 1000));
    if (!checked.ok) return checked.refusal;
    const accessToken = this.deps.tokens.issue(checked.account, this.deps.ttlS, nowMs);
    sendJson(
      res,
      200,
      { access_token: accessToken, expires_in: this.deps.ttlS, token_type: "Bearer" },
      { "cache-control": "no-store" },
    );
    return undefined;
  }
}
