import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { checkPushEndpoint, invalidArgument, notFound, type EndpointPolicy } from "@herald/runtime";
import {
  type CountAudienceRequest,
  type CreateSegmentRequest,
  type DeleteDeviceRequest,
  type DeleteSegmentRequest,
  type DeviceRegistryService,
  type EraseUserRequest,
  type GetDeviceRequest,
  type GetSegmentRequest,
  type ImportDevicesRequest,
  ImportOutcome,
  ImportResultSchema,
  type ImportResult,
  type InvalidateDevicesRequest,
  type ListDevicesRequest,
  type ListSegmentsRequest,
  type LookupDevicesRequest,
  type RegisterDeviceRequest,
  RegisterDeviceResultSchema,
  type RegisterDevicesRequest,
  type SetOptInRequest,
  type StreamAudienceRequest,
  type TagList,
  type UpdateDeviceRequest,
  type UpdateSegmentRequest,
} from "@herald/proto/device";
import { audience } from "./audience-filter.js";
import { toAudienceDevice, toDevice } from "./device-mapping.js";
import {
  checkAppVersion,
  checkExternalId,
  fieldChange,
  normaliseLanguage,
  normaliseTags,
  normaliseTimezone,
} from "./device-checks.js";
import { deviceListFilter } from "./device-list.js";
import { isUuid, requireAppId } from "./ids.js";
import { toInvalidation } from "./invalidation.js";
import type { DeviceRegistryMetrics } from "./metrics.js";
import { pageInfo, pageOf } from "./paging.js";
import { platformEnum, platformName } from "./platform.js";
import { canonicalPushToken } from "./push-token.js";
import type { SegmentStore } from "./segment-store.js";
import { Segments } from "./segments.js";
import type { DeviceChanges, DeviceRow, DeviceStore, ImportWrite, Invalidation, Registration } from "./device-store.js";

const DEFAULT_AUDIENCE_PAGE = 1_000;
const MAX_AUDIENCE_PAGE = 5_000;
const MAX_INVALIDATIONS = 10_000;
const MAX_IMPORT = 1_000;
const MAX_LOOKUP = 1_000;

/** A registration validated, or why it is invalid. */
type Checked = { registration: Registration; reason?: undefined } | { registration?: undefined; reason: string };

export interface DeviceRegistryDeps {
  store: DeviceStore;
  segments: SegmentStore;
  /** Applied to web push endpoints at registration (SSRF guard). */
  endpointPolicy: EndpointPolicy;
  metrics: DeviceRegistryMetrics;
}

/** The RPC surface: validates requests, calls the store, maps rows to messages. */
export class DeviceRegistryServiceImpl implements ServiceImpl<typeof DeviceRegistryService> {
  private readonly segments: Segments;

  constructor(private readonly deps: DeviceRegistryDeps) {
    this.segments = new Segments(deps.segments, deps.store);
  }

  async registerDevice(req: RegisterDeviceRequest) {
    const { device, created } = await this.deps.store.register(
      await registration(requireAppId(req.appId), req, this.deps.endpointPolicy),
    );
    this.deps.metrics.registrations.inc({ result: created ? "created" : "updated" });
    return { device: toDevice(device), created };
  }

  async registerDevices(req: RegisterDevicesRequest) {
    if (req.devices.length > MAX_IMPORT)
      throw invalidArgument(`at most ${MAX_IMPORT} devices per RegisterDevices call`);
    const checked = await Promise.all(req.devices.map((d) => this.check(d.appId, d)));
    const valid = checked.flatMap((c) => (c.registration ? [c.registration] : []));
    const written = await this.deps.store.registerMany(valid);
    let next = 0;
    const results = checked.map((c) => {
      if (!c.registration)
        return create(RegisterDeviceResultSchema, { result: { case: "invalidArgument", value: c.reason } });
      const { device, created } = written[next++]!;
      this.deps.metrics.registrations.inc({ result: created ? "created" : "updated" });
      return create(RegisterDeviceResultSchema, {
        result: { case: "registered", value: { device: toDevice(device), created } },
      });
    });
    return { results };
  }

