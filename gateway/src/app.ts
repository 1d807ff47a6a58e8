import cors from "@fastify/cors";
import { createMetricsRegistry, type Logger, packageVersion } from "@herald/runtime";
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import { AppDirectory } from "./app-directory.js";
import { ApiKeyVerifier, verifyWith } from "./auth/api-key-verifier.js";
import { PUSH_TOKEN_HEADER } from "./client-key-policy.js";
import { createJwtVerifier } from "./auth/jwt-verifier.js";
import { createSessionVerifier } from "./auth/session-verifier.js";
import type { BackendClients } from "./backends.js";
import type { Config } from "./config.js";
import { LoginThrottle } from "./oauth/login-throttle.js";
import { OAuthServer } from "./oauth/oauth-server.js";
import { clientAddressOf, registerOAuth } from "./oauth/routes.js";
import { SigningKeys } from "./oauth/signing-keys.js";
import { registerAuth } from "./plugins/auth.js";
import { registerDeviceImportRoute } from "./routes/device-import.js";
import { registerTracing } from "./plugins/tracing.js";
import { registerBodyParser } from "./plugins/body-parser.js";
import { registerConsole } from "./plugins/console.js";
import { registerErrorHandling } from "./plugins/error-handling.js";
import { createGatewayMetrics, registerMetrics } from "./plugins/metrics.js";
import { registerOpenApi } from "./plugins/openapi.js";
import { registerRateLimit } from "./plugins/rate-limit.js";
import { genReqId, registerRequestId } from "./plugins/request-id.js";
import { RateLimiter } from "./rate-limiter.js";
import { registerRequestLog, requestLogger } from "./request-log.js";
import { readinessCheck } from "./readiness.js";
import { registerAndroidChannelRoutes } from "./routes/android-channels.js";
import { registerWebhookRoutes } from "./routes/webhooks.js";
import { registerApiKeyRoutes } from "./routes/api-keys.js";
import { registerAppRoutes } from "./routes/apps.js";
import { registerCampaignRoutes } from "./routes/campaigns.js";
import { registerDeliveryRoutes } from "./routes/deliveries.js";
import { Registrations } from "./registrations.js";
import type { RouteDeps } from "./routes/deps.js";
import { registerDeviceRoutes } from "./routes/devices.js";
import { registerInAppMessageRoutes } from "./routes/in-app-messages.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerPlatformConfigRoutes } from "./routes/platform-config.js";
import { registerPushRoutes } from "./routes/push.js";
import { registerSegmentRoutes } from "./routes/segments.js";
import { registerInvitationAcceptRoute } from "./routes/invitation-accept.js";
import { registerInvitationRoutes } from "./routes/invitations.js";
import { registerMeRoute } from "./routes/me.js";
import { registerMemberRoutes } from "./routes/members.js";
import { registerOAuthClientRoutes } from "./routes/oauth-clients.js";
import { registerOrgRoutes } from "./routes/org.js";
import { registerRoleCheck } from "./member-roles.js";
import { registerEarlyAuthorization } from "./early-authorization.js";
import { clientErrorReply } from "./client-errors.js";
import { errorReply } from "./http-errors.js";
import { sharedSchemas } from "./schemas/components.js";
import { createValidatorCompiler } from "./validation.js";
import { DeferredCompilation, deferredSerializers } from "./deferred-compilation.js";

const version = packageVersion("@herald/gateway");

export type AppConfig = Pick<
  Config,
  | "redisKeyPrefix"
  | "rateLimitPerMinute"
  | "jwtIssuer"
  | "jwtJwksUrl"
  | "jwtAudience"
  | "corsOrigins"
  | "bodyLimitBytes"
  | "authCacheMs"
  | "publicUrl"
  | "accessTokenTtlSeconds"
  | "trustProxy"
>;

/** The backends' clients, and what else the gateway is built with. */
export interface BuildOptions extends BackendClients {
  config: AppConfig;
  redis: Redis;
  log: Logger;
  /** Milliseconds since the epoch; tests may pin it. */
  now?: () => number;
  metricsRegistry?: Registry;
  /** Where the routes' validators and serializers wait for their first use (tests compile them all). */
  deferredCompilation?: DeferredCompilation;
}

const QUIET_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);
const EXPOSED_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "X-Request-Id",
  "Idempotent-Replayed",
];

/** Errors the router raises before any route runs, in the API's error body. */
function frameworkErrorReply(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  // A path id too long for any route, or not even valid percent-encoding, cannot name a
  // resource: 404 like any other id that cannot exist, as the document says.
  const out =
    err.code === "FST_ERR_MAX_PARAM_LENGTH" || err.code === "FST_ERR_BAD_URL"
      ? errorReply("NotFound", "no such resource")
      : errorReply("ValidationError", "the request URL is malformed");
  void reply.code(out.status).send(out.body);
}

