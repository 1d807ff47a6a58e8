import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Platform } from "@herald/proto/common";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import { DeliveryBatchSchema, OutcomeKind, type DeliveryBatch } from "@herald/proto/delivery";
import { sleep } from "@herald/runtime";
import {
  BatchProcessor,
  type BatchResult,
  CredentialsCache,
  Limiter,
  type Provider,
  type RetryPolicy,
} from "@herald/sender";
import fc from "fast-check";
import { expect } from "vitest";
import { fuzzParams, reportFigures } from "./fuzz-settings.js";
import { type FuzzPeer, startFuzzPeer } from "./h2-fuzz-peer.js";
import { suiteFixture } from "./suite-fixture.js";
import { eventually } from "./wait.js";

/**
 * What the senders' fuzz suites share: a batch processor around a real provider (the
 * sender's own classes, its retries made quick), a deadline per batch, the invariants
 * every batch's result must keep, and a watch for crashes the process would die of.
 */

/** Retries as in production, with waits cut short: the fuzzing is about answers, not time. */
export const FUZZ_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxElapsedMs: 10_000 };
/** How long one batch may take: several request timeouts and retries, and nothing near a hang. */
export const BATCH_DEADLINE_MS = 15_000;
/** Reasons end up in the campaign's outcomes table and in logs: short, printable text. */
export const MAX_REASON_CHARS = 512;

const fastSleep = (ms: number, signal: AbortSignal) => sleep(Math.min(ms, 5), signal);

/** A batch processor for one provider and one set of credentials, as a sender builds it. */
export function fuzzProcessor<C>(
  provider: Provider<C>,
  platform: Platform,
  credentials: GetSendCredentialsResponse,
): BatchProcessor<C> {
  return new BatchProcessor<C>({
    provider,
    credentials: new CredentialsCache<C>(
      async () => credentials,
      (r) => provider.prepareCredentials(r),
      platform,
    ),
    policy: FUZZ_POLICY,
    sendLimiter: new Limiter(100),
    sleep: fastSleep,
  });
}

export function fuzzBatch(platform: Platform, tokens: string[], dataJson = ""): DeliveryBatch {
  return create(DeliveryBatchSchema, {
    campaignId: randomUUID(),
    appId: randomUUID(),
    platform,
    sequence: 1n,
    payloads: [{ index: 0, title: "Hello", body: "Fuzz" }],
    targets: tokens.map((pushToken) => ({ deviceId: randomUUID(), pushToken, payloadIndex: 0 })),
    dataJson,
    ttlSeconds: 3600,
    createdAt: timestampFromDate(new Date()),
  });
}

