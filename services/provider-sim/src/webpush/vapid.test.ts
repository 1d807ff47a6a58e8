import { describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { importApplicationServerKey, parseVapidAuthorization, verifyVapidToken } from "./vapid.js";

const JWT = "eyJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJ4In0.c2ln";
const K = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString("base64url");

describe("parseVapidAuthorization", () => {
  it("reads t and k in either order, any scheme case, optional spaces and quotes", () => {
    for (const header of [`vapid t=${JWT}, k=${K}`, `VAPID k=${K},t=${JWT}`, `vapid  t = ${JWT} ,  k="${K}"`]) {
      const r = parseVapidAuthorization(header);
      expect(r.ok, header).toBe(true);
      if (r.ok) {
        expect(r.value.token).toBe(JWT);
        expect(r.value.publicKey.length).toBe(65);
      }
    }
  });

  it("refuses missing or malformed credentials with 401", () => {
    const cases: [string | string[] | undefined, string][] = [
      [undefined, "MissingAuthorization"],
      [[`vapid t=${JWT}, k=${K}`, "x"], "MalformedAuthorization"],
      [`Bearer ${JWT}`, "UnsupportedAuthorizationScheme"],
      [`WebPush ${JWT}`, "UnsupportedAuthorizationScheme"],
      [`vapid t=${JWT}`, "MalformedAuthorization"],
      [`vapid k=${K}`, "MalformedAuthorization"],
      [`vapid t=${JWT}, t=${JWT}, k=${K}`, "MalformedAuthorization"],
      [`vapid t=not-a-jwt, k=${K}`, "MalformedAuthorization"],
      [`vapid t=${JWT}, k=${K.slice(4)}`, "MalformedAuthorization"],
      [`vapid t=${JWT}, k=${K}+`, "MalformedAuthorization"],
      [`vapid t=${JWT} k=${K}`, "MalformedAuthorization"],
    ];
    for (const [header, reason] of cases) {
      expect(parseVapidAuthorization(header), String(header)).toEqual({ ok: false, refusal: { status: 401, reason } });
    }
  });

  it("refuses a k that is not an uncompressed point", () => {
    const compressed = Buffer.concat([Buffer.from([2]), Buffer.alloc(64, 1)]).toString("base64url");
    expect(parseVapidAuthorization(`vapid t=${JWT}, k=${compressed}`).ok).toBe(false);
  });
});

describe("verifyVapidToken", () => {
  const aud = "https://127.0.0.1:4443";
  const now = 1_800_000_000;

  async function setup() {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = await exportJWK(publicKey);
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")]);
    const key = await importApplicationServerKey(point);
    const sign = (claims: Record<string, unknown>, signer = privateKey) =>
      new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "JWT" }).sign(signer);
    return { key, sign };
  }

  it("accepts a well-formed token", async () => {
    const { key, sign } = await setup();
    const token = await sign({ aud, exp: now + 12 * 3600, sub: "mailto:ops@example.com" });
    expect(await verifyVapidToken(token, key, aud, now)).toEqual({ ok: true, value: null });
    const https = await sign({ aud, exp: now + 24 * 3600, sub: "https://example.com/contact" });
    expect((await verifyVapidToken(https, key, aud, now)).ok).toBe(true);
  });

  it("refuses each bad claim with 403 and its own reason", async () => {
    const { key, sign } = await setup();
    const other = await generateKeyPair("ES256");
    const good = { aud, exp: now + 3600, sub: "mailto:ops@example.com" };
    const cases: [Promise<string>, string][] = [
      [sign(good, other.privateKey), "InvalidSignature"],
      [sign({ ...good, aud: "https://localhost:4443" }), "InvalidAudience"],
      [sign({ ...good, aud: [aud] }), "InvalidAudience"],
      [sign({ ...good, exp: now - 1 }), "ExpiredJWT"],
      [sign({ aud, sub: good.sub }), "MissingExpiration"],
      [sign({ ...good, exp: now + 24 * 3600 + 1 }), "ExpirationTooFar"],
      [sign({ ...good, sub: "http://example.com" }), "InvalidSubject"],
      [sign({ ...good, sub: "ops@example.com" }), "InvalidSubject"],
      [sign({ aud, exp: good.exp }), "InvalidSubject"],
    ];
    for (const [token, reason] of cases) {
      expect(await verifyVapidToken(await token, key, aud, now), reason).toEqual({
        ok: false,
        refusal: { status: 403, reason },
      });
    }
  });

  it("refuses a token signed with another algorithm", async () => {
    const { key } = await setup();
    const hs = await new SignJWT({ aud, exp: now + 60, sub: "mailto:a@b.c" })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new Uint8Array(32));
    expect(await verifyVapidToken(hs, key, aud, now)).toEqual({
      ok: false,
      refusal: { status: 403, reason: "InvalidJWT" },
    });
  });

  it("refuses a point that is not on the curve", async () => {
    await expect(importApplicationServerKey(Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]))).rejects.toThrow();
  });
});
