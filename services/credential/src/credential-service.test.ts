import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { CredentialService } from "@herald/proto/credential";
import { createLogger, errorInterceptor } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { LogCapture } from "../../../test/support/log-capture.js";
import { generateSecret, hashSecret } from "./api-key-secret.js";
import { CredentialServiceImpl } from "./credential-service.js";
import { SealedBox } from "@herald/runtime";
import type { ApiKeyRecord, CredentialStore } from "./credential-store.js";

const key: ApiKeyRecord = {
  id: "8a7c3b1e-0000-4000-8000-000000000001",
  orgId: "8a7c3b1e-0000-4000-8000-000000000002",
  appId: null,
  scope: "org",
  kind: "server",
  name: "k",
  prefix: "hk_live_abcd",
  rateLimitPerMinute: null,
  createdAt: new Date(),
  revokedAt: null,
};

/** The service over a store whose lookup returns a row with the given stored hash. */
function serviceFinding(storedHash: Buffer | undefined) {
  const lookups: Buffer[] = [];
  const service = serviceOver({
    findActiveApiKey: async (hash: Buffer) => {
      lookups.push(hash);
      return storedHash ? { ...key, secretHash: storedHash } : undefined;
    },
  });
  return { service, lookups };
}

function serviceOver(store: Partial<CredentialStore>, log = createLogger("credential", "silent")) {
  return new CredentialServiceImpl({
    store: store as CredentialStore,
    sealedBox: new SealedBox(randomBytes(32)),
    defaultRateLimits: { server: 1000, client: 120 },
    log,
    afterAppDeleted: () => undefined,
  });
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e).code,
  );

describe("verifyApiKey", () => {
  it("looks keys up by the SHA-256 of the secret only, and accepts the row whose stored hash matches", async () => {
    const secret = generateSecret();
    const { service, lookups } = serviceFinding(hashSecret(secret));
    const { principal } = await service.verifyApiKey({ secret } as Parameters<typeof service.verifyApiKey>[0]);
    expect(principal).toMatchObject({ orgId: key.orgId, keyId: key.id });
    expect(lookups).toEqual([hashSecret(secret)]);
    expect(JSON.stringify(principal)).not.toContain(secret);
  });

  it("refuses a row whose stored hash is not the secret's, and unknown or malformed secrets", async () => {
    const secret = generateSecret();
    const verify = (s: string, stored: Buffer | undefined) =>
      serviceFinding(stored).service.verifyApiKey({ secret: s } as Parameters<
        CredentialServiceImpl["verifyApiKey"]
      >[0]);
    expect(await code(verify(secret, hashSecret(generateSecret())))).toBe(Code.Unauthenticated);
    expect(await code(verify(secret, undefined))).toBe(Code.Unauthenticated);
    expect(await code(verify("hk_live_short", hashSecret("hk_live_short")))).toBe(Code.Unauthenticated);
  });
});

// Through Connect's router and the server's error interceptor, as the service is served,
// but in memory: a port would add nothing to what reaches the caller.
describe("over Connect (in memory)", () => {
  function clientOver(store: Partial<CredentialStore>) {
    const logs = new LogCapture();
    const log = createLogger("credential", "error", logs);
    const transport = createRouterTransport((router) => router.service(CredentialService, serviceOver(store, log)), {
      router: { interceptors: [errorInterceptor(log)] },
    });
    return { client: createClient(CredentialService, transport), logs };
  }
  const failure = (p: Promise<unknown>) => p.then(() => undefined, ConnectError.from);

  it("answers a store failure as a bare INTERNAL: its detail stays in the log", async () => {
    const { client, logs } = clientOver({
      findActiveApiKey: async () => {
        throw new Error("connect ECONNREFUSED 10.0.0.7:5432");
      },
    });
    const err = await failure(client.verifyApiKey({ secret: generateSecret() }));
    expect(err).toMatchObject({ code: Code.Internal, rawMessage: "internal error" });
    expect(JSON.stringify(err)).not.toContain("10.0.0.7");
    expect(logs.text()).toContain("10.0.0.7");
  });

  it("passes a deliberate refusal through unchanged, logging nothing", async () => {
    const { client, logs } = clientOver({ findActiveApiKey: async () => undefined });
    const err = await failure(client.verifyApiKey({ secret: generateSecret() }));
    expect(err).toMatchObject({ code: Code.Unauthenticated, rawMessage: "invalid API key" });
    expect(logs.lines).toEqual([]);
  });
});
