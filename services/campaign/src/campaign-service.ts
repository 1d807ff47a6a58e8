import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type {
  CampaignService,
  CancelCampaignRequest,
  CreateCampaignRequest,
  EraseDeviceRecordsRequest,
  ExportDeliveriesRequest,
  GetCampaignRequest,
  GetCampaignStatsRequest,
  ListCampaignsRequest,
  ListDeliveriesRequest,
  ListDeviceDeliveriesRequest,
  RecordEngagementRequest,
} from "@herald/proto/campaign";
import type { HandlerContext } from "@connectrpc/connect";
import { aborted, failedPrecondition, invalidArgument, notFound, PAGING, pageOf } from "@herald/runtime";
import type { AndroidChannels } from "./android-channels.js";
import type { AudienceSource } from "./audience-source.js";
import type { CampaignRecord, Target } from "./campaign.js";
import type { EngagementRecorder } from "./engagement-recorder.js";
import { checkCreateSemantics, initialStatus, parseCreateRequest } from "./create-request.js";
import type { CampaignMetrics } from "./metrics.js";
import * as check from "./campaign-checks.js";
import type { CampaignStore } from "./campaign-store.js";
import { deliveriesOf, statusName, toCampaign, toDelivery, toStats } from "./campaign-mapping.js";
import type { ReceiptFilter, ReceiptStore } from "./receipt-store.js";

export interface CampaignServiceDeps {
  store: CampaignStore;
  audience: Pick<AudienceSource, "count">;
  androidChannels: AndroidChannels;
  engagement: Pick<EngagementRecorder, "record">;
  receipts: ReceiptStore;
  metrics: CampaignMetrics;
  /** A campaign was queued for immediate fan-out: wake the workers. */
  onQueued: () => void;
  now?: () => Date;
}

/** The RPC surface: validates, calls the store, maps to messages. Fan-out runs elsewhere. */
export class CampaignServiceImpl implements ServiceImpl<typeof CampaignService> {
  private readonly now: () => Date;

