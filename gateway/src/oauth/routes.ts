import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { IdentityClient } from "../backends.js";
import { HttpError } from "../http-errors.js";
import { registerInteractionRoutes } from "./interactions.js";
import { registerInvitationPages } from "./invitation-pages.js";
import type { LoginThrottle } from "./login-throttle.js";
import type { OAuthServer } from "./oauth-server.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** @fastify/cors skips a route whose config says `cors: false`. */
    cors?: false;
  }
}

export interface OAuthRouteOptions {
  server: OAuthServer;
  identity: IdentityClient;
  throttle: LoginThrottle;
  /** Behind a reverse proxy: the client address is the last X-Forwarded-For hop. */
  trustProxy: boolean;
  bodyLimitBytes: number;
}

const PROVIDER_METHODS = ["GET", "POST", "OPTIONS"] as const;
const DISCOVERY_PATHS = ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"];

/** The address the sign-in brute-force limit per address counts. */
export function clientAddressOf(trustProxy: boolean): (request: FastifyRequest) => string {
  return (request) => {
    if (trustProxy) {
      const forwarded = request.headers["x-forwarded-for"];
      const hops = (Array.isArray(forwarded) ? forwarded.join(",") : (forwarded ?? "")).split(",");
      const last = hops.at(-1)?.trim();
      if (last) return last;
    }
    return request.socket.remoteAddress ?? "unknown";
  };
}

/**
 * The OAuth server on the gateway's origin: oidc-provider answers /oauth/* and the two
 * discovery documents itself (the raw request and response are handed over, so the
 * gateway's body parsing, CORS and JSON errors stay out of its way: it has its own); the
 * sign-in steps and the invitation page are gateway routes with form bodies.
 */
export async function registerOAuth(app: FastifyInstance, opts: OAuthRouteOptions): Promise<void> {
  const clientAddress = clientAddressOf(opts.trustProxy);

  await app.register(async (scope) => {
    // oidc-provider reads the body from the raw stream: leave it unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      let current: Awaited<ReturnType<OAuthServer["instance"]>>;
      try {
        current = await opts.server.instance();
      } catch (err) {
        request.log.error({ err }, "the OAuth server's signing keys are unavailable");
        throw new HttpError("ServiceUnavailable", "sign-in is unavailable; retry later");
      }
      opts.server.pin(request.raw);
      reply.hijack();
      current.handle(request.raw, reply.raw);
    };
    const route = { method: [...PROVIDER_METHODS], config: { cors: false as const }, schema: { hide: true }, handler };
    scope.route({ ...route, url: "/oauth/*" });
    for (const url of DISCOVERY_PATHS) scope.route({ ...route, url });
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(formbody, { bodyLimit: Math.min(opts.bodyLimitBytes, 64 * 1024) });
    const deps = { server: opts.server, identity: opts.identity, throttle: opts.throttle, clientAddress };
    scope.addHook("onRoute", (route) => {
      route.config = { ...route.config, cors: false };
      route.schema = { ...route.schema, hide: true };
    });
    registerInteractionRoutes(scope, deps);
    registerInvitationPages(scope, deps);
  });
}
