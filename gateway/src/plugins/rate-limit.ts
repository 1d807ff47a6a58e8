import type { FastifyInstance, FastifyRequest } from "fastify";
import { rateLimited } from "../http-errors.js";
import { decide, uncounted, type RateLimiter } from "../rate-limiter.js";
import type { GatewayMetrics } from "./metrics.js";

export interface RateLimitOptions {
  limiter: RateLimiter;
  metrics: GatewayMetrics;
  now: () => number;
  /** What a request counts against: by default its principal's identity and limit. */
  subject?: (request: FastifyRequest) => RateLimitSubject | null;
  /**
   * The client's address. A client key ships inside an app, so every install shares it:
   * its limit counts per key and address (one install, or one NAT), not per key.
   */
  clientAddress?: (request: FastifyRequest) => string;
}

export interface RateLimitSubject {
  identity: string;
  limitPerMinute: number;
}

function principalSubject(request: FastifyRequest, clientAddress?: (r: FastifyRequest) => string) {
  const p = request.principal;
  if (!p) return null;
  const perAddress = p.keyKind === "client" && clientAddress;
  return {
    identity: perAddress ? `${p.identity}:addr:${clientAddress(request)}` : p.identity,
    limitPerMinute: p.rateLimitPerMinute,
  };
}

/**
 * Counts each request against its subject's per-minute limit (the key or user; the client
 * address on the public /v1 route), before the body is even parsed, and puts
 * X-RateLimit-* on the reply (they survive into error replies).
 * Redis trouble lets the request through uncounted, with a warning and a metric:
 * availability of the API matters more than exact limiting during an outage.
 */
export function registerRateLimit(scope: FastifyInstance, opts: RateLimitOptions): void {
  scope.addHook("onRequest", async (request, reply) => {
    const subject = opts.subject ? opts.subject(request) : principalSubject(request, opts.clientAddress);
    if (!subject) return;
    const limit = subject.limitPerMinute;
    let decision: ReturnType<typeof decide>;
    try {
      decision = decide(limit, await opts.limiter.hit(subject.identity), opts.now());
    } catch (err) {
      opts.metrics.rateLimitStoreErrors.inc();
      request.log.warn({ err }, "rate-limit store unavailable; request let through uncounted");
      decision = uncounted(limit, opts.now());
    }
    reply.headers(decision.headers);
    if (decision.retryAfterSeconds !== undefined) {
      opts.metrics.rateLimited.inc();
      reply.header("retry-after", String(decision.retryAfterSeconds));
      throw rateLimited(
        `rate limit of ${limit} requests per minute exceeded; retry in ${decision.retryAfterSeconds} s`,
      );
    }
  });
}
