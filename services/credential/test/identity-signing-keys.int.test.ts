import { createPrivateKey, createPublicKey, randomBytes, sign, verify } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Config } from "../src/config.js";
import { jwkThumbprint } from "../src/signing-keys.js";
import { rawPool } from "./harness.js";
import { cleanUp, type RunningIdentity, startIdentity, testConfig } from "./identity-support.js";

const configs: Config[] = [];
const running: RunningIdentity[] = [];

async function start(config: Config) {
  if (!configs.includes(config)) configs.push(config);
  const svc = await startIdentity(config);
  running.push(svc);
  return svc;
}

async function sql(config: Config, query: string, params: unknown[] = []) {
  const pool = rawPool(config);
  try {
    return (await pool.query(query, params)).rows;
  } finally {
    await pool.end();
  }
}

const keysOf = async (svc: RunningIdentity) => (await svc.identity.getSigningKeys({})).keys;

afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
  for (const config of configs) await cleanUp(config);
});

describe("signing keys", () => {
  it("makes one ES256 key when replicas ask at once, sealed at rest, kid = RFC 7638 thumbprint", async () => {
    const config = testConfig();
    const [a, b] = await Promise.all([start(config), start(config)]);
    const answers = await Promise.all([...Array(4)].flatMap(() => [keysOf(a), keysOf(b)]));
    const kids = new Set(answers.map((keys) => keys.map((k) => k.kid).join()));
    expect(kids.size).toBe(1);
    const [key] = answers[0]!;
    expect(answers[0]).toHaveLength(1);
    expect(key).toMatchObject({ active: true });
    expect(key!.retiredAt).toBeUndefined();

    const jwk = JSON.parse(key!.privateJwk);
    expect(jwk).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig", kid: key!.kid });
    expect(jwk.d).toEqual(expect.any(String));
    expect(jwkThumbprint(jwk)).toBe(key!.kid);
    const data = randomBytes(32);
    const signature = sign("sha256", data, {
      key: createPrivateKey({ key: jwk, format: "jwk" }),
      dsaEncoding: "ieee-p1363",
    });
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: "jwk" });
    expect(verify("sha256", data, { key: publicKey, dsaEncoding: "ieee-p1363" }, signature)).toBe(true);

    const rows = await sql(config, "SELECT kid, sealed, key_version FROM signing_keys");
    expect(rows).toHaveLength(1);
    expect(rows[0].key_version).toBe(1);
    expect(rows[0].sealed.toString("latin1")).not.toContain(jwk.d);
    expect(rows[0].sealed.toString("base64")).not.toContain(jwk.d);
    for (const svc of [a, b]) expect(svc.logs.text()).not.toContain(jwk.d);
  });

  it("rotates an active key older than the rotation period and keeps the old one for the retention period", async () => {
    const config = testConfig({ signingKeyRotationDays: 7, signingKeyRetentionHours: 3 });
    const svc = await start(config);
    const [first] = await keysOf(svc);
    expect((await keysOf(svc)).map((k) => k.kid)).toEqual([first!.kid]);

    await sql(config, "UPDATE signing_keys SET created_at = now() - interval '6 days 23 hours'");
    expect((await keysOf(svc)).map((k) => k.kid)).toEqual([first!.kid]);

    await sql(config, "UPDATE signing_keys SET created_at = now() - interval '7 days 1 minute'");
    const rotated = await keysOf(svc);
    expect(rotated.map((k) => [k.kid === first!.kid, k.active])).toEqual([
      [false, true],
      [true, false],
    ]);
    expect(rotated[1]!.retiredAt).toBeDefined();
    expect(rotated[1]!.privateJwk).toBe(first!.privateJwk);
    expect(svc.logs.text()).toContain("signing key rotated");

    await sql(config, "UPDATE signing_keys SET retired_at = now() - interval '2 hours 59 minutes' WHERE kid = $1", [
      first!.kid,
    ]);
    expect(await keysOf(svc)).toHaveLength(2);
    await sql(config, "UPDATE signing_keys SET retired_at = now() - interval '3 hours 1 minute' WHERE kid = $1", [
      first!.kid,
    ]);
    expect((await keysOf(svc)).map((k) => k.kid)).toEqual([rotated[0]!.kid]);
  });

  it("retires a key the current master key cannot open and makes a new one, without failing", async () => {
    const config = testConfig();
    const before = await start(config);
    const [old] = await keysOf(before);
    running.splice(running.indexOf(before), 1);
    await before.close();

    const replaced = await start({ ...config, masterKey: randomBytes(32) });
    const keys = await keysOf(replaced);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ active: true });
    expect(keys[0]!.kid).not.toBe(old!.kid);
    const rows = await sql(config, "SELECT kid, retired_at FROM signing_keys ORDER BY created_at");
    expect(rows.map((r) => [r.kid, r.retired_at !== null])).toEqual([
      [old!.kid, true],
      [keys[0]!.kid, false],
    ]);
    const logs = replaced.logs.text();
    expect(logs).toContain("cannot be decrypted with any configured master key");
    expect(logs).toContain(old!.kid);
    expect(logs).not.toContain(JSON.parse(old!.privateJwk).d);
    // Asking again changes nothing.
    expect((await keysOf(replaced)).map((k) => k.kid)).toEqual([keys[0]!.kid]);
  });
});
