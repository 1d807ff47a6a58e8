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
});
