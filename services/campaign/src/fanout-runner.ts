import { Code, ConnectError } from "@connectrpc/connect";
import { ATTR, equalJitter, inSpan, ROOT_CONTEXT, sleep, trace, traceContextFrom, type Logger } from "@herald/runtime";
import type { AudienceDevice, AudienceSource } from "./audience-source.js";
import { buildDeliveryBatch } from "./batch-builder.js";
import type { BatchPublisher } from "./batch-publisher.js";
import { PLATFORM_ORDER, type Target } from "./campaign.js";
import { LeaseLostError, type FanoutJob, type FanoutStore } from "./fanout-store.js";
import type { CampaignMetrics } from "./metrics.js";

export interface FanoutRunnerDeps {
  store: FanoutStore;
  audience: AudienceSource;
  publisher: BatchPublisher;
  /** Devices per StreamAudience message. */
  pageSize: number;
  /** Targets per delivery batch. */
  batchSize: number;
  leaseMs: number;
  metrics: CampaignMetrics;
  log: Logger;
}

/** How a run ended, for the log and the duration metric. */
type RunResult = "completed" | "published" | "failed" | "stopped" | "lease_lost";

/** Far below NATS' default 1 MB max_payload, whatever the tokens' length. */
const MAX_BATCH_BYTES = 512 * 1024;
/** Waits between resumptions of an interrupted run. */
const BACKOFF = { baseMs: 500, capMs: 15_000 };

/**
 * Fans one claimed campaign out: per platform, walks the audience one page at a time and
 * publishes batches write-ahead (pending record → publish → commit), so a crash at any
 * point loses nothing, publishes nothing twice within the stream's duplicate window, and
 * keeps published_count exact. Transient failures (registry or NATS down) are retried
 * from the stored state for as long as the lease is held.
 */
export class FanoutRunner {
  constructor(private readonly deps: FanoutRunnerDeps) {}

