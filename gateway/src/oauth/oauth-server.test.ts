import { generateKeyPairSync } from "node:crypto";
import type { JWK } from "jose";
import { describe, expect, it } from "vitest";
import type { IdentityClient } from "../backends.js";
import { OAuthServer, type OAuthServerOptions } from "./oauth-server.js";
import { type KeySet, publicPart } from "./signing-keys.js";

function keySet(version: string): KeySet {
  const privateJwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }) as JWK;
  const kid = `key-${version}`;
  return {
    version,
    keys: [
      {
        kid,
        active: true,
        privateJwk: { ...privateJwk, kid, alg: "ES256" },
        publicJwk: publicPart({ ...privateJwk, kid }),
      },
    ],
  };
}

function server(keys: () => KeySet) {
  return new OAuthServer({
    issuer: "http://127.0.0.1:1",
    identity: {} as IdentityClient,
    keys: { get: async () => keys() } as unknown as OAuthServerOptions["keys"],
    accessTokenTtlSeconds: 600,
    log: { error: () => undefined } as unknown as OAuthServerOptions["log"],
  });
}

describe("OAuthServer", () => {
  it("builds one provider for concurrent first requests, and a new one when the key set changes", async () => {
    let set = keySet("1");
    const oauth = server(() => set);
    const first = await Promise.all(Array.from({ length: 5 }, () => oauth.instance()));
    expect(new Set(first.map((c) => c.provider)).size).toBe(1);
    expect(await oauth.instance()).toBe(first[0]);
    set = keySet("2");
    const rotated = await oauth.instance();
    expect(rotated.version).toBe("2");
    expect(rotated.provider).not.toBe(first[0]!.provider);
  });
});
