import { encrypt, InvalidSubscriberKeyError, PayloadTooLargeError } from "./ece.js";

/** One message to encrypt, as it crosses to a worker thread (structured clone: Buffers arrive as Uint8Arrays). */
export interface EncryptJob {
  plaintext: Uint8Array;
  publicKey: Uint8Array;
  authSecret: Uint8Array;
}

/** The body, or why this message cannot be encrypted. */
export type EncryptAnswer = { body: Uint8Array } | { error: "PayloadTooLarge" | "InvalidSubscriberKey" };

const buffer = (a: Uint8Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** The worker threads' task (piscina): a batch of messages, one answer each, in order. */
export default function encryptBatch(jobs: EncryptJob[]): EncryptAnswer[] {
  return jobs.map((job): EncryptAnswer => {
    try {
      return {
        body: encrypt(buffer(job.plaintext), { publicKey: buffer(job.publicKey), authSecret: buffer(job.authSecret) }),
      };
    } catch (err) {
      if (err instanceof PayloadTooLargeError) return { error: "PayloadTooLarge" };
      if (err instanceof InvalidSubscriberKeyError) return { error: "InvalidSubscriberKey" };
      throw err;
    }
  });
}
