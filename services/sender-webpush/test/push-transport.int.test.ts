import type { IncomingMessage, ServerResponse } from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ensureCertificates } from "@herald/provider-sim/ca";
import { DEFAULT_CERT_DIR } from "@herald/provider-sim/config";
import { PushTransport } from "../src/push-transport.js";

// The Web Push transport against loopback push services: HTTP/2 through the shared pool,
// HTTP/1.1 for one that offers no HTTP/2, and the SSRF guard in the connect-time lookup.
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function pushService(kind: "h2" | "h1") {
  const certs = await ensureCertificates(DEFAULT_CERT_DIR);
  const seen: { protocol: string; path: string; ttl: string | undefined }[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ protocol: req.httpVersion, path: req.url ?? "", ttl: req.headers.ttl as string | undefined });
    req.resume();
    req.on("end", () => {
      res.writeHead(201, { location: "/msg/1" });
      res.end();
    });
  };
  const server =
    kind === "h2"
      ? http2.createSecureServer({ key: certs.serverKey, cert: certs.serverCert }, handler as never)
      : https.createServer({ key: certs.serverKey, cert: certs.serverCert }, handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(async () => {
    if ("closeAllConnections" in server) server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { port, seen };
}

function transport(allowPrivate = true) {
  const t = new PushTransport({ allowPrivate });
  cleanups.push(() => t.close());
  return t;
}

const headers = () => ({ ttl: "60", "content-encoding": "aes128gcm" });
const signal = new AbortController().signal;

describe("PushTransport", () => {
  it("posts over the shared HTTP/2 pool, reusing its connection", async () => {
    const svc = await pushService("h2");
    const t = transport();
    for (const id of ["a", "b"]) {
      const res = await t.post(new URL(`https://127.0.0.1:${svc.port}/wp/${id}`), headers(), Buffer.from("x"), signal);
      expect(res.status).toBe(201);
    }
    expect(svc.seen).toEqual([
      { protocol: "2.0", path: "/wp/a", ttl: "60" },
      { protocol: "2.0", path: "/wp/b", ttl: "60" },
    ]);
    expect(t.stats()).toMatchObject({ origins: 1, connections: 1 });
  });

  it("falls back to HTTP/1.1 for a push service without HTTP/2, and remembers it", async () => {
    const svc = await pushService("h1");
    const t = transport();
    for (const id of ["a", "b"]) {
      const res = await t.post(new URL(`https://127.0.0.1:${svc.port}/wp/${id}`), headers(), Buffer.from("x"), signal);
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe("/msg/1");
    }
    expect(svc.seen).toEqual([
      { protocol: "1.1", path: "/wp/a", ttl: "60" },
      { protocol: "1.1", path: "/wp/b", ttl: "60" },
    ]);
    expect(t.stats().connections).toBe(0);
  });

  it("refuses, at connect time and without retrying, a name that resolves to a private address", async () => {
    const svc = await pushService("h2");
    const t = transport(false);
    const err = await t
      .post(new URL(`https://localhost:${svc.port}/wp/secret-path`), headers(), Buffer.from("x"), signal)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "ESSRF" });
    expect((err as Error).message).not.toContain("secret-path");
    expect(svc.seen).toEqual([]);
  });
});
