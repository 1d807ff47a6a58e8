import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { InteractionDetails } from "oidc-provider";
import type { IdentityClient } from "../backends.js";
import { checkCsrf, csrfToken } from "./csrf.js";
import type { LoginThrottle } from "./login-throttle.js";
import type { OAuthServer } from "./oauth-server.js";
import { chooseOrg } from "./org-choice.js";
import { consentPage, contentSecurityPolicy, messagePage, PAGE_HEADERS, signInPage } from "./pages.js";
import { apiResource, CONSOLE_CLIENT_ID, GRANT_TTL_SECONDS, interactionPath } from "./provider.js";

export interface InteractionDeps {
  server: OAuthServer;
  identity: IdentityClient;
  throttle: LoginThrottle;
  /** The client address the brute-force limit per address counts. */
  clientAddress: (request: FastifyRequest) => string;
}

/** The same words for an unknown email and a wrong password. */
const BAD_CREDENTIALS = "Incorrect email or password.";
const OIDC_SCOPES = new Set(["openid", "offline_access"]);
type Form = Record<string, string | string[] | undefined>;

const field = (body: unknown, name: string): string => {
  const value = (body as Form | undefined)?.[name];
  return typeof value === "string" ? value : "";
};

function sendPage(reply: FastifyReply, status: number, html: string, formTargets: string[] = []) {
  return reply
    .code(status)
    .headers({ ...PAGE_HEADERS, "content-security-policy": contentSecurityPolicy(formTargets) })
    .send(html);
}

const expired = (reply: FastifyReply) =>
  sendPage(
    reply,
    400,
    messagePage({
      title: "Sign-in expired",
      message: "This sign-in is no longer valid. Go back to the application and sign in again.",
      isError: true,
    }),
  );

/**
 * Hands the response to oidc-provider (which writes the 303 itself); a failure after the
 * hand-over still ends the response.
 */
async function finishWith(reply: FastifyReply, finish: () => Promise<void>): Promise<void> {
  reply.hijack();
  try {
    await finish();
  } catch (err) {
    reply.log.error({ err }, "could not finish the sign-in interaction");
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
    reply.raw.end("internal error");
  }
}

/** Where the authorization answer goes after the form: the form's CSP must allow it. */
const redirectOrigin = (details: InteractionDetails): string[] => {
  const origin = typeof details.params.redirect_uri === "string" ? URL.parse(details.params.redirect_uri)?.origin : "";
  return origin && origin !== "null" ? [origin] : [];
};

/**
 * The sign-in and consent steps of oidc-provider's interactions, on the gateway's origin:
 * GET shows the step, POST /login checks the password (CSRF token bound to the
 * interaction, brute-force limits, one error text for unknown email and wrong password),
 * POST /consent and /abort answer the consent step of a registered client. The console
 * is first-party: its consent is implied.
 */