/** Processes `batch`, failing when it is not done within the deadline (its sends are then aborted). */
export async function processWithin<C>(processor: BatchProcessor<C>, batch: DeliveryBatch): Promise<BatchResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error("deadline")), BATCH_DEADLINE_MS);
  try {
    return await processor.process(batch, abort.signal);
  } catch (err) {
    if (abort.signal.aborted) throw new Error(`the batch was not done within ${BATCH_DEADLINE_MS} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

const KINDS = new Set([OutcomeKind.DELIVERED, OutcomeKind.FAILED, OutcomeKind.BOUNCED, OutcomeKind.THROTTLED]);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Every way a batch's result breaks the sender's promises (empty: none). */
export function outcomeProblems(batch: DeliveryBatch, result: BatchResult): string[] {
  const problems: string[] = [];
  const expected = batch.targets.map((t) => t.deviceId).sort();
  const got = result.outcomes.map((o) => o.deviceId).sort();
  if (JSON.stringify(got) !== JSON.stringify(expected))
    problems.push(`${got.length} outcomes for ${expected.length} devices, or not one per device`);
  const bounced = new Set<string>();
  for (const o of result.outcomes) {
    if (!KINDS.has(o.kind)) problems.push(`outcome of kind ${o.kind}`);
    if (o.kind === OutcomeKind.BOUNCED) bounced.add(o.deviceId);
    if (o.kind === OutcomeKind.DELIVERED ? o.reason !== "" : o.reason === "")
      problems.push(`${OutcomeKind[o.kind]} with reason ${JSON.stringify(o.reason)}`);
    if (o.reason.length > MAX_REASON_CHARS) problems.push(`a reason of ${o.reason.length} characters`);
    if (CONTROL.test(o.reason))
      problems.push(`a reason with control characters: ${JSON.stringify(o.reason.slice(0, 80))}`);
    if (o.attempts > FUZZ_POLICY.maxAttempts) problems.push(`${o.attempts} attempts`);
  }
  const invalidated = result.invalidations.map((i) => i.deviceId);
  if (new Set(invalidated).size !== invalidated.length) problems.push("a device invalidated twice");
  for (const id of invalidated) if (!bounced.has(id)) problems.push("an invalidation without a bounce");
  return problems;
}

/** Waits until `idle()` holds (the pool has no streams and no queue left), or fails. */
export async function settles(idle: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  if (!(await eventually(idle, timeoutMs, 10))) throw new Error(`${what} still busy ${timeoutMs} ms after the batch`);
}

/** Unhandled rejections and uncaught exceptions while it watches: any is a crash in production. */
export function watchProcess(): { errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const onError = (err: unknown) => errors.push(err);
  process.on("unhandledRejection", onError);
  process.on("uncaughtException", onError);
  return {
    errors,
    stop() {
      process.off("unhandledRejection", onError);
      process.off("uncaughtException", onError);
    },
  };
}

/** The figures each sender's suite prints and reports. */
export class ProviderFigures {
  batches = 0;
  devices = 0;
  readonly outcomes: Record<string, number> = {};

  count(result: BatchResult): void {
    this.batches++;
    this.devices += result.outcomes.length;
    for (const o of result.outcomes) {
      const kind = OutcomeKind[o.kind] ?? String(o.kind);
      this.outcomes[kind] = (this.outcomes[kind] ?? 0) + 1;
    }
  }
}

/**
 * The misbehaving peer of a sender's suite, started before its tests and closed after them,
 * and the figures its examples count, reported once the suite is done under `suite`, with
 * what `answers` says of the peer's answers (how many were fuzzed, and of what kind).
 */
export function useFuzzPeer(
  suite: string,
  answers: (seen: FuzzPeer["seen"]) => Record<string, number>,
): { peer: FuzzPeer; figures: ProviderFigures } {
  const figures = new ProviderFigures();
  const peer = suiteFixture(startFuzzPeer, async (started) => {
    reportFigures(suite, {
      batches: figures.batches,
      "outcomes checked": figures.devices,
      ...answers(started.seen),
      outcomes: JSON.stringify(figures.outcomes),
    });
    await started.close();
  });
  return { peer, figures };
}

/** An HTTP/2 pool's settings for fuzzing: quick request timeouts, no pings, room for every stream. */
export const FUZZ_POOL = {
  maxQueued: 10_000,
  requestTimeoutMs: 300,
  connectTimeoutMs: 2_000,
  idleTimeoutMs: 60_000,
  pingIntervalMs: 0,
} as const;

/** One example of a sender's property: the provider under test and the pool whose work must drain. */
export interface ProviderExample<C> {
  provider: Provider<C>;
  pool: { stats(): { streams: number; queued: number } };
  /** The suite's own checks once the batch is done. */
  check?: () => void;
  /** Frees what the provider does not own, after it closed. */
  close?: () => void;
}

/**
 * Runs one example: a batch of `tokens` through the framework with a fresh provider;
 * every device gets exactly one valid outcome, the pool drains, the provider closes.
 */
export async function runExample<C>(
  example: ProviderExample<C>,
  batch: { platform: Platform; credentials: GetSendCredentialsResponse; tokens: string[]; dataJson: string },
  figures: ProviderFigures,
): Promise<void> {
  const { provider, pool } = example;
  try {
    const sent = fuzzBatch(batch.platform, batch.tokens, batch.dataJson);
    const result = await processWithin(fuzzProcessor(provider, batch.platform, batch.credentials), sent);
    figures.count(result);
    expect(outcomeProblems(sent, result)).toEqual([]);
    example.check?.();
    await settles(() => pool.stats().streams === 0 && pool.stats().queued === 0, "the pool");
  } finally {
    await provider.close();
    example.close?.();
  }
}

/**
 * Checks a sender's property with the suites' settings (seed, scale, first failure ends
 * the run); an example also fails on any unhandled rejection or uncaught exception.
 */
export async function assertProperty<T>(
  arbitrary: fc.Arbitrary<T>,
  example: (value: T) => Promise<void>,
  runs = 25,
): Promise<void> {
  const crashes = watchProcess();
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (value) => {
        await example(value);
        expect(crashes.errors).toEqual([]);
      }),
      { ...fuzzParams(runs), endOnFailure: true },
    );
  } finally {
    crashes.stop();
  }
}
