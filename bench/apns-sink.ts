import http from "node:http";
import http2 from "node:http2";
import { readFileSync } from "node:fs";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";

// A lean APNs stand-in for benchmarks, in its own process: TLS HTTP/2 (the simulator's
// certificate, which the stack trusts), 1,000 streams per connection, and a 200 with an
// apns-id for every POST /3/device/<token> — no JWT check, no frame tap, no records:
// the strict simulator is for correctness, this is for measuring Herald, not the sink.
// Admin (HTTP/1.1): GET /count, POST /reset.
//   SINK_PORT (TLS), SINK_ADMIN_PORT
const port = Number(process.env.SINK_PORT ?? 4543);
const adminPort = Number(process.env.SINK_ADMIN_PORT ?? 4544);
const certs = await ensureCertificates(DEFAULT_CERT_DIR);
let count = 0;
let firstAt = 0;
let lastAt = 0;

const server = http2.createSecureServer({
  cert: readFileSync(certs.serverCertPath),
  key: readFileSync(certs.serverKeyPath),
  settings: { maxConcurrentStreams: 1000 },
});
server.on("stream", (stream, headers) => {
  const ok = headers[":method"] === "POST" && String(headers[":path"]).startsWith("/3/device/");
  stream.on("data", () => undefined);
  stream.on("end", () => {
    if (ok) {
      count++;
      lastAt = Date.now();
      firstAt ||= lastAt;
    }
    stream.respond({ ":status": ok ? 200 : 404, "apns-id": "00000000-0000-0000-0000-000000000000" });
    stream.end();
  });
  stream.on("error", () => undefined);
});
server.on("sessionError", () => undefined);
await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));

http
  .createServer((req, res) => {
    if (req.url === "/reset" && req.method === "POST") {
      count = 0;
      firstAt = 0;
      lastAt = 0;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ count, firstAt, lastAt }));
  })
  .listen(adminPort, "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
