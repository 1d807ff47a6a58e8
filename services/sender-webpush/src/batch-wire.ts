/**
 * How a batch of messages crosses to an encryption thread and back: packed into one
 * buffer each way and transferred, not cloned. A structured clone copies the whole
 * ArrayBuffer under a view, and Node's small Buffers are views of a shared 64 KB pool:
 * cloned one by one, a message's plaintext, key and auth secret copied up to 192 KB, and
 * its body as much on the way back, each copy a fresh allocation outside V8's heap that
 * hastens its collections. Packed, a batch of 32 messages is some 12 KB each way, moved
 * without a copy.
 */

/** One message to encrypt. */
export interface EncryptJob {
  plaintext: Uint8Array;
  publicKey: Uint8Array;
  authSecret: Uint8Array;
}

/** Jobs packed: each one's plaintext, public key and auth secret in turn; `lengths` holds three per job. */
export interface PackedJobs {
  bytes: Uint8Array;
  lengths: number[];
}

/** Why a message cannot be encrypted, as its answer says it (in a packed answer: a negative length). */
export const FAILURES = ["PayloadTooLarge", "InvalidSubscriberKey"] as const;
export type Failure = (typeof FAILURES)[number];
/** The body, or why there is none. */
export type EncryptAnswer = Uint8Array | Failure;

const LENGTH_BYTES = 4;

export function packJobs(jobs: readonly EncryptJob[]): PackedJobs {
  const lengths = jobs.flatMap((j) => [j.plaintext.length, j.publicKey.length, j.authSecret.length]);
  // Not from the pool: the whole buffer moves to the thread.
  const bytes = Buffer.allocUnsafeSlow(lengths.reduce((a, b) => a + b, 0));
  let at = 0;
  for (const j of jobs) {
    for (const part of [j.plaintext, j.publicKey, j.authSecret]) {
      bytes.set(part, at);
      at += part.length;
    }
  }
  return { bytes, lengths };
}

/** The jobs of a packed batch, as views into its bytes. */
export function unpackJobs(packed: PackedJobs): EncryptJob[] {
  const { bytes, lengths } = packed;
  const jobs: EncryptJob[] = [];
  let at = 0;
  const next = (length: number) => bytes.subarray(at, (at += length));
  for (let i = 0; i < lengths.length; i += 3) {
    jobs.push({ plaintext: next(lengths[i]!), publicKey: next(lengths[i + 1]!), authSecret: next(lengths[i + 2]!) });
  }
  return jobs;
}

/** Answers packed: a 32-bit length per answer (a body's, or −1 − the failure's index), then the bodies. */
export function packAnswers(answers: readonly EncryptAnswer[]): Uint8Array {
  const size = answers.reduce((n, a) => n + LENGTH_BYTES + (typeof a === "string" ? 0 : a.length), 0);
  const out = Buffer.allocUnsafeSlow(size);
  let at = answers.length * LENGTH_BYTES;
  answers.forEach((a, i) => {
    if (typeof a === "string") {
      out.writeInt32LE(-1 - FAILURES.indexOf(a), i * LENGTH_BYTES);
    } else {
      out.writeInt32LE(a.length, i * LENGTH_BYTES);
      out.set(a, at);
      at += a.length;
    }
  });
  return out;
}

/** The answers of a packed reply; bodies are Buffers over its memory. */
export function unpackAnswers(packed: Uint8Array, count: number): (Buffer | Failure)[] {
  const view = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  let at = count * LENGTH_BYTES;
  return Array.from({ length: count }, (_, i) => {
    const length = view.readInt32LE(i * LENGTH_BYTES);
    if (length < 0) return FAILURES[-1 - length]!;
    return view.subarray(at, (at += length));
  });
}
