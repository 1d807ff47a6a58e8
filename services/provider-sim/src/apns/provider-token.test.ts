import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { ApnsKeyStore } from "./keys.js";
import { parseBearer, ProviderTokenVerifier } from "./provider-token.js";

const TEAM = "TEAM123456";
const KID = "KEY1234567";
const NOW = 1_800_000_000;

function p8(): { pem: string; key: KeyObject } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { pem: privateKey.export({ type: "pkcs8", format: "pem" }) as string, key: privateKey };
}

function setup() {
  const keys = new ApnsKeyStore();
  const signer = p8();
  keys.register({ team_id: TEAM, key_id: KID, topics: ["com.example.app"], p8: signer.pem });
  const verifier = new ProviderTokenVerifier(keys);
  const sign = (claims: Record<string, unknown>, opts: { kid?: string; key?: KeyObject; alg?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: opts.alg ?? "ES256", kid: opts.kid ?? KID })
      .sign(opts.key ?? signer.key);
  const reason = async (token: string, now = NOW) => {
    const r = await verifier.verify(token, now);
    return r.ok ? "ok" : `${r.refusal.status} ${r.refusal.reason}`;
  };
  return { keys, verifier, sign, reason };
}

describe("ProviderTokenVerifier", () => {
  it("accepts an ES256 token of a registered key with iss = team id and a fresh iat", async () => {
    const { verifier, sign } = setup();
    const token = await sign({ iss: TEAM, iat: NOW - 10 });
    expect(await verifier.verify(token, NOW)).toEqual({
      ok: true,
      value: { token, teamId: TEAM, keyId: KID, iat: NOW - 10 },
    });
  });

  it("refuses a token signed with another key, an unknown kid, another team or another algorithm", async () => {
    const { sign, reason } = setup();
    const other = p8();
    expect(await reason(await sign({ iss: TEAM, iat: NOW }, { key: other.key }))).toBe("403 InvalidProviderToken");
    expect(await reason(await sign({ iss: TEAM, iat: NOW }, { kid: "UNKNOWN123" }))).toBe("403 InvalidProviderToken");
    expect(await reason(await sign({ iss: "OTHERTEAM1", iat: NOW }))).toBe("403 InvalidProviderToken");
    const hs = await new SignJWT({ iss: TEAM, iat: NOW })
      .setProtectedHeader({ alg: "HS256", kid: KID })
      .sign(new Uint8Array(32));
    expect(await reason(hs)).toBe("403 InvalidProviderToken");
    expect(await reason("not.a.jwt!")).toBe("403 InvalidProviderToken");
  });

  it("needs an integer iat", async () => {
    const { sign, reason } = setup();
    expect(await reason(await sign({ iss: TEAM }))).toBe("403 InvalidProviderToken");
    expect(await reason(await sign({ iss: TEAM, iat: "1800000000" }))).toBe("403 InvalidProviderToken");
    expect(await reason(await sign({ iss: TEAM, iat: NOW + 0.5 }))).toBe("403 InvalidProviderToken");
  });

  it("refuses an iat older than an hour as expired, and one more than a minute ahead as invalid", async () => {
    const { sign, reason } = setup();
    expect(await reason(await sign({ iss: TEAM, iat: NOW - 3600 }))).toBe("ok");
    expect(await reason(await sign({ iss: TEAM, iat: NOW - 3601 }))).toBe("403 ExpiredProviderToken");
    expect(await reason(await sign({ iss: TEAM, iat: NOW + 60 }))).toBe("ok");
    expect(await reason(await sign({ iss: TEAM, iat: NOW + 61 }))).toBe("403 InvalidProviderToken");
  });

  it("applies the age rule on every use of a cached token", async () => {
    const { sign, reason } = setup();
    const token = await sign({ iss: TEAM, iat: NOW });
    expect(await reason(token, NOW)).toBe("ok");
    expect(await reason(token, NOW + 3601)).toBe("403 ExpiredProviderToken");
  });

  it("stops accepting a cached token once its key is revoked or replaced", async () => {
    const { keys, sign, reason } = setup();
    const token = await sign({ iss: TEAM, iat: NOW });
    expect(await reason(token)).toBe("ok");
    keys.register({ team_id: TEAM, key_id: KID, topics: ["com.example.app"], p8: p8().pem });
    expect(await reason(token)).toBe("403 InvalidProviderToken");
    keys.revoke(KID);
    expect(await reason(token)).toBe("403 InvalidProviderToken");
  });
});

describe("parseBearer", () => {
  it("reads `bearer <JWT>` in any case and refuses anything else as a missing token", () => {
    expect(parseBearer("bearer a.b.c")).toEqual({ ok: true, value: "a.b.c" });
    expect(parseBearer("Bearer a.b.c ")).toEqual({ ok: true, value: "a.b.c" });
    for (const header of [undefined, "", "bearer", "bearer ", "Basic abc", "a.b.c", ["bearer a.b.c", "bearer d.e.f"]]) {
      expect(parseBearer(header), String(header)).toEqual({
        ok: false,
        refusal: { status: 403, reason: "MissingProviderToken" },
      });
    }
  });
});

describe("ApnsKeyStore", () => {
  it("keeps only the public half of a p8 and refuses malformed registrations", () => {
    const keys = new ApnsKeyStore();
    const { pem } = p8();
    expect(keys.register({ team_id: TEAM, key_id: KID, topics: ["com.example.app"], p8: pem })).toEqual({
      team_id: TEAM,
      key_id: KID,
      topics: ["com.example.app"],
    });
    expect(keys.get(KID)!.publicKey.type).toBe("public");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "pem" });
    for (const bad of [
      { team_id: "team", key_id: KID, topics: ["a.b"], p8: pem },
      { team_id: TEAM, key_id: "KEY", topics: ["a.b"], p8: pem },
      { team_id: TEAM, key_id: KID, topics: [], p8: pem },
      { team_id: TEAM, key_id: KID, topics: ["has space"], p8: pem },
      { team_id: TEAM, key_id: KID, topics: ["a.b"] },
      { team_id: TEAM, key_id: KID, topics: ["a.b"], p8: pem, public_key_pem: pem },
      { team_id: TEAM, key_id: KID, topics: ["a.b"], public_key_pem: rsa },
      { team_id: TEAM, key_id: KID, topics: ["a.b"], p8: "-----BEGIN PRIVATE KEY-----\nxx\n-----END PRIVATE KEY-----" },
    ]) {
      expect(() => keys.register(bad), JSON.stringify(bad).slice(0, 80)).toThrow();
    }
  });
});
