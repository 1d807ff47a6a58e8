import { randomBytes } from "node:crypto";
import { ConfigError, readEnv } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { configSpec, parsePreviousMasterKeys, sealedBoxOf } from "./config.js";

const b64 = () => randomBytes(32).toString("base64");

/** The message readEnv or sealedBoxOf fails with. */
function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("master key settings", () => {
  it("default to version 1 and no previous key", () => {
    const config = readEnv(configSpec, { HERALD_MASTER_KEY: b64() });
    expect(config.masterKeyVersion).toBe(1);
    expect(config.previousMasterKeys).toEqual([]);
    expect(sealedBoxOf(config).versions).toEqual([1]);
  });

  it("read the active version and the previous keys, in base64 or base64url, padded or not, spaces around entries", () => {
    const [k1, k3] = [randomBytes(32), randomBytes(32)];
    const config = readEnv(configSpec, {
      HERALD_MASTER_KEY: b64(),
      HERALD_MASTER_KEY_VERSION: "2",
      HERALD_MASTER_KEYS_PREVIOUS: ` 1:${k1.toString("base64")} ,\n3:${k3.toString("base64url")}\n`,
    });
    expect(config.masterKeyVersion).toBe(2);
    expect(config.previousMasterKeys).toEqual([
      { version: 1, key: k1 },
      { version: 3, key: k3 },
    ]);
    const box = sealedBoxOf(config);
    expect(box.keyVersion).toBe(2);
    expect(box.versions).toEqual([2, 1, 3]);
  });

  it("report every malformed entry by position and version, never a key", () => {
    const keys = [b64(), b64(), b64()];
    const raw = [
      `1:${keys[0]}`,
      keys[1], // no version
      `0:${keys[2]}`,
      `4:${keys[2]!.slice(0, 30)}`,
      `5:${keys[2]}!`,
      `1:${keys[1]}`,
      "",
      `70000:${keys[0]}`,
    ].join(",");
    const message = failure(() =>
      readEnv(configSpec, {
        HERALD_MASTER_KEY: b64(),
        HERALD_MASTER_KEYS_PREVIOUS: raw,
        HERALD_MASTER_KEY_VERSION: "x",
      }),
    );
    expect(message).toContain("HERALD_MASTER_KEY_VERSION: must be an integer");
    expect(message).toContain("HERALD_MASTER_KEYS_PREVIOUS: entry 2 must be <version>:<base64 key>");
    expect(message).toContain("entry 3: the version must be an integer from 1 to 32767");
    expect(message).toContain("entry 4 (version 4): the key must be 32 bytes, base64-encoded");
    expect(message).toContain("entry 5 (version 5): the key must be 32 bytes, base64-encoded");
    expect(message).toContain("entry 6: version 1 is listed twice");
    expect(message).toContain("entry 7 must be <version>:<base64 key>");
    expect(message).toContain("entry 8: the version must be an integer from 1 to 32767");
    for (const key of keys) {
      expect(message).not.toContain(key);
      expect(message).not.toContain(key.slice(0, 30));
    }
  });

  it("refuse a version out of range", () => {
    expect(failure(() => readEnv(configSpec, { HERALD_MASTER_KEY: b64(), HERALD_MASTER_KEY_VERSION: "0" }))).toMatch(
      /HERALD_MASTER_KEY_VERSION: must be between 1 and 32767/,
    );
    expect(() => parsePreviousMasterKeys(`32768:${b64()}`)).toThrow(/from 1 to 32767/);
  });

  it("refuse the active version among the previous ones, and one key under two versions", () => {
    const active = randomBytes(32);
    const old = randomBytes(32);
    const sameVersion = failure(() =>
      sealedBoxOf({ masterKey: active, masterKeyVersion: 2, previousMasterKeys: [{ version: 2, key: old }] }),
    );
    expect(sameVersion).toContain("HERALD_MASTER_KEYS_PREVIOUS: version 2 is the active HERALD_MASTER_KEY_VERSION");
    // The usual slip: a new version number given to the old key.
    const sameKey = failure(() =>
      sealedBoxOf({ masterKey: active, masterKeyVersion: 2, previousMasterKeys: [{ version: 1, key: active }] }),
    );
    expect(sameKey).toContain("version 1 has the same key as version 2");
    const twice = failure(() =>
      sealedBoxOf({
        masterKey: active,
        masterKeyVersion: 3,
        previousMasterKeys: [
          { version: 1, key: old },
          { version: 2, key: old },
        ],
      }),
    );
    expect(twice).toContain("version 2 has the same key as version 1");
    for (const message of [sameVersion, sameKey, twice]) {
      for (const key of [active, old]) expect(message).not.toContain(key.toString("base64"));
    }
  });

  it("check a config built by hand (tests, dev mode) as the env parser would", () => {
    expect(failure(() => sealedBoxOf({ masterKey: randomBytes(32), masterKeyVersion: 0 }))).toMatch(
      /HERALD_MASTER_KEY_VERSION: must be between 1 and 32767/,
    );
    expect(failure(() => sealedBoxOf({ masterKey: randomBytes(16) }))).toMatch(/HERALD_MASTER_KEY: must be 32 bytes/);
    expect(sealedBoxOf({ masterKey: randomBytes(32) }).versions).toEqual([1]);
  });
});
