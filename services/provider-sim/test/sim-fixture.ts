import type { KeyObject } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import https from "node:https";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { createLogger, readEnv } from "@herald/runtime";
import { importJWK, SignJWT } from "jose";
import { afterEach } from "vitest";
import { suiteFixture } from "../../../test/support/suite-fixture.js";
import { type Platform, SimAdminClient } from "../src/admin-client.js";
import { configSpec, type Config } from "../src/config.js";
import { start, type ProviderSim } from "../src/server.js";
import type { SubscriptionJson } from "../src/webpush/subscriptions.js";

/** The slice of the `web-push` library (CommonJS, untyped) these tests drive. */
export interface WebPushLib {
  generateVAPIDKeys(): { publicKey: string; privateKey: string };
  sendNotification(
    sub: SubscriptionJson,
    payload: string | Buffer | null,
    options: WebPushOptions,
  ): Promise<{ statusCode: number; headers: Record<string, string> }>;
  generateRequestDetails(
    sub: SubscriptionJson,
    payload: string | Buffer | null,
    options: WebPushOptions,
  ): {
    method: string;
    headers: Record<string, string | number>;
    body: Buffer | null;
    endpoint: string;
  };
}
export interface WebPushOptions {
  vapidDetails: { subject: string; publicKey: string; privateKey: string };
  TTL?: number;
  urgency?: string;
  topic?: string;
  agent?: https.Agent;
}
/** What web-push rejects with on a non-2xx answer. */
export interface WebPushError extends Error {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}
export const webpush = createRequire(import.meta.url)("web-push") as WebPushLib;

export interface SimFixture {
  sim: ProviderSim;
  admin: SimAdminClient;
  /** PEM of the simulator's CA: the only trust these clients get. */
  ca: string;
  agent: https.Agent;
  certDir: string;
  close(): Promise<void>;
}

export async function startSim(overrides: Partial<Config> = {}): Promise<SimFixture> {
  const certDir = await mkdtemp(path.join(tmpdir(), "herald-sim-"));
  const config: Config = {
    ...readEnv(configSpec, {}),
    logLevel: "silent",
    port: 0,
    adminPort: 0,
    certDir,
    seed: 1,
    ...overrides,
  };
  const sim = await start(config, { log: createLogger("provider-sim", "silent") });
  const ca = await readFile(sim.caCertPath, "utf8");
  const agent = new https.Agent({ ca });
  return {
    sim,
    admin: new SimAdminClient(`http://127.0.0.1:${sim.adminPort}`),
    ca,
    agent,
    certDir,
    close: async () => {
      agent.destroy();
      await sim.close();
      await rm(certDir, { recursive: true, force: true });
    },
  };
}

/**
 * The simulator of a test file: started (startSim with `overrides`) before its tests, closed
 * after them; with `clearFaults`, that platform's faults are cleared after each test.
 */
export function useSim(overrides: Partial<Config> = {}, opts: { clearFaults?: Platform } = {}): SimFixture {
  const f = suiteFixture(
    () => startSim(overrides),
    (started) => started.close(),
  );
  const platform = opts.clearFaults;
  if (platform) {
    afterEach(async () => {
      await f.admin.clearFaults(platform);
    });
  }
  return f;
}

/** A private key as PEM (PKCS #8), as an APNs .p8 or a service account's private_key holds it. */
export const pkcs8Pem = (key: KeyObject): string => key.export({ type: "pkcs8", format: "pem" }) as string;

/** A VAPID identity as an app server holds it, with the helpers to forge headers web-push would never send. */
export function vapidIdentity(subject = "mailto:ops@example.com") {
  const keys = webpush.generateVAPIDKeys();
  const details = { subject, ...keys };
  const point = Buffer.from(keys.publicKey, "base64url");
  const jwk = {
    kty: "EC",
    crv: "P-256",
    x: point.subarray(1, 33).toString("base64url"),
    y: point.subarray(33).toString("base64url"),
    d: keys.privateKey,
  };
  /** `Authorization: vapid …` with any claims, signed by this identity (or by `signer`'s key, announced as this one). */
  async function authorization(
    claims: Record<string, unknown>,
    signer: { privateKey: string; publicKey: string } = keys,
  ): Promise<string> {
    const signerPoint = Buffer.from(signer.publicKey, "base64url");
    const key = await importJWK(
      {
        ...jwk,
        x: signerPoint.subarray(1, 33).toString("base64url"),
        y: signerPoint.subarray(33).toString("base64url"),
        d: signer.privateKey,
      },
      "ES256",
    );
    const jwt = await new SignJWT(claims).setProtectedHeader({ typ: "JWT", alg: "ES256" }).sign(key);
    return `vapid t=${jwt}, k=${keys.publicKey}`;
  }
  return { keys, details, authorization };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP/1.1 request over TLS trusting only `ca`; for requests web-push cannot make. */
export function rawRequest(
  endpoint: string,
  opts: { ca: string; method?: string; headers?: Record<string, string | number>; body?: Buffer | string | null },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      endpoint,
      { method: opts.method ?? "POST", headers: opts.headers ?? {}, ca: opts.ca, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(opts.body ?? undefined);
  });
}
