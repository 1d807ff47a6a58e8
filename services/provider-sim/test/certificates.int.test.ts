import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { X509Certificate } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureCertificates } from "../src/ca.js";
import { startSim, type SimFixture } from "./sim-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "herald-ca-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ensureCertificates", () => {
  it("creates the CA once and keeps it", async () => {
    const first = await ensureCertificates(dir);
    const second = await ensureCertificates(dir);
    expect(second.caCert).toBe(first.caCert);
    expect(second.serverCert).toBe(first.serverCert);
    expect(second.caCertPath).toBe(path.join(dir, "ca.pem"));
    expect(await readFile(path.join(dir, "server-key.pem"), "utf8")).toBe(first.serverKey);

    const ca = new X509Certificate(first.caCert);
    const server = new X509Certificate(first.serverCert);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca) && server.verify(ca.publicKey)).toBe(true);
    expect(server.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    expect(server.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
  });

  it("re-issues only the server certificate, from the same CA, when it is unusable or lacks a host", async () => {
    const before = await ensureCertificates(dir);
    await writeFile(path.join(dir, "server.pem"), "not a certificate");
    const repaired = await ensureCertificates(dir);
    expect(repaired.caCert).toBe(before.caCert);
    expect(repaired.serverCert).not.toBe(before.serverCert);

    const widened = await ensureCertificates(dir, { hosts: ["provider-sim.herald.svc"] });
    expect(widened.caCert).toBe(before.caCert);
    expect(new X509Certificate(widened.serverCert).checkHost("provider-sim.herald.svc")).toBe(
      "provider-sim.herald.svc",
    );
  });

  it("survives concurrent callers with one consistent pair", async () => {
    const fresh = await mkdtemp(path.join(tmpdir(), "herald-ca-"));
    try {
      const results = await Promise.all(Array.from({ length: 4 }, () => ensureCertificates(fresh)));
      expect(new Set(results.map((r) => r.caCert)).size).toBe(1);
      expect(new X509Certificate(results[0]!.serverCert).checkIssued(new X509Certificate(results[0]!.caCert))).toBe(
        true,
      );
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});

describe("the TLS port", () => {
  let f: SimFixture;
  beforeAll(async () => {
    f = await startSim();
  });
  afterAll(async () => {
    await f?.close();
  });

  const handshake = (host: string, servername: string | undefined, ca?: string) =>
    new Promise<{ authorized: boolean; protocol: string | false | null }>((resolve, reject) => {
      const socket = tls.connect({ host, port: f.sim.port, ca, servername, ALPNProtocols: ["h2", "http/1.1"] }, () => {
        resolve({ authorized: socket.authorized, protocol: socket.alpnProtocol });
        socket.end();
      });
      socket.on("error", reject);
    });

  it("verifies with only the simulator's CA, by IP and by name, offering HTTP/2", async () => {
    expect(await handshake("127.0.0.1", undefined, f.ca)).toEqual({ authorized: true, protocol: "h2" });
    expect(await handshake("127.0.0.1", "localhost", f.ca)).toEqual({ authorized: true, protocol: "h2" });
  });

  it("is not trusted without that CA", async () => {
    await expect(handshake("127.0.0.1", undefined)).rejects.toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
  });

  it("serves health on the admin port", async () => {
    expect(await f.admin.healthy()).toBe(true);
  });
});
