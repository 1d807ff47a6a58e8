import { createECDH, randomBytes } from "node:crypto";
import ece from "http_ece";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidSubscriberKeyError, PayloadTooLargeError } from "./ece.js";
import { MAX_PLAINTEXT } from "./ece-record.js";
import { packJobs, unpackAnswers } from "./batch-wire.js";
import { toResults, WorkerEncryptor } from "./encryptor.js";
import { encryptPacked } from "./encryption-worker.js";

function subscriber() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  return { ecdh, publicKey: ecdh.getPublicKey(), authSecret: randomBytes(16) };
}

describe("WorkerEncryptor", () => {
  const encryptor = new WorkerEncryptor(2);
  afterAll(() => encryptor.close());

  it("encrypts concurrent messages on worker threads, each for its own subscriber", async () => {
    const subs = Array.from({ length: 300 }, subscriber);
    const bodies = await Promise.all(subs.map((s, i) => encryptor.encrypt(Buffer.from(`message ${i}`), s)));
    bodies.forEach((body, i) => {
      const s = subs[i]!;
      const plain = ece.decrypt(body, { version: "aes128gcm", privateKey: s.ecdh, authSecret: s.authSecret });
      expect(plain.toString()).toBe(`message ${i}`);
    });
  });

  it("fails only the message whose key is not a P-256 point, or whose payload is too large", async () => {
    const good = subscriber();
    const results = await Promise.allSettled([
      encryptor.encrypt(Buffer.from("a"), good),
      encryptor.encrypt(Buffer.from("b"), { ...subscriber(), publicKey: Buffer.alloc(65, 4) }),
      encryptor.encrypt(Buffer.alloc(MAX_PLAINTEXT + 1), good),
      encryptor.encrypt(Buffer.from("d"), good),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidSubscriberKeyError);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(PayloadTooLargeError);
  });

  it("reports a thread's PayloadTooLarge with the message's size (the thread checks again)", () => {
    // encrypt() refuses an oversized message before it reaches a thread: encrypt a batch as a thread does.
    const { publicKey, authSecret } = subscriber();
    const jobs = [
      { plaintext: Buffer.alloc(MAX_PLAINTEXT + 7), publicKey, authSecret },
      { plaintext: Buffer.from("fits"), publicKey, authSecret },
    ];
    const [tooLarge, fits] = toResults(unpackAnswers(encryptPacked(packJobs(jobs)), 2), jobs);
    expect(tooLarge).toMatchObject({ ok: false, error: expect.any(PayloadTooLargeError) });
    expect((tooLarge as { error: PayloadTooLargeError }).error.size).toBe(MAX_PLAINTEXT + 7);
    expect(fits).toMatchObject({ ok: true });
  });
});
