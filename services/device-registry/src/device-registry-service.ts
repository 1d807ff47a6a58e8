import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { checkPushEndpoint, fromTimestamp, invalidArgument, notFound, type EndpointPolicy } from "@herald/runtime";
import type {
  CountAudienceRequest,
  DeleteDeviceRequest,
  DeviceRegistryService,
  GetDeviceRequest,
  InvalidateDevicesRequest,
  ListDevicesRequest,
  RegisterDeviceRequest,
  SetOptInRequest,
  StreamAudienceRequest,
  TagList,
  UpdateDeviceRequest,
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
} from "./device-fields.js";
import { isUuid } from "./ids.js";
import type { DeviceRegistryMetrics } from "./metrics.js";
import { platformName } from "./platform.js";
import { canonicalPushToken } from "./push-token.js";
import type { DeviceChanges, DeviceRow, DeviceStore, Invalidation } from "./store.js";

const DEFAULT_PER_PAGE = 50;
const MAX_PER_PAGE = 200;
const DEFAULT_AUDIENCE_PAGE = 1_000;
const MAX_AUDIENCE_PAGE = 5_000;
const MAX_INVALIDATIONS = 10_000;
const MAX_REASON_LENGTH = 200;

export interface DeviceRegistryDeps {
  store: DeviceStore;
  /** Applied to web push endpoints at registration (SSRF guard). */
  endpointPolicy: EndpointPolicy;
  metrics: DeviceRegistryMetrics;
}

/** The RPC surface: validates requests, calls the store, maps rows to messages. */
export class DeviceRegistryServiceImpl implements ServiceImpl<typeof DeviceRegistryService> {
  constructor(private readonly deps: DeviceRegistryDeps) {}

  async registerDevice(req: RegisterDeviceRequest) {
    const appId = requireAppId(req.appId);
    const platform = platformName(req.platform);
    if (!platform) throw invalidArgument("platform must be ios, android or web");
    if (req.pushToken === "") throw invalidArgument("push_token is required");
    const token = canonicalPushToken(platform, req.pushToken);
    if (!token.ok) throw invalidArgument(`push_token: ${token.reason}`);
    if (token.endpoint !== undefined) {
      const guard = await checkPushEndpoint(token.endpoint, this.deps.endpointPolicy);
      if (!guard.ok) throw invalidArgument(`push_token: endpoint ${guard.reason}`);
    }
    const { device, created } = await this.deps.store.register({
      appId,
      platform,
      pushToken: token.token,
      ...deviceChanges(req),
    });
    this.deps.metrics.registrations.inc({ result: created ? "created" : "updated" });
    return { device: toDevice(device), created };
  }

  async getDevice(req: GetDeviceRequest) {
    return { device: toDevice(found(isUuid(req.id) ? await this.deps.store.get(req.id) : undefined)) };
  }

  async listDevices(req: ListDevicesRequest) {
    const appId = requireAppId(req.appId);
    // The gateway rejects out-of-range paging; clamp anyway, the store must never see it.
    const page = Math.max(1, req.page?.page || 1);
    const perPage = Math.min(MAX_PER_PAGE, Math.max(1, req.page?.perPage || DEFAULT_PER_PAGE));
    const { devices, total } = await this.deps.store.list(appId, (page - 1) * perPage, perPage);
    return { devices: devices.map(toDevice), page: { page, perPage, total: BigInt(total) } };
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

  async invalidateDevices(req: InvalidateDevicesRequest) {
    if (req.invalidations.length > MAX_INVALIDATIONS) {
      throw invalidArgument(`invalidations must hold at most ${MAX_INVALIDATIONS} entries`);
    }
    const items: Invalidation[] = req.invalidations.map((inv, i) => {
      if (!isUuid(inv.deviceId)) throw invalidArgument(`invalidations[${i}].device_id must be a device id`);
      if (!inv.observedAt) throw invalidArgument(`invalidations[${i}].observed_at is required`);
      return { deviceId: inv.deviceId, observedAt: fromTimestamp(inv.observedAt), reason: inv.reason.slice(0, MAX_REASON_LENGTH) };
    });
    return { invalidated: await this.deps.store.invalidate(items) };
  }

  /** Keyset pages, one query each: memory stays flat, and a caller may resume anywhere. */
  async *streamAudience(req: StreamAudienceRequest, ctx: HandlerContext) {
    const selected = audience(requireAppId(req.appId), req.filter, req.platform);
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
    const selected = audience(requireAppId(req.appId), req.filter, req.platform);
    return { count: BigInt(await this.deps.store.countAudience(selected)) };
  }
}

function requireAppId(appId: string): string {
  if (!isUuid(appId)) throw invalidArgument("app_id must be a UUID");
  return appId;
}

function found(row: DeviceRow | undefined): DeviceRow {
  if (!row) throw notFound("device not found");
  return row;
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
