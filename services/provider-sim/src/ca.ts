import { X509Certificate, createPrivateKey, randomBytes, webcrypto } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import path from "node:path";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

/**
 * The simulator's own certificate authority. Herald processes trust it through
 * NODE_EXTRA_CA_CERTS, so no code path ever needs to turn TLS verification off.
 * The CA is made once and kept: regenerating it would break every process that
 * already loaded it. The server certificate is re-issued from the same CA when it
 * is missing, near expiry, or lacks a requested host name.
 */
export interface SimCertificates {
  caCertPath: string;
  serverCertPath: string;
  serverKeyPath: string;
  /** PEM contents, for the TLS server and for test clients that trust only this CA. */
  caCert: string;
  serverCert: string;
  serverKey: string;
}

export const DEFAULT_HOSTS = ["localhost", "127.0.0.1", "::1"];

const FILES = { caCert: "ca.pem", caKey: "ca-key.pem", serverCert: "server.pem", serverKey: "server-key.pem" };
const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;
/** Renew this long before expiry, so a long-running dev setup never meets an expired cert. */
const RENEW_MARGIN_MS = 30 * DAY_MS;
const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
/** The leaf lifetime browsers and Apple platforms accept (≤ 398 days). */
const SERVER_LIFETIME_MS = 397 * DAY_MS;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export async function ensureCertificates(dir: string, opts: { hosts?: string[] } = {}): Promise<SimCertificates> {
  const hosts = [...new Set([...DEFAULT_HOSTS, ...(opts.hosts ?? [])])];
  const file = (name: string) => path.join(dir, name);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await withLock(file(".lock"), async () => {
    let ca = await loadValidCa(file(FILES.caCert), file(FILES.caKey));
    if (!ca) {
      ca = await createCa();
      await writeAtomic(file(FILES.caKey), ca.keyPem, 0o600);
      await writeAtomic(file(FILES.caCert), ca.certPem, 0o644);
    }
    if (!(await serverCertValid(file(FILES.serverCert), file(FILES.serverKey), ca.cert, hosts))) {
      const server = await createServerCert(ca, hosts);
      await writeAtomic(file(FILES.serverKey), server.keyPem, 0o600);
      await writeAtomic(file(FILES.serverCert), server.certPem, 0o644);
    }
  });
  return {
    caCertPath: file(FILES.caCert),
    serverCertPath: file(FILES.serverCert),
    serverKeyPath: file(FILES.serverKey),
    caCert: await readFile(file(FILES.caCert), "utf8"),
    serverCert: await readFile(file(FILES.serverCert), "utf8"),
    serverKey: await readFile(file(FILES.serverKey), "utf8"),
  };
}

interface Ca {
  cert: X509Certificate;
  certPem: string;
  keyPem: string;
}

async function loadValidCa(certPath: string, keyPath: string): Promise<Ca | undefined> {
  const pems = await readBoth(certPath, keyPath);
  if (!pems) return undefined;
  try {
    const cert = new X509Certificate(pems[0]);
    const ok =
      cert.ca &&
      cert.verify(cert.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(pems[1])) &&
      Date.parse(cert.validTo) - Date.now() > RENEW_MARGIN_MS;
    return ok ? { cert, certPem: pems[0], keyPem: pems[1] } : undefined;
  } catch {
    return undefined;
  }
}

async function serverCertValid(
  certPath: string,
  keyPath: string,
  ca: X509Certificate,
  hosts: string[],
): Promise<boolean> {
  const pems = await readBoth(certPath, keyPath);
  if (!pems) return false;
  try {
    const cert = new X509Certificate(pems[0]);
    return (
      cert.checkIssued(ca) &&
      cert.verify(ca.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(pems[1])) &&
      Date.parse(cert.validFrom) <= Date.now() &&
      Date.parse(cert.validTo) - Date.now() > RENEW_MARGIN_MS &&
      hosts.every((h) => (isIP(h) ? cert.checkIP(h) : cert.checkHost(h, { wildcards: false })) !== undefined)
    );
  } catch {
    return false;
  }
}

async function createCa(): Promise<Ca> {
  const keys = await webcrypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: "CN=Herald Provider Simulator CA, O=Herald (local development only)",
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + CA_LIFETIME_MS),
    signingAlgorithm: SIGNING,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = cert.toString("pem");
  return { cert: new X509Certificate(certPem), certPem, keyPem: await exportKeyPem(keys.privateKey) };
}

async function createServerCert(ca: Ca, hosts: string[]): Promise<{ certPem: string; keyPem: string }> {
  const keys = await webcrypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"]);
  const caKey = await webcrypto.subtle.importKey("pkcs8", x509.PemConverter.decodeFirst(ca.keyPem), EC_KEY, false, [
    "sign",
  ]);
  const caX509 = new x509.X509Certificate(ca.certPem);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: "CN=Herald Provider Simulator",
    issuer: caX509.subjectName,
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + SERVER_LIFETIME_MS),
    signingAlgorithm: SIGNING,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        hosts.map((h) => (isIP(h) ? { type: "ip" as const, value: h } : { type: "dns" as const, value: h })),
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caX509.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: await exportKeyPem(keys.privateKey) };
}

async function exportKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", key), "PRIVATE KEY");
}

/** A positive serial (high bit clear) of 16 random bytes. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString("hex");
}

async function readBoth(a: string, b: string): Promise<[string, string] | undefined> {
  try {
    return [await readFile(a, "utf8"), await readFile(b, "utf8")];
  } catch {
    return undefined;
  }
}

/** Readers never see half a file: write beside it, then rename over it. */
async function writeAtomic(file: string, content: string, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, content, { mode });
  await rename(tmp, file);
}

/**
 * Serialises processes that ensure the same directory at once (dev mode, test workers),
 * so a CA and a server cert from two different runs never end up side by side.
 * A lock older than STALE_MS belongs to a process that died and is taken over.
 */
const STALE_MS = 30_000;
async function withLock(lockDir: string, fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      await mkdir(lockDir);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const age = await stat(lockDir).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_MS) await rm(lockDir, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
