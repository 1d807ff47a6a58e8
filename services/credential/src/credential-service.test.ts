import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { createLogger } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { generateSecret, hashSecret } from "./api-key-secret.js";
import { CredentialServiceImpl } from "./credential-service.js";
import { SealedBox } from "./sealed-box.js";
import type { ApiKeyRecord, CredentialStore } from "./store.js";

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
  const store = {
    findActiveApiKey: async (hash: Buffer) => {
      lookups.push(hash);
      return storedHash ? { ...key, secretHash: storedHash } : undefined;
    },
  } as Partial<CredentialStore> as CredentialStore;
  const service = new CredentialServiceImpl({
    store,
    sealedBox: new SealedBox(randomBytes(32)),
    defaultRateLimits: { server: 1000, client: 120 },
    log: createLogger("credential", "silent"),
    afterAppDeleted: () => undefined,
  });
  return { service, lookups };
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
