import { move } from "piscina";
import { type EncryptAnswer, type PackedJobs, packAnswers, unpackJobs } from "./batch-wire.js";
import { encrypt, InvalidSubscriberKeyError, PayloadTooLargeError } from "./ece.js";

const buffer = (a: Uint8Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** A batch of messages encrypted, one answer each, in order (the answers packed, see batch-wire.ts). */
export function encryptPacked(packed: PackedJobs): Uint8Array {
  const answers = unpackJobs(packed).map((job): EncryptAnswer => {
    try {
      return encrypt(buffer(job.plaintext), { publicKey: buffer(job.publicKey), authSecret: buffer(job.authSecret) });
    } catch (err) {
      if (err instanceof PayloadTooLargeError) return "PayloadTooLarge";
      if (err instanceof InvalidSubscriberKeyError) return "InvalidSubscriberKey";
      throw err;
    }
  });
  return packAnswers(answers);
}

/** The worker threads' task (piscina): the packed answers move back to the event loop's thread, uncopied. */
export default function encryptBatch(packed: PackedJobs): ReturnType<typeof move> {
  return move(encryptPacked(packed));
}
