import { randomBytes } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AcceptInvitationResponse, PeekInvitationResponse } from "@herald/proto/identity";
import type { IdentityClient } from "../backends.js";
import { checkCsrf, csrfToken } from "./csrf.js";
import type { LoginThrottle } from "./login-throttle.js";
import type { OAuthServer } from "./oauth-server.js";
import { contentSecurityPolicy, invitationPage, messagePage, PAGE_HEADERS } from "./pages.js";
import { roleName } from "./member-role-names.js";

export interface InvitationPageDeps {
  server: OAuthServer;
  identity: IdentityClient;
  throttle: LoginThrottle;
  clientAddress: (request: FastifyRequest) => string;
}

const PATH = "/invitations/accept";
/** The double-submit cookie of the accept form: random, HttpOnly, only sent to this path. */
const NONCE_COOKIE = "herald_invite_csrf";

type Form = Record<string, string | string[] | undefined>;
const field = (source: unknown, name: string): string => {
  const value = (source as Form | undefined)?.[name];
  return typeof value === "string" ? value : "";
};

const connectCode = (err: unknown) => (err instanceof ConnectError ? err.code : undefined);

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .headers({ ...PAGE_HEADERS, "content-security-policy": contentSecurityPolicy() })
    .send(html);
}

const gone = (reply: FastifyReply) =>
  sendPage(
    reply,
    404,
    messagePage({
      title: "Invitation not valid",
      message: "This invitation link is unknown, already used, revoked or expired. Ask for a new one.",
      isError: true,
    }),
  );

function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

/**
 * The page an invitation link opens: GET shows the organization and role with a password
 * field ("Name" too for a new user), POST accepts (AcceptInvitation) and links to the
 * console. CSRF: a random cookie and a form field that is its HMAC (double submit). An
 * existing user confirming with their password goes through the sign-in brute-force limits.
 */
export function registerInvitationPages(app: FastifyInstance, deps: InvitationPageDeps): void {
  const { identity, server, throttle } = deps;
  const secure = server.issuer.startsWith("https:");

  /** What the token is for; undefined when it is unknown, used, revoked or expired. */
  const peekOf = async (token: string): Promise<PeekInvitationResponse | undefined> => {
    try {
      return await identity.peekInvitation({ token });
    } catch (err) {
      const code = connectCode(err);
      if (code === Code.NotFound || code === Code.InvalidArgument) return undefined;
      throw err;
    }
  };

  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    status: number,
    extra: { error?: string; name?: string } = {},
  ) => {
    const peek = await peekOf(token);
    if (!peek) return gone(reply);
    const invitation = peek.invitation;
    if (!invitation || (invitation.expiresAt && timestampDate(invitation.expiresAt).getTime() <= Date.now()))
      return gone(reply);
    const nonce = readCookie(request, NONCE_COOKIE) || randomBytes(24).toString("base64url");
    reply.header(
      "set-cookie",
      `${NONCE_COOKIE}=${nonce}; Path=${PATH}; HttpOnly; SameSite=Strict; Max-Age=3600${secure ? "; Secure" : ""}`,
    );
    const { cookieKeys } = await server.instance();
    return sendPage(
      reply,
      status,
      invitationPage({
        action: PATH,
        csrf: csrfToken(cookieKeys, "invitation", nonce),
        token,
        orgName: peek.orgName,
        role: roleName(invitation.role) ?? "member",
        email: invitation.email,
        userExists: peek.userExists,
        ...extra,
      }),
    );
  };

  app.get<{ Querystring: Record<string, unknown> }>(PATH, async (request, reply) => {
    const token = field(request.query, "token");
    if (!token || token.length > 512) return gone(reply);
    return render(request, reply, token, 200);
  });

  app.post(PATH, async (request, reply) => {
    const token = field(request.body, "token");
    const password = field(request.body, "password");
    const name = field(request.body, "name").trim();
    if (!token || token.length > 512) return gone(reply);
    const nonce = readCookie(request, NONCE_COOKIE);
    const { cookieKeys } = await server.instance();
    if (!nonce || !checkCsrf(cookieKeys, "invitation", nonce, field(request.body, "csrf")))
      return render(request, reply, token, 403, { error: "This form has expired. Please try again.", name });
    if (!password) return render(request, reply, token, 400, { error: "Enter a password.", name });

    const peek = await peekOf(token);
    if (!peek) return gone(reply);
    const email = peek.invitation?.email ?? "";
    const address = deps.clientAddress(request);
    if (peek.userExists) {
      const decision = await throttle.attempt(email, address);
      if (!decision.allowed) {
        reply.header("retry-after", String(decision.retryAfterSeconds));
        return render(request, reply, token, 429, {
          error: `Too many attempts. Try again in ${decision.retryAfterSeconds} seconds.`,
        });
      }
    }

    let accepted: AcceptInvitationResponse;
    try {
      accepted = await identity.acceptInvitation({ token, password, name });
    } catch (err) {
      const code = connectCode(err);
      if (code === Code.NotFound) return gone(reply);
      if (code === Code.Unauthenticated) {
        await throttle.failed(address);
        return render(request, reply, token, 401, { error: "Incorrect password for this account." });
      }
      if (code === Code.InvalidArgument) {
        const message = (err as ConnectError).rawMessage;
        return render(request, reply, token, 400, { error: `The password was not accepted: ${message}`, name });
      }
      throw err;
    }
    if (peek.userExists) await throttle.succeeded(email);
    const orgName = accepted.membership?.orgName || peek.orgName;
    const role = accepted.membership ? roleName(accepted.membership.role) : undefined;
    return sendPage(
      reply,
      200,
      messagePage({
        title: "Invitation accepted",
        message: `You are now a member of ${orgName}${role ? ` with the role ${role}` : ""}.`,
        link: { href: "/console", text: "Continue to the console" },
      }),
    );
  });
}