  /** A registration validated as RegisterDevice validates it, or why it is invalid. */
  private async check(appId: string, req: RegisterDeviceRequest): Promise<Checked> {
    try {
      return { registration: await registration(requireAppId(appId), req, this.deps.endpointPolicy) };
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.InvalidArgument) return { reason: err.rawMessage };
      throw err;
    }
  }

  async importDevices(req: ImportDevicesRequest) {
    const appId = requireAppId(req.appId);
    if (req.devices.length > MAX_IMPORT) throw invalidArgument(`at most ${MAX_IMPORT} devices per ImportDevices call`);
    const results: ImportResult[] = new Array(req.devices.length);
    // Validated exactly as RegisterDevice validates (the endpoint guard may resolve names: at once).
    const checked = await Promise.all(
      req.devices.map((d) =>
        d.appId !== "" && d.appId.toLowerCase() !== appId
          ? ({ reason: "app_id differs from the app being imported into" } as Checked)
          : this.check(appId, d),
      ),
    );
    // One write per token: a later line with the same token wins, the earlier counts as updated by it.
    const lastOf = new Map<string, number>();
    checked.forEach((c, i) => {
      if (c.registration) lastOf.set(c.registration.pushToken, i);
    });
    const order = [...lastOf.values()].sort((a, b) => a - b);
    const writes = await this.deps.store.importDevices(order.map((i) => checked[i]!.registration!));
    const writeOf = new Map(order.map((i, k) => [i, writes[k]!]));
    checked.forEach((c, i) => {
      if (!c.registration) {
        results[i] = create(ImportResultSchema, { outcome: ImportOutcome.REJECTED, reason: c.reason });
        return;
      }
      const write = writeOf.get(i) ?? "updated";
      results[i] = create(ImportResultSchema, { outcome: IMPORT_OUTCOMES[write] });
      if (write !== "unchanged") this.deps.metrics.registrations.inc({ result: write });
    });
    return { results };
  }

  async getDevice(req: GetDeviceRequest) {
    return { device: toDevice(found(isUuid(req.id) ? await this.deps.store.get(req.id) : undefined)) };
  }

  async listDevices(req: ListDevicesRequest) {
    const appId = requireAppId(req.appId);
    const page = pageOf(req.page);
    const filter = deviceListFilter(req);
    const { devices, total } = await this.deps.store.list(appId, filter, page.offset, page.perPage);
    return { devices: devices.map(toDevice), page: pageInfo(page, total) };
  }

  async updateDevice(req: UpdateDeviceRequest) {
    const changes = deviceChanges(req);
    return { device: toDevice(found(isUuid(req.id) ? await this.deps.store.update(req.id, changes) : undefined)) };
  }

  async deleteDevice(req: DeleteDeviceRequest) {
    if (!isUuid(req.id) || !(await this.deps.store.delete(req.id))) throw notFound("device not found");
    return {};
  }

  async setOptIn(req: SetOptInRequest) {
    const row = isUuid(req.id) ? await this.deps.store.setOptIn(req.id, req.optedIn) : undefined;
    return { device: toDevice(found(row)) };
  }

  /** The app's devices among the ids, in the order first asked for; others' and unknown ids are left out. */
  async lookupDevices(req: LookupDevicesRequest) {
    const appId = requireAppId(req.appId);
    if (req.deviceIds.length > MAX_LOOKUP) throw invalidArgument(`device_ids must hold at most ${MAX_LOOKUP} ids`);
    req.deviceIds.forEach((id, i) => {
      if (!isUuid(id)) throw invalidArgument(`device_ids[${i}] must be a device id`);
    });
    const rows = await this.deps.store.lookup(appId, req.deviceIds);
    // PostgreSQL answers ids in lower case, whatever case they were asked in.
    const byId = new Map(rows.map((row) => [row.id, row]));
    const order = [...new Set(req.deviceIds.map((id) => id.toLowerCase()))];
    return {
      devices: order.flatMap((id) => {
        const row = byId.get(id);
        return row ? [{ id: row.id, externalId: row.external_id ?? "", platform: platformEnum(row.platform) }] : [];
      }),
    };
  }

  async eraseUser(req: EraseUserRequest) {
    // Lower case, as the app id is everywhere else in events (PostgreSQL's uuid text).
    const appId = requireAppId(req.appId).toLowerCase();
    if (req.externalId === "") throw invalidArgument("external_id is required");
    const erased = await this.deps.store.eraseUser({
      appId,
      externalId: checkExternalId(req.externalId),
      receipts: Number(req.receipts),
      engagements: Number(req.engagements),
      campaignAudiences: Number(req.campaignAudiences),
    });
    return {
      devices: BigInt(erased.devices),
      inAppStates: BigInt(erased.inAppStates),
      inAppAudiences: BigInt(erased.inAppAudiences),
    };
  }

  async invalidateDevices(req: InvalidateDevicesRequest) {
    if (req.invalidations.length > MAX_INVALIDATIONS) {
      throw invalidArgument(`invalidations must hold at most ${MAX_INVALIDATIONS} entries`);
    }
    const items: Invalidation[] = req.invalidations.map((inv, i) => {
      const checked = toInvalidation(inv);
      if (!checked.ok) throw invalidArgument(`invalidations[${i}].${checked.problem}`);
      return checked.invalidation;
    });
    const invalidated = await this.deps.store.invalidate(items);
    this.deps.metrics.invalidations.inc({ source: "rpc" }, invalidated);
    return { invalidated };
  }

  /** Keyset pages, one query each: memory stays flat, and a caller may resume anywhere. */
  async *streamAudience(req: StreamAudienceRequest, ctx: HandlerContext) {
    const selected = await audience(requireAppId(req.appId), req.filter, req.platform, this.segments.lookup);
    const pageSize = Math.min(req.pageSize || DEFAULT_AUDIENCE_PAGE, MAX_AUDIENCE_PAGE);
    if (req.afterDeviceId !== "" && !isUuid(req.afterDeviceId)) {
      throw invalidArgument("after_device_id must be a device id");
    }
    let after = req.afterDeviceId || undefined;
    while (!ctx.signal.aborted) {
      const rows = await this.deps.store.audiencePage(selected, after, pageSize);
      if (rows.length > 0) yield { devices: rows.map(toAudienceDevice) };
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  async countAudience(req: CountAudienceRequest) {
    const selected = await audience(requireAppId(req.appId), req.filter, req.platform, this.segments.lookup);
    return { count: BigInt(await this.deps.store.countAudience(selected)) };
  }

  createSegment(req: CreateSegmentRequest) {
    return this.segments.create(req);
  }

  getSegment(req: GetSegmentRequest) {
    return this.segments.get(req);
  }

  listSegments(req: ListSegmentsRequest) {
    return this.segments.list(req);
  }

  updateSegment(req: UpdateSegmentRequest) {
    return this.segments.update(req);
  }

  deleteSegment(req: DeleteSegmentRequest) {
    return this.segments.delete(req);
  }
}

function found(row: DeviceRow | undefined): DeviceRow {
  if (!row) throw notFound("device not found");
  return row;
}

const IMPORT_OUTCOMES: Record<ImportWrite, ImportOutcome> = {
  created: ImportOutcome.CREATED,
  updated: ImportOutcome.UPDATED,
  unchanged: ImportOutcome.UNCHANGED,
};

/** A RegisterDevice request, validated and canonical; throws InvalidArgument. */
async function registration(appId: string, req: RegisterDeviceRequest, policy: EndpointPolicy): Promise<Registration> {
  const platform = platformName(req.platform);
  if (!platform) throw invalidArgument("platform must be ios, android or web");
  if (req.pushToken === "") throw invalidArgument("push_token is required");
  const token = canonicalPushToken(platform, req.pushToken);
  if (!token.ok) throw invalidArgument(`push_token: ${token.reason}`);
  if (token.endpoint !== undefined) {
    const guard = await checkPushEndpoint(token.endpoint, policy);
    if (!guard.ok) throw invalidArgument(`push_token: endpoint ${guard.reason}`);
  }
  return { appId, platform, pushToken: token.token, ...deviceChanges(req) };
}

/** The optional fields shared by RegisterDevice and UpdateDevice, validated. */
function deviceChanges(req: {
  externalId?: string;
  language?: string;
  timezone?: string;
  appVersion?: string;
  tags?: TagList;
}): DeviceChanges {
  return {
    externalId: fieldChange(req.externalId, checkExternalId),
    language: fieldChange(req.language, normaliseLanguage),
    timezone: fieldChange(req.timezone, normaliseTimezone),
    appVersion: fieldChange(req.appVersion, checkAppVersion),
    tags: req.tags ? normaliseTags(req.tags.tags) : undefined,
  };
}