export function registerInteractionRoutes(app: FastifyInstance, deps: InteractionDeps): void {
  const { server, identity, throttle } = deps;

  const load = async (request: FastifyRequest<{ Params: { uid: string } }>, reply: FastifyReply) => {
    const current = await server.instance();
    server.pin(request.raw);
    try {
      const details = await current.provider.interactionDetails(request.raw, reply.raw);
      if (details.uid !== request.params.uid) return undefined;
      return { current, details };
    } catch (err) {
      if ((err as { name?: string }).name === "SessionNotFound") return undefined;
      throw err;
    }
  };

  const clientName = async (clientId: string) => {
    const current = await server.instance();
    const client = await current.provider.Client.find(clientId);
    return client?.clientName ?? clientId;
  };

  /** Makes the grant of a chosen org and ends the interaction with it (and the login). */
  const grantAndFinish = async (
    request: FastifyRequest,
    reply: FastifyReply,
    details: InteractionDetails,
    accountId: string,
    orgId: string,
    withLogin: boolean,
  ) => {
    const { provider } = await server.instance();
    const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
    const requested = typeof details.params.scope === "string" ? details.params.scope.split(" ") : [];
    const scope = requested.filter((s) => OIDC_SCOPES.has(s)).join(" ");
    if (scope) grant.addOIDCScope(scope);
    grant.addResourceScope(apiResource(server.issuer), "");
    const grantId = await grant.save();
    await server.grantOrgs.set(grantId, orgId, GRANT_TTL_SECONDS);
    await finishWith(reply, () =>
      provider.interactionFinished(request.raw, reply.raw, {
        ...(withLogin ? { login: { accountId } } : {}),
        consent: { grantId },
      }),
    );
  };

  app.get<{ Params: { uid: string } }>("/oauth/interaction/:uid", async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return expired(reply);
    const { current, details } = loaded;
    const csrf = csrfToken(current.cookieKeys, "interaction", details.uid);
    const name = await clientName(details.params.client_id);

    if (details.prompt.name === "login") {
      const html = signInPage({ action: `${interactionPath(details.uid)}/login`, csrf, clientName: name });
      return sendPage(reply, 200, html, redirectOrigin(details));
    }
    const accountId = details.session?.accountId;
    if (details.prompt.name !== "consent" || !accountId) return expired(reply);
    const choice = await chooseOrg(identity, accountId, details.params.client_id, details.params.org_id);
    if (!choice.ok)
      return sendPage(reply, 403, messagePage({ title: "Cannot sign in", message: choice.message, isError: true }));
    if (details.params.client_id === CONSOLE_CLIENT_ID)
      return grantAndFinish(request, reply, details, accountId, choice.orgId, false);

    const { user } = await identity.getUser({ userId: accountId });
    const html = consentPage({
      action: `${interactionPath(details.uid)}/consent`,
      abortAction: `${interactionPath(details.uid)}/abort`,
      csrf,
      clientName: name,
      orgName: choice.orgName,
      email: user?.email ?? "",
    });
    return sendPage(reply, 200, html, redirectOrigin(details));
  });

  app.post<{ Params: { uid: string } }>("/oauth/interaction/:uid/login", async (request, reply) => {
    const loaded = await load(request, reply);
    if (loaded?.details.prompt.name !== "login") return expired(reply);
    const { current, details } = loaded;
    const email = field(request.body, "email").trim();
    const password = field(request.body, "password");
    const page = async (status: number, error: string) =>
      sendPage(
        reply,
        status,
        signInPage({
          action: `${interactionPath(details.uid)}/login`,
          csrf: csrfToken(current.cookieKeys, "interaction", details.uid),
          clientName: await clientName(details.params.client_id),
          email,
          error,
        }),
        redirectOrigin(details),
      );

    if (!checkCsrf(current.cookieKeys, "interaction", details.uid, field(request.body, "csrf")))
      return page(403, "This form has expired. Please sign in again.");
    if (!email || !password) return page(400, "Enter your email and password.");
    if (email.length > 320 || password.length > 1024) return page(401, BAD_CREDENTIALS);

    const address = deps.clientAddress(request);
    const decision = await throttle.attempt(email, address);
    if (!decision.allowed) {
      reply.header("retry-after", String(decision.retryAfterSeconds));
      return page(
        429,
        `Too many sign-in attempts. Try again in ${decision.retryAfterSeconds} second${decision.retryAfterSeconds === 1 ? "" : "s"}.`,
      );
    }
    let userId: string;
    try {
      const { user } = await identity.authenticate({ email, password });
      if (!user) throw new Error("Authenticate answered without a user");
      userId = user.id;
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.Unauthenticated || err.code === Code.InvalidArgument)) {
        await throttle.failed(address);
        return page(401, BAD_CREDENTIALS);
      }
      throw err;
    }
    await throttle.succeeded(email);

    const choice = await chooseOrg(identity, userId, details.params.client_id, details.params.org_id);
    if (!choice.ok) return page(403, choice.message);
    if (details.params.client_id === CONSOLE_CLIENT_ID)
      return grantAndFinish(request, reply, details, userId, choice.orgId, true);
    // A registered client asks for consent next (GET of the next interaction).
    await finishWith(reply, () =>
      current.provider.interactionFinished(request.raw, reply.raw, { login: { accountId: userId } }),
    );
  });

  app.post<{ Params: { uid: string } }>("/oauth/interaction/:uid/consent", async (request, reply) => {
    const loaded = await load(request, reply);
    if (loaded?.details.prompt.name !== "consent") return expired(reply);
    const { current, details } = loaded;
    const accountId = details.session?.accountId;
    if (!accountId || !checkCsrf(current.cookieKeys, "interaction", details.uid, field(request.body, "csrf")))
      return expired(reply);
    const choice = await chooseOrg(identity, accountId, details.params.client_id, details.params.org_id);
    if (!choice.ok)
      return sendPage(reply, 403, messagePage({ title: "Cannot sign in", message: choice.message, isError: true }));
    return grantAndFinish(request, reply, details, accountId, choice.orgId, false);
  });

  app.post<{ Params: { uid: string } }>("/oauth/interaction/:uid/abort", async (request, reply) => {
    const loaded = await load(request, reply);
    if (!loaded) return expired(reply);
    const { current, details } = loaded;
    if (!checkCsrf(current.cookieKeys, "interaction", details.uid, field(request.body, "csrf"))) return expired(reply);
    await finishWith(reply, () =>
      current.provider.interactionFinished(
        request.raw,
        reply.raw,
        { error: "access_denied", error_description: "the user cancelled the sign-in" },
        { mergeWithLastSubmission: false },
      ),
    );
  });
}
