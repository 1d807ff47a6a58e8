import http from "node:http";
import type { AddressInfo } from "node:net";
import protobuf from "protobufjs";

// An OTLP/HTTP trace receiver for tests: accepts what an OpenTelemetry collector would
// on POST /v1/traces, in JSON (http/json) and protobuf (http/protobuf), and keeps the
// spans in one shape. Only the fields the tests read are declared in the protobuf schema.

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  events: { name: string; attributes: Record<string, unknown> }[];
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Requests received, by content type. */
  requests: Record<string, number>;
  /** Bytes of span data received (counted in countOnly mode). */
  bytes(): number;
  close(): Promise<void>;
}

const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  repeated KeyValue attributes = 9; repeated Event events = 11; repeated Link links = 13;
}
message Event { string name = 3; repeated KeyValue attributes = 4; }
message Link { bytes trace_id = 1; bytes span_id = 2; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; bytes bytes_value = 7; }
}
message ArrayValue { repeated AnyValue values = 1; }
`;
const ExportRequest = protobuf.parse(OTLP_PROTO, { keepCase: false }).root.lookupType("otlp.ExportTraceServiceRequest");

type Any = Record<string, any>;

const hex = (v: unknown): string =>
  typeof v === "string" ? v.toLowerCase() : v instanceof Uint8Array ? Buffer.from(v).toString("hex") : "";

function value(v: Any | undefined): unknown {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(value);
  if ("bytesValue" in v) return hex(v.bytesValue);
  return undefined;
}

const attrs = (list: Any[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

/** Both encodings in one shape (protobufjs' toObject uses the JSON mapping's camelCase names). */
function collect(body: Any, into: ReceivedSpan[]): void {
  for (const rs of body.resourceSpans ?? []) {
    const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        into.push({
          service,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: Number(s.kind ?? 0),
          attributes: attrs(s.attributes),
          links: (s.links ?? []).map((l: Any) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
          events: (s.events ?? []).map((e: Any) => ({ name: e.name, attributes: attrs(e.attributes) })),
        });
      }
    }
  }
}

/**
 * Listens on 127.0.0.1:`port` (0: any free one). With `countOnly`, requests and bytes are
 * counted but not decoded (a benchmark's sink, which must not cost more than a collector).
 */
export async function startOtlpReceiver(port = 0, opts: { countOnly?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: Record<string, number> = {};
  let bytes = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
      requests[type] = (requests[type] ?? 0) + 1;
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      if (opts.countOnly) {
        bytes += chunks.reduce((n, c) => n + c.length, 0);
        res.writeHead(200, { "content-type": type || "application/json" }).end(type === "application/json" ? "{}" : "");
        return;
      }
      try {
        const raw = Buffer.concat(chunks);
        const body =
          type === "application/x-protobuf"
            ? ExportRequest.toObject(ExportRequest.decode(raw), { longs: String, bytes: Uint8Array })
            : JSON.parse(raw.toString("utf8"));
        collect(body, spans);
        res.writeHead(200, { "content-type": type || "application/json" }).end(type === "application/json" ? "{}" : "");
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
