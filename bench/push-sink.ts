import http from "node:http";
import http2, { type ServerHttp2Session, type ServerHttp2Stream } from "node:http2";
import https from "node:https";
import { readFileSync } from "node:fs";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";

// A lean stand-in for all three push services, for benchmarks, in its own process: TLS
// HTTP/2 with the simulator's certificate (which the stack trusts), no authentication
// checks, no frame tap, no records but a count and each notification's arrival time. The
// strict simulator is for correctness; this is for measuring Herald, not the sink. A Node
// sink tops out near 29k notifications/s on two cores, far above what the end-to-end runs
// reach (bench/senders.ts uses nghttpd at 0 ms, this sink when the provider is far away).
//   POST /3/device/<token>                → 200 with an apns-id          (APNs)
//   POST /v1/projects/<p>/messages:send   → 200 {"name": …}              (FCM)
//   POST /wp/<id>                         → 201                          (Web Push)
// Like a provider that is far away, it answers SINK_LATENCY_MS after a request ended
// (± SINK_JITTER, default 10 %; 0: at once), and advertises SINK_MAX_STREAMS
// (SETTINGS_MAX_CONCURRENT_STREAMS, default 500, as APNs has been seen to).
// HTTP/1.1 on SINK_TOKEN_PORT (TLS), as Google's token endpoint: POST /token → an access
// token; the same three push routes for HTTP/1.1 clients (web-push, firebase-admin's legacy
// transport).
// Admin (HTTP/1.1): GET /count → {count, byKind, firstAt, lastAt, p50At, p99At}, POST /reset,
// POST /settings?maxStreams=N → new SETTINGS on every open session (a provider lowering its limit).
//   SINK_PORT (TLS), SINK_TOKEN_PORT (TLS), SINK_ADMIN_PORT
const port = Number(process.env.SINK_PORT ?? 4543);
const adminPort = Number(process.env.SINK_ADMIN_PORT ?? 4544);
const tokenPort = Number(process.env.SINK_TOKEN_PORT ?? 4545);
const latencyMs = Number(process.env.SINK_LATENCY_MS ?? 0);
const jitter = Number(process.env.SINK_JITTER ?? 0.1);
let maxStreams = Number(process.env.SINK_MAX_STREAMS ?? 500);
const certs = await ensureCertificates(DEFAULT_CERT_DIR);

const byKind: Record<string, number> = { apns: 0, fcm: 0, webpush: 0 };
/** Arrival times (ms since the epoch) of the notifications, in arrival order. */
let arrivals = new Float64Array(1 << 20);
let count = 0;

function arrived(kind: string): void {
  if (count === arrivals.length) {
    const bigger = new Float64Array(arrivals.length * 2);
    bigger.set(arrivals);
    arrivals = bigger;
  }
  arrivals[count++] = Date.now();
  byKind[kind]!++;
}

/**
 * Answers due at one millisecond, one timer each: a far provider answers thousands of
 * requests per second, and a timer per request would cost the sink more than the request.
 */
const due = new Map<number, (() => void)[]>();

function later(answer: () => void): void {
  if (latencyMs <= 0) {
    answer();
    return;
  }
  const delay = Math.max(0, Math.round(latencyMs * (1 + jitter * (2 * Math.random() - 1))));
  const at = Date.now() + delay;
  const list = due.get(at);
  if (list) {
    list.push(answer);
    return;
  }
  due.set(at, [answer]);
  setTimeout(() => {
    const answers = due.get(at)!;
    due.delete(at);
    for (const a of answers) a();
  }, delay);
}

type Route = "apns" | "fcm" | "webpush" | undefined;
const route = (method: string | undefined, path: string): Route => {
  if (method !== "POST") return undefined;
  if (path.startsWith("/3/device/")) return "apns";
  if (path.endsWith("/messages:send")) return "fcm";
  if (path.startsWith("/wp/")) return "webpush";
  return undefined;
};

const ACCESS_TOKEN = JSON.stringify({ access_token: "sink-token", token_type: "Bearer", expires_in: 3600 });
const APNS_ID = "00000000-0000-0000-0000-000000000000";
let fcmName = 0;

const tls = { cert: readFileSync(certs.serverCertPath), key: readFileSync(certs.serverKeyPath) };
const server = http2.createSecureServer({ ...tls, settings: { maxConcurrentStreams: maxStreams } });
const sessions = new Set<ServerHttp2Session>();
server.on("session", (session) => {
  sessions.add(session);
  session.once("close", () => sessions.delete(session));
});
server.on("stream", (stream: ServerHttp2Stream, headers) => {
  const kind = route(headers[":method"], String(headers[":path"]));
  stream.on("data", () => undefined);
  stream.on("error", () => undefined);
  stream.on("end", () => {
    if (kind) arrived(kind);
    later(() => {
      if (stream.destroyed) return;
      if (kind === "apns") {
        stream.respond({ ":status": 200, "apns-id": APNS_ID });
        stream.end();
      } else if (kind === "fcm") {
        stream.respond({ ":status": 200, "content-type": "application/json" });
        stream.end(`{"name":"projects/bench/messages/${++fcmName}"}`);
      } else if (kind === "webpush") {
        stream.respond({ ":status": 201 });
        stream.end();
      } else {
        stream.respond({ ":status": 404 });
        stream.end();
      }
    });
  });
});
server.on("sessionError", () => undefined);
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));

https
  .createServer({ ...tls, keepAlive: true }, (req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/token") {
        res.writeHead(200, { "content-type": "application/json" }).end(ACCESS_TOKEN);
        return;
      }
      const kind = route(req.method, req.url ?? "");
      if (kind) arrived(kind);
      later(() => {
        if (kind === "apns") res.writeHead(200, { "apns-id": APNS_ID }).end();
        else if (kind === "fcm")
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(`{"name":"projects/bench/messages/${++fcmName}"}`);
        else if (kind === "webpush") res.writeHead(201).end();
        else res.writeHead(404).end();
      });
    });
  })
  .listen(tokenPort, "127.0.0.1");

const at = (q: number) => (count ? arrivals[Math.min(count - 1, Math.floor(q * count))]! : 0);
http
  .createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://sink");
    if (url.pathname === "/reset" && req.method === "POST") {
      count = 0;
      for (const k of Object.keys(byKind)) byKind[k] = 0;
    }
    if (url.pathname === "/settings" && req.method === "POST") {
      maxStreams = Number(url.searchParams.get("maxStreams") ?? maxStreams);
      server.updateSettings({ maxConcurrentStreams: maxStreams });
      for (const s of sessions) if (!s.destroyed) s.settings({ maxConcurrentStreams: maxStreams });
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        count,
        byKind,
        firstAt: at(0),
        lastAt: count ? arrivals[count - 1] : 0,
        p50At: at(0.5),
        p99At: at(0.99),
        latencyMs,
        maxStreams,
      }),
    );
  })
  .listen(adminPort, "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