/** The whole gateway, wired but not listening: server.ts listens, tests use inject(). */
export async function build(opts: BuildOptions): Promise<FastifyInstance> {
  const { config } = opts;
  const now = opts.now ?? Date.now;
  const deferred = opts.deferredCompilation ?? new DeferredCompilation();
  const app = Fastify({
    loggerInstance: requestLogger(opts.log) as FastifyBaseLogger,
    genReqId,
    requestIdHeader: false,
    logController: new LogController({
      requestIdLogLabel: "request_id",
      // One line per request instead (registerRequestLog, below).
      disableRequestLogging: true,
    }),
    bodyLimit: config.bodyLimitBytes,
    // Trailing slashes and double slashes name the same route. Path parameters of any
    // length reach their schema (a too-long id is an unknown one: 404 after auth), up to
    // what fits in a request line anyway.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 16_384 },
    frameworkErrors: frameworkErrorReply,
    clientErrorHandler: clientErrorReply,
    schemaController: { compilersFactory: { buildSerializer: deferredSerializers(deferred) } },
  });
  app.setValidatorCompiler(createValidatorCompiler(sharedSchemas, deferred));

  const metrics = createGatewayMetrics(opts.metricsRegistry ?? createMetricsRegistry("gateway"));
  registerRequestId(app);
  registerErrorHandling(app);
  registerBodyParser(app, config.bodyLimitBytes);
  await app.register(cors, {
    origin: config.corsOrigins === "*" ? "*" : config.corsOrigins,
    methods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowedHeaders: ["Authorization", "Content-Type", "X-Request-Id", "Idempotency-Key", PUSH_TOKEN_HEADER],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  await registerOpenApi(app, version, config);
  registerMetrics(app, metrics);
  // Probes and scrapes every few seconds would drown the request log.
  registerRequestLog(app, QUIET_PATHS);
  registerTracing(app);
  registerHealthRoutes(app, readinessCheck(opts));
  // The admin console (console/dist): a 404 saying how to build it when it is not built.
  await registerConsole(app);

  const apiKeys = new ApiKeyVerifier(verifyWith(opts.credential, config.rateLimitPerMinute), config.authCacheMs, {
    now,
  });
  const jwt =
    config.jwtIssuer && config.jwtJwksUrl
      ? createJwtVerifier({
          issuer: config.jwtIssuer,
          jwksUrl: config.jwtJwksUrl,
          ...(config.jwtAudience ? { audience: config.jwtAudience } : {}),
          defaultRateLimit: config.rateLimitPerMinute,
        })
      : undefined;
  // The gateway's own OAuth server and its access tokens (no configuration needed); an
  // external issuer, when configured, keeps working beside it.
  const signingKeys = new SigningKeys(opts.identity, { now });
  const oauth = new OAuthServer({
    issuer: config.publicUrl,
    identity: opts.identity,
    keys: signingKeys,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    log: opts.log,
  });
  const sessions = createSessionVerifier({
    issuer: config.publicUrl,
    keys: signingKeys,
    identity: opts.identity,
    defaultRateLimit: config.rateLimitPerMinute,
    ...(jwt ? { external: jwt } : {}),
    now,
  });
  await registerOAuth(app, {
    server: oauth,
    identity: opts.identity,
    throttle: new LoginThrottle(opts.redis, config.redisKeyPrefix, (err) =>
      opts.log.warn({ err: err.message }, "sign-in throttle store unreachable; attempts are not counted"),
    ),
    trustProxy: config.trustProxy,
    bodyLimitBytes: config.bodyLimitBytes,
  });

  const deps: RouteDeps = {
    credential: opts.credential,
    identity: opts.identity,
    devices: opts.devices,
    registrations: new Registrations(opts.devices),
    campaigns: opts.campaigns,
    androidChannels: opts.androidChannels,
    inAppMessages: opts.inAppMessages,
    webhooks: opts.webhooks,
    apps: new AppDirectory(opts.credential, 3_000, { now }),
    apiKeys,
    defaultRateLimit: config.rateLimitPerMinute,
  };

  // Everything under /v1 is authenticated, then rate-limited, then checked against the
  // route's role (hooks run in that order), then against the app or resource the path or
  // query names, all before the body is parsed; an app named in the body is checked after
  // parsing, before validation (early-authorization.ts). The routes above stay public.
  const limiter = new RateLimiter(opts.redis, config.redisKeyPrefix);
  const clientAddress = clientAddressOf(config.trustProxy);
  await app.register(
    async (v1) => {
      registerAuth(v1, { apiKeys, jwt: sessions, metrics });
      registerRateLimit(v1, { limiter, metrics, now, clientAddress });
      registerRoleCheck(v1);
      registerEarlyAuthorization(v1);
      registerAppRoutes(v1, deps);
      registerPlatformConfigRoutes(v1, deps);
      registerApiKeyRoutes(v1, deps);
      registerDeviceRoutes(v1, deps);
      registerDeviceImportRoute(v1, deps);
      registerPushRoutes(v1, deps);
      registerCampaignRoutes(v1, deps);
      registerDeliveryRoutes(v1, deps);
      registerSegmentRoutes(v1, deps);
      registerAndroidChannelRoutes(v1, deps);
      registerInAppMessageRoutes(v1, deps);
      registerWebhookRoutes(v1, deps);
      registerMeRoute(v1, deps);
      registerOrgRoutes(v1, deps);
      registerMemberRoutes(v1, deps);
      registerInvitationRoutes(v1, deps, config.publicUrl);
      registerOAuthClientRoutes(v1, deps);
    },
    { prefix: "/v1" },
  );
  // The one unauthenticated /v1 route: accepting an invitation (its token is the credential).
  await app.register(
    async (pub) => registerInvitationAcceptRoute(pub, deps, { limiter, metrics, now }, clientAddress),
    { prefix: "/v1" },
  );
  return app;
}
