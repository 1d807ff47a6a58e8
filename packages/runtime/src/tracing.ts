import type { Interceptor } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import type { MsgHdrs } from "@nats-io/transport-node";

/**
 * Herald's own spans: Connect RPCs (node:http2 is not auto-instrumented), JetStream
 * hops, campaign fan-out and provider requests. Through the OpenTelemetry API only: with
 * no SDK started (tracing off) every call here is a no-op.
 *
 * Attributes name campaigns, apps, platforms and sizes; never a push token, endpoint
 * path, key, secret or message content.
 */
export const tracer = trace.getTracer("herald");

export const ATTR = {
  campaignId: "herald.campaign.id",
  appId: "herald.app.id",
  platform: "herald.platform",
  batchSize: "herald.batch.size",
  batchSequence: "herald.batch.sequence",
} as const;

const headersGetter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, k) => h.get(k) ?? undefined,
};
const headersSetter: TextMapSetter<Headers> = { set: (h, k, v) => h.set(k, v) };

const natsGetter: TextMapGetter<MsgHdrs> = {
  keys: (h) => h.keys(),
  get: (h, k) => (h.has(k) ? h.get(k) : undefined),
};
const natsSetter: TextMapSetter<MsgHdrs> = { set: (h, k, v) => h.set(k, v) };

/** Records an error on a span without its message when it may carry user data. */
export function failSpan(span: Span, err: unknown): void {
  const code = err instanceof ConnectError ? `connect.${err.code}` : ((err as Error)?.name ?? "Error");
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.setAttribute("error.type", code);
}

/** Ends `span` when a streamed response has been read to its end (or abandoned). */
async function* endWhenDone<T>(span: Span, source: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* source;
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Ends an RPC's span with its response: at once, or when a streamed response ends. */
async function endRpcSpan<R extends { stream: boolean; message: unknown }>(
  span: Span,
  response: Promise<R>,
): Promise<R> {
  try {
    const res = await response;
    if (res.stream) return { ...res, message: endWhenDone(span, res.message as AsyncIterable<unknown>) };
    span.end();
    return res;
  } catch (err) {
    failSpan(span, err);
    span.end();
    throw err;
  }
}

function rpcAttributes(req: { service: { typeName: string }; method: { name: string } }): Attributes {
  return { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name };
}

/** Server side of every Connect RPC: continues the caller's W3C trace context. */
export function tracingServerInterceptor(): Interceptor {
  return (next) => async (req) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.header, headersGetter);
    const span = tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      { kind: SpanKind.SERVER, attributes: rpcAttributes(req) },
      parent,
    );
    return endRpcSpan(
      span,
      context.with(trace.setSpan(parent, span), () => next(req)),
    );
  };
}

/** Client side of every Connect RPC: a client span whose context travels in the request headers. */
export function tracingClientInterceptor(): Interceptor {
  return (next) => async (req) => {
    const span = tracer.startSpan(`${req.service.typeName}/${req.method.name}`, {
      kind: SpanKind.CLIENT,
      attributes: rpcAttributes(req),
    });
    propagation.inject(trace.setSpan(context.active(), span), req.header, headersSetter);
    return endRpcSpan(span, next(req));
  };
}

/**
 * A JetStream publish as a producer span; the span's own context goes into the message
 * headers, where the consumer picks it up.
 */
export async function tracedPublish<T>(
  /** The subject's kind for the span name (bounded: "delivery.ios", "outcome"), never an id. */
  kind: string,
  subject: string,
  attributes: Attributes,
  headers: MsgHdrs,
  publish: () => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(
    `publish ${kind}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { "messaging.system": "nats", "messaging.destination.name": subject, ...attributes },
    },
    async (span) => {
      propagation.inject(context.active(), headers, natsSetter);
      try {
        return await publish();
      } catch (err) {
        failSpan(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** The trace context a message carries (the producer span's), or none. */
export function contextFromHeaders(headers: MsgHdrs | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, natsGetter) : ROOT_CONTEXT;
}

/** A link to the trace a message carries, for a consumer that handles many at once. */
export function linkFromHeaders(headers: MsgHdrs | undefined): Link | undefined {
  const ctx = trace.getSpanContext(contextFromHeaders(headers));
  return ctx && trace.isSpanContextValid(ctx) ? { context: ctx } : undefined;
}

/** The active trace context as a W3C traceparent (and tracestate), to keep with a record. */
export function currentTraceContext(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate ? `${carrier.traceparent};${carrier.tracestate}` : carrier.traceparent;
}

/** The context kept by currentTraceContext(), to continue or link to later. */
export function traceContextFrom(stored: string | null | undefined): Context {
  if (!stored) return ROOT_CONTEXT;
  const [traceparent, tracestate] = stored.split(";", 2);
  return propagation.extract(ROOT_CONTEXT, { traceparent, ...(tracestate ? { tracestate } : {}) });
}

/** Runs `work` in a new span that ends (with an error status on a throw) when it settles. */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links },
    parent,
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        failSpan(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

export { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace };
