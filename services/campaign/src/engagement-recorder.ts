import { Code, ConnectError } from "@connectrpc/connect";
import { EngagementKind, type RecordEngagementRequest } from "@herald/proto/campaign";
import { Coalescer, CoalescerFullError, invalidArgument, notFound } from "@herald/runtime";
import type { EngagementKindName, EngagementReport, EngagementResult, EngagementStore } from "./engagement-store.js";
import { isUuid } from "./campaign-checks.js";

/** Reports per transaction, and transactions in flight (each holds a database connection). */
const MAX_BATCH = 500;
const MAX_IN_FLIGHT = 2;

const KIND: Partial<Record<EngagementKind, EngagementKindName>> = {
  [EngagementKind.RECEIVED]: "received",
  [EngagementKind.CLICKED]: "clicked",
};

/**
 * RecordEngagement calls of every client, coalesced: the devices of a large campaign
 * report within seconds of each other, and one transaction per batch (group commit) keeps
 * that from becoming one counter update of the same campaign row per device. The queue
 * is bounded; past it, callers get UNAVAILABLE and their SDK retries later.
 */
export class EngagementRecorder {
  private readonly coalescer: Coalescer<EngagementReport, EngagementResult>;

  constructor(store: Pick<EngagementStore, "record">) {
    this.coalescer = new Coalescer(
      async (reports) => (await store.record(reports)).map((value) => ({ ok: true, value }) as const),
      { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT },
    );
  }

  /** Whether the report counted; NOT_FOUND when the campaign is no sent campaign of the device's app. */
  async record(req: RecordEngagementRequest): Promise<boolean> {
    const report = parse(req);
    let result: EngagementResult;
    try {
      result = await this.coalescer.submit(report);
    } catch (err) {
      if (err instanceof CoalescerFullError) throw new ConnectError(err.message, Code.Unavailable);
      throw err;
    }
    if (result === "unknown_campaign") throw notFound("campaign not found");
    return result === "counted";
  }
}

function parse(req: RecordEngagementRequest): EngagementReport {
  if (!isUuid(req.appId) || !isUuid(req.deviceId)) throw invalidArgument("app_id and device_id must be UUIDs");
  // Not a UUID: no campaign of any app, the same answer as an unknown one.
  if (!isUuid(req.campaignId)) throw notFound("campaign not found");
  const kind = KIND[req.kind];
  if (!kind) throw invalidArgument("kind must be received or clicked");
  return {
    appId: req.appId.toLowerCase(),
    deviceId: req.deviceId.toLowerCase(),
    campaignId: req.campaignId.toLowerCase(),
    kind,
  };
}
