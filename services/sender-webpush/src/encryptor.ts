import path from "node:path";
import { fileURLToPath } from "node:url";
import { Coalescer, type ItemResult } from "@herald/runtime";
import { Piscina } from "piscina";
import { type EncryptJob, type Failure, packJobs, unpackAnswers } from "./batch-wire.js";
import { encrypt, InvalidSubscriberKeyError, PayloadTooLargeError, type Subscriber } from "./ece.js";
import { MAX_PLAINTEXT } from "./ece-record.js";

/** RFC 8291 encryption of one message for one subscription. */
export interface Encryptor {
  encrypt(plaintext: Buffer, to: Subscriber): Promise<Buffer>;
  close(): Promise<void>;
}

/** Encrypts on the calling thread (WEBPUSH_ENCRYPT_THREADS=0, and tests). */
export const inlineEncryptor: Encryptor = {
  encrypt: async (plaintext, to) => encrypt(plaintext, to),
  close: async () => undefined,
};

/** Messages per hand-over to a worker: one structured clone and one wake-up for many. */
const MAX_BATCH = 32;

/**
 * Encrypts on worker threads (piscina): a message costs 100–200 µs of CPU (a P-256 key
 * pair and a key agreement per message, RFC 8291; ece.ts), more than sending it costs,
 * so the event loop only hands messages over and sends, and every core encrypts.
 * Concurrent calls leave in batches (the runtime's Coalescer); each thread has one batch
 * running and one waiting, and calls beyond that wait in a bounded queue (the sender's
 * in-flight limit bounds them anyway).
 */
export class WorkerEncryptor implements Encryptor {
  private readonly pool: Piscina;
  private readonly batches: Coalescer<EncryptJob, Buffer>;

  constructor(threads: number) {
    // The worker is this folder's encryption-worker module: .ts under tsx, .js when built.
    const here = fileURLToPath(import.meta.url);
    const source = path.extname(here) === ".ts";
    this.pool = new Piscina({
      filename: path.join(path.dirname(here), `encryption-worker${path.extname(here)}`),
      // Sources load through tsx, as dev mode runs them (a test runner's process may not have it).
      execArgv: source && !process.execArgv.includes("tsx") ? [...process.execArgv, "--import", "tsx"] : undefined,
      // Threads start with the first messages and leave after a minute without any: a
      // replica that sends no web push keeps no isolates (some 10 MB each).
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: 60_000,
    });
    this.batches = new Coalescer((jobs) => this.run(jobs), { maxBatch: MAX_BATCH, maxInFlight: threads * 2 });
  }

  encrypt(plaintext: Buffer, to: Subscriber): Promise<Buffer> {
    // Checked here too: an oversized message never costs a trip to a thread.
    if (plaintext.length > MAX_PLAINTEXT) return Promise.reject(new PayloadTooLargeError(plaintext.length));
    return this.batches.submit({ plaintext, publicKey: to.publicKey, authSecret: to.authSecret });
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  private async run(jobs: EncryptJob[]): Promise<ItemResult<Buffer>[]> {
    // One buffer each way, moved between the threads (batch-wire.ts).
    const packed = packJobs(jobs);
    const reply = (await this.pool.run(packed, { transferList: [packed.bytes.buffer as ArrayBuffer] })) as Uint8Array;
    return toResults(unpackAnswers(reply, jobs.length), jobs);
  }
}

/** A thread's answers as the callers' results; a failure names the message's size or key. */
export function toResults(answers: (Buffer | Failure)[], jobs: readonly EncryptJob[]): ItemResult<Buffer>[] {
  return answers.map((a, i): ItemResult<Buffer> => {
    if (a === "PayloadTooLarge") return { ok: false, error: new PayloadTooLargeError(jobs[i]!.plaintext.length) };
    if (a === "InvalidSubscriberKey") return { ok: false, error: new InvalidSubscriberKeyError() };
    return { ok: true, value: a };
  });
}

/** WorkerEncryptor with `threads` threads; inline when 0. */
export function createEncryptor(threads: number): Encryptor {
  return threads > 0 ? new WorkerEncryptor(threads) : inlineEncryptor;
}
