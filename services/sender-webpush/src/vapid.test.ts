import { createECDH } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { publicKeyObject, VapidSigner, type VapidKeys } from "./vapid.js";

function keys(): VapidKeys {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return {
    publicKey: ecdh.getPublicKey().toString("base64url"),
    privateKey: ecdh.getPrivateKey().toString("base64url"),
    subject: "mailto:ops@example.com",
  };
}

const parse = (header: string) => /^vapid t=([^,]+), k=(.+)$/.exec(header)!;

describe("VAPID signer", () => {
  it("signs an ES256 JWT for the endpoint's origin that verifies with the public key", async () => {
    const k = keys();
    const header = await new VapidSigner().authorization("https://push.example.net:8443/wp/abc?x=1", k);
    const [, jwt, pub] = parse(header);
    expect(pub).toBe(k.publicKey);
    expect(decodeProtectedHeader(jwt!)).toMatchObject({ alg: "ES256", typ: "JWT" });
    const { payload } = await jwtVerify(jwt!, publicKeyObject(k.publicKey), {
      audience: "https://push.example.net:8443",
    });
    expect(payload.sub).toBe(k.subject);
    expect(payload.exp! - Date.now() / 1000).toBeLessThanOrEqual(24 * 3600);
  });

  it("reuses one JWT per origin and key until near expiry, then renews", async () => {
    let now = 1_800_000_000_000;
    const signer = new VapidSigner(() => now);
    const k = keys();
    const first = await signer.authorization("https://a.example/1", k);
    expect(await signer.authorization("https://a.example/2", k)).toBe(first);
    expect(await signer.authorization(new URL("https://a.example/5?x"), k)).toBe(first);
    expect(await signer.authorization("https://b.example/1", k)).not.toBe(first);
    now += 10 * 3600 * 1000;
    expect(await signer.authorization("https://a.example/3", k)).toBe(first);
    now += 1.5 * 3600 * 1000;
    const renewed = await signer.authorization("https://a.example/4", k);
    expect(renewed).not.toBe(first);
    expect(decodeJwt(parse(renewed)[1]!).exp).toBe(Math.floor(now / 1000) + 12 * 3600);
  });

  it("signs once for concurrent requests", async () => {
    const signer = new VapidSigner();
    const k = keys();
    const headers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signer.authorization(`https://c.example/${i}`, k)),
    );
    expect(new Set(headers).size).toBe(1);
  });
});