  constructor(private readonly deps: CampaignServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async createCampaign(req: CreateCampaignRequest) {
    const { store, metrics } = this.deps;
    const { campaign, idempotency } = parseCreateRequest(req);
    // A retried request gets its first answer even if, by now, its scheduled_at is past.
    if (idempotency) {
      const earlier = await store.findByIdempotencyKey(idempotency);
      if (earlier) return { campaign: toCampaign(earlier), created: false };
    }
    const now = this.now();
    checkCreateSemantics(campaign, now);
    if (campaign.target.kind === "segment") await this.requireSegment(campaign.appId, campaign.target);
    const channelId = campaign.options.notification?.androidChannelId;
    if (channelId !== undefined) await this.requireChannel(campaign.appId, channelId);
    const status = initialStatus(campaign, now);
    const result = await store.create(campaign, status, idempotency);
    if (result.created) {
      metrics.campaignsCreated.inc({ target: campaign.target.kind, status });
      if (status === "queued") this.deps.onQueued();
    }
    return { campaign: toCampaign(result.campaign), created: result.created };
  }

  async getCampaign(req: GetCampaignRequest) {
    return { campaign: toCampaign(await this.find(req.id)) };
  }

  async listCampaigns(req: ListCampaignsRequest) {
    const appId = check.appId(req.appId);
    // The one paging rule (packages/runtime/src/paging.ts): out-of-range values are refused.
    const { page, perPage, offset } = pageOf(req.page);
    const status = req.status === undefined ? undefined : statusName(req.status);
    if (req.status !== undefined && !status) {
      throw invalidArgument("status must be scheduled, queued, sending, completed, cancelled or failed when set");
    }
    const { campaigns, total } = await this.deps.store.list(appId, status, offset, perPage);
    return { campaigns: campaigns.map(toCampaign), page: { page, perPage, total: BigInt(total) } };
  }

  async getCampaignStats(req: GetCampaignStatsRequest) {
    const campaign = await this.find(req.id);
    return { campaignId: campaign.id, stats: toStats(campaign.stats) };
  }

  async cancelCampaign(req: CancelCampaignRequest) {
    if (!check.isUuid(req.id)) throw notFound("campaign not found");
    const result = await this.deps.store.cancel(req.id);
    if (result.ok) return { campaign: toCampaign(result.campaign) };
    if (result.reason === "not_found") throw notFound("campaign not found");
    throw aborted(`campaign ${req.id} can no longer be cancelled: it is ${result.status}`, "CampaignNotCancellable");
  }

  async recordEngagement(req: RecordEngagementRequest) {
    return { counted: await this.deps.engagement.record(req) };
  }

  async listDeliveries(req: ListDeliveriesRequest) {
    const campaign = await this.find(req.campaignId);
    const filter = receiptFilter(req);
    const { page, perPage, offset } = pageOf(req.page);
    const { receipts, total } = await this.deps.receipts.list(campaign.id, filter, offset, perPage);
    return { deliveries: receipts.map(toDelivery), page: { page, perPage, total: BigInt(total) } };
  }

  async *exportDeliveries(req: ExportDeliveriesRequest, ctx: HandlerContext) {
    const campaign = await this.find(req.campaignId);
    for await (const chunk of this.deps.receipts.export(campaign.id, receiptFilter(req), ctx.signal)) {
      yield req.columns ? { columns: chunk } : { deliveries: deliveriesOf(campaign.id, chunk) };
    }
  }

  async listDeviceDeliveries(req: ListDeviceDeliveriesRequest) {
    const appId = check.appId(req.appId);
    if (!check.isUuid(req.deviceId)) throw invalidArgument("device_id must be a UUID");
    const limit = req.limit || PAGING.defaultPerPage;
    if (limit > PAGING.maxPerPage) throw invalidArgument(`limit must be between 1 and ${PAGING.maxPerPage}`);
    const receipts = await this.deps.receipts.ofDevice(appId, req.deviceId.toLowerCase(), limit);
    return { deliveries: receipts.map(toDelivery) };
  }

  async eraseDeviceRecords(req: EraseDeviceRecordsRequest) {
    const appId = check.appId(req.appId);
    if (req.deviceIds.length > MAX_ERASED_DEVICES) {
      throw invalidArgument(`device_ids holds at most ${MAX_ERASED_DEVICES} ids a call`);
    }
    if (!req.deviceIds.every(check.isUuid)) throw invalidArgument("device_ids must be UUIDs");
    const externalId = check.externalId(req.externalId);
    const ids = [...new Set(req.deviceIds.map((id) => id.toLowerCase()))];
    const { receipts, engagements } = await this.deps.receipts.erase(appId, ids);
    const audiences = externalId === "" ? 0 : await this.deps.store.removeExternalId(appId, externalId);
    return { receipts: BigInt(receipts), engagements: BigInt(engagements), audiences: BigInt(audiences) };
  }

  private async find(id: string): Promise<CampaignRecord> {
    const campaign = check.isUuid(id) ? await this.deps.store.get(id) : undefined;
    if (!campaign) throw notFound("campaign not found");
    return campaign;
  }

  /** Asks the registry, which owns channels; an unknown channel cannot be delivered to (422). */
  private async requireChannel(appId: string, channelId: string): Promise<void> {
    let exists: boolean;
    try {
      exists = await this.deps.androidChannels.exists(appId, channelId);
    } catch (err) {
      throw registryFailure(err, "GetAndroidChannel");
    }
    if (!exists) {
      throw failedPrecondition(
        `android_channel_id "${channelId}" is not an Android channel of this app; create it at /v1/apps/{app_id}/android-channels`,
      );
    }
  }

  /** Asks the registry, which owns segments; an unknown segment is the caller's 404. */
  private async requireSegment(appId: string, target: Target): Promise<void> {
    try {
      await this.deps.audience.count(appId, target);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      if (err.code === Code.NotFound) throw notFound("segment not found");
      throw registryFailure(err, "CountAudience");
    }
  }
}

const MAX_ERASED_DEVICES = 1_000;

function receiptFilter(req: { outcome: number; platform: number }): ReceiptFilter {
  if (!Number.isInteger(req.outcome) || req.outcome < 0 || req.outcome > 4) {
    throw invalidArgument("outcome must be delivered, failed, bounced or throttled when set");
  }
  if (!Number.isInteger(req.platform) || req.platform < 0 || req.platform > 3) {
    throw invalidArgument("platform must be ios, android or web when set");
  }
  return { outcome: req.outcome, platform: req.platform };
}

/** A registry call that failed: UNAVAILABLE to retry, else INTERNAL with the details in the log. */
function registryFailure(err: unknown, rpc: string): Error {
  if (!(err instanceof ConnectError)) return err instanceof Error ? err : new Error(String(err));
  if (err.code === Code.Unavailable || err.code === Code.DeadlineExceeded) {
    return new ConnectError("the device registry is unavailable; retry later", Code.Unavailable);
  }
  return new Error(`${rpc} failed: ${err.message}`, { cause: err });
}
