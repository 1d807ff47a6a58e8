import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type EncryptAnswer, packAnswers, packJobs, unpackAnswers, unpackJobs } from "./batch-wire.js";

describe("a batch crossing to an encryption thread", () => {
  it("packs jobs whose bytes are views of a shared pool into exactly their bytes, and unpacks them", () => {
    // Buffer.from(string) of a few bytes is a view of Node's pool: a clone would copy all of it.
    const jobs = Array.from({ length: 5 }, (_, i) => ({
      plaintext: Buffer.from(`message ${i}`),
      publicKey: Buffer.from(randomBytes(65).toString("base64url"), "base64url"),
      authSecret: Buffer.from(randomBytes(16).toString("base64url"), "base64url"),
    }));
    expect(jobs[0]!.publicKey.buffer.byteLength).toBeGreaterThan(65);
    const packed = packJobs(jobs);
    expect(packed.bytes.buffer.byteLength).toBe(jobs.reduce((n, j) => n + j.plaintext.length + 65 + 16, 0));
    expect(unpackJobs(packed).map((j) => [j.plaintext, j.publicKey, j.authSecret].map((b) => Buffer.from(b)))).toEqual(
      jobs.map((j) => [j.plaintext, j.publicKey, j.authSecret]),
    );
  });

  it("packs bodies and failures in order, and unpacks them", () => {
    const answers: EncryptAnswer[] = [
      randomBytes(120),
      "InvalidSubscriberKey",
      Buffer.alloc(0),
      "PayloadTooLarge",
      randomBytes(300),
    ];
    const packed = packAnswers(answers);
    expect(packed.buffer.byteLength).toBe(5 * 4 + 120 + 300);
    expect(unpackAnswers(packed, answers.length)).toEqual(answers);
  });
});
