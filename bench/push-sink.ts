import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import { readFileSync } from "node:fs";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";

// A lean stand-in for all three push services, for end-to-end benchmarks, in its own
// process: TLS HTTP/2 with the simulator's certificate (which the stack trusts), 1,000
// streams per connection, no authentication checks, no frame tap, no records but a count
// and each notification's arrival time. The strict simulator is for correctness; this is
// for measuring Herald, not the sink. A Node sink tops out near 29k notifications/s on two
// cores, far above what the end-to-end runs reach (the sender benchmarks use nghttpd).
//   POST /3/device/<token>                → 200 with an apns-id          (APNs)
//   POST /v1/projects/<p>/messages:send   → 200 {"name": …}              (FCM)
//   POST /wp/<id>                         → 201                          (Web Push)
// FCM's OAuth token endpoint (HTTPS/1.1, as Google's): POST /token → an access token.
// Admin (HTTP/1.1): GET /count → {count, byKind, firstAt, lastAt, p50At, p99At}, POST /reset.
//   SINK_PORT (TLS), SINK_TOKEN_PORT (TLS), SINK_ADMIN_PORT
const port = Number(process.env.SINK_PORT ?? 4543);
const adminPort = Number(process.env.SINK_ADMIN_PORT ?? 4544);
const tokenPort = Number(process.env.SINK_TOKEN_PORT ?? 4545);
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

const ACCESS_TOKEN = JSON.stringify({ access_token: "sink-token", token_type: "Bearer", expires_in: 3600 });
let fcmName = 0;

const tls = { cert: readFileSync(certs.serverCertPath), key: readFileSync(certs.serverKeyPath) };
const server = http2.createSecureServer({ ...tls, settings: { maxConcurrentStreams: 1000 } });
server.on("stream", (stream, headers) => {
  const path = String(headers[":path"]);
  const post = headers[":method"] === "POST";
  stream.on("data", () => undefined);
  stream.on("error", () => undefined);
  stream.on("end", () => {
    if (post && path.startsWith("/3/device/")) {
      arrived("apns");
      stream.respond({ ":status": 200, "apns-id": "00000000-0000-0000-0000-000000000000" });
      stream.end();
    } else if (post && path.endsWith("/messages:send")) {
      arrived("fcm");
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(`{"name":"projects/bench/messages/${++fcmName}"}`);
    } else if (post && path.startsWith("/wp/")) {
      arrived("webpush");
      stream.respond({ ":status": 201 });
      stream.end();
    } else {
      stream.respond({ ":status": 404 });
      stream.end();
    }
  });
});
server.on("sessionError", () => undefined);
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));

https
  .createServer(tls, (req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/token") {
        res.writeHead(200, { "content-type": "application/json" }).end(ACCESS_TOKEN);
      } else res.writeHead(404).end();
    });
  })
  .listen(tokenPort, "127.0.0.1");

const at = (q: number) => (count ? arrivals[Math.min(count - 1, Math.floor(q * count))]! : 0);
http
  .createServer((req, res) => {
    if (req.url === "/reset" && req.method === "POST") {
      count = 0;
      for (const k of Object.keys(byKind)) byKind[k] = 0;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        count,
        byKind,
        firstAt: at(0),
        lastAt: count ? arrivals[count - 1] : 0,
        p50At: at(0.5),
        p99At: at(0.99),
      }),
    );
  })
  .listen(adminPort, "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
