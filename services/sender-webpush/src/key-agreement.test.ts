import { createECDH } from "node:crypto";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { packageDir } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import {
  type KeyAgreement,
  loadKeyAgreement,
  NATIVE_ADDON,
  nativeAgreement,
  nodeCryptoAgreement,
} from "./key-agreement.js";

const addon = path.join(packageDir("@herald/sender-webpush"), NATIVE_ADDON);

function subscriber() {
  const ecdh = createECDH("prime256v1");
  return { ecdh, publicKey: ecdh.generateKeys() };
}

function agreeWith(agreement: KeyAgreement, publicKey: Buffer) {
  const senderPublic = Buffer.alloc(65);
  const secret = Buffer.alloc(32);
  const ok = agreement.agree(publicKey, senderPublic, secret);
  return { ok, senderPublic, secret };
}

describe("key agreement", () => {
  it("is the native addon: npm run build, npm run dev and npm test build it (node scripts/native-build.mjs)", () => {
    const loaded = loadKeyAgreement();
    expect(loaded.fallbackReason).toBeUndefined();
    expect(loaded.kind).toBe("native");
  });

  for (const [name, make] of [
    ["native addon", () => nativeAgreement(addon)],
    ["node:crypto", () => nodeCryptoAgreement()],
  ] as const) {
    describe(name, () => {
      it("agrees on the secret the subscriber computes from our public key, with a fresh key pair every call", () => {
        const agreement = make();
        const s = subscriber();
        const seen = new Set<string>();
        for (let i = 0; i < 20; i++) {
          const { ok, senderPublic, secret } = agreeWith(agreement, s.publicKey);
          expect(ok).toBe(true);
          expect(senderPublic[0]).toBe(4);
          expect(s.ecdh.computeSecret(senderPublic).equals(secret)).toBe(true);
          seen.add(senderPublic.toString("hex"));
        }
        expect(seen.size).toBe(20);
      });

      it("refuses what is not an uncompressed P-256 point, and agrees again after", () => {
        const agreement = make();
        const s = subscriber();
        const compressed = createECDH("prime256v1");
        compressed.generateKeys();
        for (const bad of [
          Buffer.alloc(65, 4), // not on the curve
          Buffer.concat([Buffer.of(4), Buffer.alloc(64, 0xff)]), // coordinates beyond the field
          Buffer.concat([Buffer.of(6), s.publicKey.subarray(1)]), // hybrid form
          compressed.getPublicKey(undefined, "compressed"),
          s.publicKey.subarray(0, 64),
          Buffer.of(0), // the point at infinity
          Buffer.alloc(0),
        ]) {
          expect(agreeWith(agreement, bad).ok, bad.toString("hex")).toBe(false);
        }
        const { ok, senderPublic, secret } = agreeWith(agreement, s.publicKey);
        expect(ok).toBe(true);
        expect(s.ecdh.computeSecret(senderPublic).equals(secret)).toBe(true);
      });
    });
  }

  it("the addon refuses outputs of the wrong size or kind with a TypeError", () => {
    const agreement = nativeAgreement(addon);
    const { publicKey } = subscriber();
    expect(() => agreement.agree(publicKey, Buffer.alloc(64), Buffer.alloc(32))).toThrow(TypeError);
    expect(() => agreement.agree(publicKey, Buffer.alloc(65), Buffer.alloc(31))).toThrow(TypeError);
    expect(() => agreement.agree("key" as unknown as Buffer, Buffer.alloc(65), Buffer.alloc(32))).toThrow(TypeError);
  });

  it("the addon works in worker threads at once, each with its own state", async () => {
    // Each thread loads the addon and agrees 200 times with the same subscriber, checking every secret.
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      const { createECDH } = require("node:crypto");
      const { agree } = require(workerData.addon);
      const s = createECDH("prime256v1");
      const publicKey = s.generateKeys();
      let good = 0;
      for (let i = 0; i < 200; i++) {
        const pub = Buffer.alloc(65), secret = Buffer.alloc(32);
        if (agree(publicKey, pub, secret) === 0 && s.computeSecret(pub).equals(secret)) good++;
      }
      parentPort.postMessage(good);
    `;
    const runs = Array.from({ length: 3 }, () => {
      const worker = new Worker(code, { eval: true, workerData: { addon } });
      return new Promise<number>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      }).finally(() => worker.terminate());
    });
    expect(await Promise.all(runs)).toEqual([200, 200, 200]);
  });
});