  /** Never throws; returns when the fan-out is done, failed, handed back on shutdown or lost. */
  async run(job: FanoutJob, shutdown: AbortSignal): Promise<void> {
    const { store, log, leaseMs, metrics } = this.deps;
    const started = performance.now();
    const lease = new AbortController();
    const heartbeat = setInterval(
      () => {
        store.renewLease(job.id, job.leaseToken).catch((err: unknown) => {
          if (err instanceof LeaseLostError) lease.abort(err);
          else log.warn({ err, campaignId: job.id }, "fan-out lease renewal failed");
        });
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    let result: RunResult;
    // A send's fan-out continues the trace of the POST that created it; a scheduled one
    // fires later in a trace of its own that links to it.
    const creator = traceContextFrom(job.traceContext);
    const creatorSpan = trace.getSpanContext(creator);
    try {
      result = await inSpan(
        job.scheduled ? "fan-out scheduled campaign" : "fan-out campaign",
        {
          attributes: { [ATTR.campaignId]: job.id, [ATTR.appId]: job.appId },
          ...(job.scheduled
            ? { parent: ROOT_CONTEXT, links: creatorSpan ? [{ context: creatorSpan }] : [] }
            : { parent: creator }),
        },
        async (span) => {
          const r = await this.fanOut(job, shutdown, lease.signal);
          span.setAttribute("herald.fanout.result", r);
          return r;
        },
      );
    } finally {
      clearInterval(heartbeat);
    }
    const seconds = (performance.now() - started) / 1000;
    metrics.fanoutDuration.observe({ result }, seconds);
    log.info({ campaignId: job.id, result, seconds }, "fan-out run ended");
  }

  private async fanOut(first: FanoutJob, shutdown: AbortSignal, lease: AbortSignal): Promise<RunResult> {
    const { store, audience, log } = this.deps;
    const signal = AbortSignal.any([shutdown, lease]);
    const { id, leaseToken } = first;
    let job: FanoutJob | undefined = first;
    let estimated = false;
    let failure: string | undefined;
    for (let attempt = 1; ; attempt++) {
      if (lease.aborted) return "lease_lost";
      try {
        if (shutdown.aborted) {
          await store.release(id, leaseToken);
          return "stopped";
        }
        if (failure !== undefined) {
          await store.fail(id, leaseToken, failure);
          log.warn({ campaignId: id, reason: failure }, "campaign failed");
          return "failed";
        }
        job ??= await store.load(id, leaseToken);
        if (!estimated) {
          await store.setEstimate(id, leaseToken, await audience.count(job.appId, job.target));
          estimated = true;
        }
        if (!(await this.walk(job, signal))) {
          await store.release(id, leaseToken);
          return "stopped";
        }
        return (await store.finish(id, leaseToken)) === "completed" ? "completed" : "published";
      } catch (err) {
        if (err instanceof LeaseLostError || lease.aborted) return "lease_lost";
        if (shutdown.aborted) {
          await store.release(id, leaseToken).catch(() => undefined);
          return "stopped";
        }
        const permanent = permanentProblem(err, first.target);
        if (permanent !== undefined) {
          failure = permanent;
        } else {
          // Also when recording a known failure failed: it stays known and is retried.
          log.warn({ err, campaignId: id, attempt }, "fan-out interrupted; resuming from the last published batch");
          // An abort ends the wait early; the checks at the top of the loop say what it means.
          await sleep(equalJitter(BACKOFF, attempt - 1), signal).catch(() => undefined);
        }
        job = undefined;
      }
    }
  }

  /** Walks the platforms from where the job stands; false when stopped before the end. */
  private async walk(job: FanoutJob, signal: AbortSignal): Promise<boolean> {
    if (job.pending) await this.resolvePending(job, signal);
    for (let i = PLATFORM_ORDER.indexOf(job.platform); i < PLATFORM_ORDER.length; i++) {
      const platform = PLATFORM_ORDER[i]!;
      if (platform !== job.platform) {
        await this.deps.store.startPlatform(job.id, job.leaseToken, platform);
        job.platform = platform;
        job.cursor = undefined;
      }
      if (!(await this.walkPlatform(job, signal))) return false;
    }
    return true;
  }

  private async walkPlatform(job: FanoutJob, signal: AbortSignal): Promise<boolean> {
    const { audience, pageSize, batchSize } = this.deps;
    let batch: AudienceDevice[] = [];
    let bytes = 0;
    const query = { appId: job.appId, target: job.target, platform: job.platform, afterDeviceId: job.cursor, pageSize };
    for await (const page of audience.pages(query, signal)) {
      for (const device of page) {
        batch.push(device);
        bytes += device.id.length + device.pushToken.length + 16;
        if (batch.length >= batchSize || bytes >= MAX_BATCH_BYTES) {
          await this.publishNext(job, batch);
          batch = [];
          bytes = 0;
          // Stop only at a batch boundary: the state in the row is then consistent.
          if (signal.aborted) return false;
        }
      }
    }
    if (batch.length > 0) await this.publishNext(job, batch);
    return true;
  }

  /** Write-ahead: record the batch, publish it, then advance the cursor and the count. */
  private async publishNext(job: FanoutJob, devices: AudienceDevice[]): Promise<void> {
    const { store, publisher } = this.deps;
    const toDeviceId = devices[devices.length - 1]!.id;
    const seq = await store.writePending(job.id, job.leaseToken, {
      platform: job.platform,
      fromCursor: job.cursor ?? null,
      toDeviceId,
      count: devices.length,
    });
    const { duplicate } = await publisher.publish(
      job.platform,
      buildDeliveryBatch(job.delivery, job.platform, seq, devices),
    );
    await store.commitBatch(job.id, job.leaseToken, toDeviceId, devices.length);
    job.cursor = toDeviceId;
    this.countPublished(job.platform, devices.length, duplicate);
  }

  /**
   * A batch was recorded but its publish may or may not have reached the stream. Rebuild
   * it from the same audience range and publish it under the same id: a duplicate ack
   * means the original is in the stream (count what it held); otherwise the rebuilt
   * batch is the one the senders get (count that).
   */
  private async resolvePending(job: FanoutJob, signal: AbortSignal): Promise<void> {
    const { store, audience, publisher, log } = this.deps;
    const p = job.pending!;
    let devices: AudienceDevice[] = [];
    const query = {
      appId: job.appId,
      target: job.target,
      platform: p.platform,
      afterDeviceId: p.fromCursor ?? undefined,
      pageSize: p.count,
    };
    for await (const page of audience.pages(query, signal)) {
      devices = page.filter((d) => d.id <= p.toDeviceId).slice(0, p.count);
      break;
    }
    const { duplicate } = await publisher.publish(
      p.platform,
      buildDeliveryBatch(job.delivery, p.platform, p.seq, devices),
    );
    const count = duplicate ? p.count : devices.length;
    await store.commitBatch(job.id, job.leaseToken, p.toDeviceId, count);
    job.platform = p.platform;
    job.cursor = p.toDeviceId;
    job.pending = undefined;
    this.countPublished(p.platform, count, duplicate);
    log.info({ campaignId: job.id, seq: p.seq, duplicate, count }, "interrupted batch resolved");
  }

  private countPublished(platform: string, targets: number, duplicate: boolean): void {
    this.deps.metrics.batchesPublished.inc({ platform, result: duplicate ? "duplicate" : "accepted" });
    if (!duplicate) this.deps.metrics.targetsPublished.inc({ platform }, targets);
  }
}

/** Problems that retrying cannot fix: the campaign fails with this reason. */
function permanentProblem(err: unknown, target: Target): string | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  if (err.code === Code.NotFound && target.kind === "segment") return "segment not found";
  if (err.code === Code.InvalidArgument || err.code === Code.FailedPrecondition) {
    return `the device registry rejected the audience: ${err.rawMessage}`;
  }
  return undefined;
}
