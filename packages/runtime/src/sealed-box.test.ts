import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SealedBox, SealedBoxError } from "./sealed-box.js";

describe("SealedBox", () => {
  const box = new SealedBox(randomBytes(32));
  const secret = "-----BEGIN PRIVATE KEY-----\nsecret material\n-----END PRIVATE KEY-----";

  it("round-trips and never stores the plaintext", () => {
    const sealed = box.seal(secret, "app-1:ios");
    expect(sealed.toString("utf8")).not.toContain("secret material");
    expect(box.open(sealed, "app-1:ios")).toBe(secret);
  });

  it("uses a fresh nonce for every seal", () => {
    const a = box.seal(secret, "app-1:ios");
    const b = box.seal(secret, "app-1:ios");
    expect(a.subarray(0, 12).equals(b.subarray(0, 12))).toBe(false);
    expect(a.equals(b)).toBe(false);
  });

  it("rejects a tampered blob", () => {
    const sealed = box.seal(secret, "app-1:ios");
    for (const index of [0, 15, sealed.length - 1]) {
      const tampered = Buffer.from(sealed);
      tampered[index] = (tampered[index] ?? 0) ^ 0x01;
      expect(() => box.open(tampered, "app-1:ios")).toThrow(SealedBoxError);
    }
  });

  it("rejects a blob opened with other associated data", () => {
    const sealed = box.seal(secret, "app-1:ios");
    expect(() => box.open(sealed, "app-2:ios")).toThrow(SealedBoxError);
    expect(() => box.open(sealed, "app-1:web")).toThrow(SealedBoxError);
  });

  it("rejects another master key, an unknown key version and truncated data", () => {
    const sealed = box.seal(secret, "app-1:ios");
    expect(() => new SealedBox(randomBytes(32)).open(sealed, "app-1:ios")).toThrow(SealedBoxError);
    expect(() => box.open(sealed, "app-1:ios", 2)).toThrow(/version 2/);
    expect(() => box.open(sealed.subarray(0, 20), "app-1:ios")).toThrow(/truncated/);
  });

  it("refuses a master key of the wrong length", () => {
    expect(() => new SealedBox(randomBytes(16))).toThrow(/32 bytes/);
  });

  describe("with several master-key versions", () => {
    const v1 = randomBytes(32);
    const v2 = randomBytes(32);
    const v3 = randomBytes(32);
    const old = new SealedBox(v1, 1);

    it("seals with the active key and opens blobs of every configured version", () => {
      const fromV1 = old.seal(secret, "app-1:ios");
      const fromV3 = new SealedBox(v3, 3).seal(secret, "app-1:web");
      const box = new SealedBox(v2, 2, [
        { version: 1, key: v1 },
        { version: 3, key: v3 },
      ]);
      expect(box.keyVersion).toBe(2);
      expect(box.versions).toEqual([2, 1, 3]);
      expect(box.open(fromV1, "app-1:ios", 1)).toBe(secret);
      expect(box.open(fromV3, "app-1:web", 3)).toBe(secret);
      const fresh = box.seal(secret, "app-1:ios");
      expect(box.open(fresh, "app-1:ios")).toBe(secret);
      expect(box.open(fresh, "app-1:ios", 2)).toBe(secret);
      // Only the key of the version the row names is tried.
      expect(() => box.open(fresh, "app-1:ios", 1)).toThrow(SealedBoxError);
      expect(() => box.open(fromV1, "app-1:ios", 2)).toThrow(SealedBoxError);
      expect(() => old.open(fresh, "app-1:ios", 1)).toThrow(SealedBoxError);
    });

    it("reseals an old blob under the active key, keeping its context", () => {
      const box = new SealedBox(v2, 2, [{ version: 1, key: v1 }]);
      const moved = box.reseal(old.seal(secret, "signing-key:k1"), "signing-key:k1", 1);
      expect(box.open(moved, "signing-key:k1", 2)).toBe(secret);
      expect(new SealedBox(v2, 2).open(moved, "signing-key:k1", 2)).toBe(secret);
      expect(() => box.open(moved, "signing-key:k2", 2)).toThrow(SealedBoxError);
      expect(() => new SealedBox(v1, 1).open(moved, "signing-key:k1", 1)).toThrow(SealedBoxError);
    });

    it("cannot move what no configured key opens: an unknown version or a wrong key", () => {
      const sealed = old.seal(secret, "app-1:ios");
      expect(() => new SealedBox(v2, 2).reseal(sealed, "app-1:ios", 1)).toThrow(/no master key of version 1/);
      const wrong = new SealedBox(v2, 2, [{ version: 1, key: v3 }]);
      expect(() => wrong.reseal(sealed, "app-1:ios", 1)).toThrow(/failed authentication under master key version 1/);
    });

    it("refuses a version given twice, versions out of the smallint range and short previous keys", () => {
      expect(() => new SealedBox(v2, 2, [{ version: 2, key: v1 }])).toThrow(/version 2 is given twice/);
      expect(() => new SealedBox(v2, 0)).toThrow(/from 1 to 32767/);
      expect(() => new SealedBox(v2, 2, [{ version: 32_768, key: v1 }])).toThrow(/from 1 to 32767/);
      expect(() => new SealedBox(v2, 2, [{ version: 1.5, key: v1 }])).toThrow(/integers/);
      expect(() => new SealedBox(v2, 2, [{ version: 1, key: randomBytes(31) }])).toThrow(/32 bytes/);
    });

    it("never puts a key into an error message", () => {
      const errors: string[] = [];
      const sealed = old.seal(secret, "app-1:ios");
      for (const attempt of [
        () => new SealedBox(v2, 2, [{ version: 1, key: v3 }]).open(sealed, "app-1:ios", 1),
        () => new SealedBox(v2, 2, [{ version: 2, key: v1 }]),
        () => new SealedBox(v2, 2).open(sealed, "app-1:ios", 7),
      ]) {
        try {
          attempt();
        } catch (err) {
          errors.push(String(err));
        }
      }
      expect(errors).toHaveLength(3);
      for (const key of [v1, v2, v3]) {
        for (const encoding of ["base64", "hex", "base64url"] as const) {
          expect(errors.join("\n")).not.toContain(key.toString(encoding));
        }
      }
    });
  });
});
