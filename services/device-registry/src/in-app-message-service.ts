import type { ServiceImpl } from "@connectrpc/connect";
import {
  type CreateInAppMessageRequest,
  type DeleteInAppMessageRequest,
  type GetInAppMessageRequest,
  InAppEventType,
  type InAppMessageService,
  type ListDeviceInAppMessagesRequest,
  type ListInAppMessagesRequest,
  type RecordInAppMessageEventRequest,
  type UpdateInAppMessageRequest,
} from "@herald/proto/in_app_message";
import { aborted, failedPrecondition, invalidArgument, notFound } from "@herald/runtime";
import { isUuid, requireAppId } from "./ids.js";
import {
  IN_APP_LIMITS,
  inAppFields,
  requireFallback,
  requireWindow,
  type InAppAudienceTarget,
} from "./in-app-message-checks.js";
import { toDeviceMessage, toInAppMessage } from "./in-app-message-mapping.js";
import type {
  DeviceCandidateRow,
  DeviceRef,
  InAppEvent,
  InAppMessageRow,
  InAppMessageStore,
} from "./in-app-message-store.js";
import { pageInfo, pageOf } from "./paging.js";
import { fromStoredRule, type SegmentStore } from "./segment-store.js";
import type { DeviceStore } from "./device-store.js";

const EVENTS: Partial<Record<InAppEventType, InAppEvent>> = {
  [InAppEventType.IMPRESSION]: "impression",
  [InAppEventType.CLICK]: "click",
  [InAppEventType.DISMISS]: "dismiss",
};

export interface InAppMessageDeps {
  messages: InAppMessageStore;
  segments: Pick<SegmentStore, "get">;
  devices: Pick<DeviceStore, "get">;
}

/**
 * In-app messages per app, and the device-facing fetch and events. A message reaches a
 * device whatever its push state: opted-out and invalid devices still see in-app messages,
 * since the app shows them itself and opting out concerns notifications only. Segment
 * audiences are evaluated for the one device with the audience query's own conditions.
 */
export class InAppMessageServiceImpl implements ServiceImpl<typeof InAppMessageService> {
  constructor(private readonly deps: InAppMessageDeps) {}

  async createInAppMessage(req: CreateInAppMessageRequest) {
    const appId = requireAppId(req.appId);
    const fields = inAppFields(req.settings);
    const { name, contents, audience } = fields;
    if (name === undefined) throw invalidArgument("name is required");
    if (contents === undefined) throw invalidArgument("contents is required");
    if (audience === undefined) throw invalidArgument("audience is required");
    requireFallback(contents);
    const startsAt = fields.startsAt ?? null;
    const endsAt = fields.endsAt ?? null;
    requireWindow(startsAt, endsAt);
    await this.requireSegment(appId, audience);
    const result = await this.deps.messages.create(
      appId,
      {
        name,
        contents,
        audience,
        imageUrl: fields.imageUrl ?? null,
        actionUrl: fields.actionUrl ?? null,
        startsAt,
        endsAt,
        priority: fields.priority ?? 0,
        maxImpressions: fields.maxImpressions ?? null,
      },
      IN_APP_LIMITS.perApp,
    );
    if (!result.ok) throw failedPrecondition(`an app has at most ${IN_APP_LIMITS.perApp} in-app messages`);
    return { message: toInAppMessage(result.message) };
  }

  async getInAppMessage(req: GetInAppMessageRequest) {
    return { message: toInAppMessage(await this.find(req.appId, req.id)) };
  }

  async listInAppMessages(req: ListInAppMessagesRequest) {
    const appId = requireAppId(req.appId);
    const page = pageOf(req.page);
    const { messages, total } = await this.deps.messages.list(appId, page.offset, page.perPage);
    return { messages: messages.map(toInAppMessage), page: pageInfo(page, total) };
  }

  async updateInAppMessage(req: UpdateInAppMessageRequest) {
    const appId = requireAppId(req.appId);
    const changes = inAppFields(req.settings);
    const current = await this.find(appId, req.id);
    if (Object.keys(changes).length === 0) return { message: toInAppMessage(current) };
    if (changes.contents) requireFallback(changes.contents);
    requireWindow(
      changes.startsAt === undefined ? current.starts_at : changes.startsAt,
      changes.endsAt === undefined ? current.ends_at : changes.endsAt,
    );
    if (changes.audience) await this.requireSegment(appId, changes.audience);
    const result = await this.deps.messages.update(appId, current.id, changes);
    if (result.ok) return { message: toInAppMessage(result.message) };
    if (result.reason === "window") throw failedPrecondition("ends_at must be after starts_at");
    throw notFound("in-app message not found");
  }

  async deleteInAppMessage(req: DeleteInAppMessageRequest) {
    const appId = requireAppId(req.appId);
    if (!isUuid(req.id) || !(await this.deps.messages.delete(appId, req.id))) {
      throw notFound("in-app message not found");
    }
    return {};
  }

  async listDeviceInAppMessages(req: ListDeviceInAppMessagesRequest) {
    const device = await this.device(req.deviceId);
    const candidates = await this.deps.messages.deviceCandidates(device, { shown: true });
    const applying = await this.forDevice(device, candidates);
    return {
      messages: applying.slice(0, IN_APP_LIMITS.perFetch).map((row) => toDeviceMessage(row, device.language)),
    };
  }

  async recordInAppMessageEvent(req: RecordInAppMessageEventRequest) {
    const event = EVENTS[req.type];
    if (!event) throw invalidArgument("type must be impression, click or dismiss");
    const device = await this.device(req.deviceId);
    const candidates = isUuid(req.messageId)
      ? await this.deps.messages.deviceCandidates(device, { shown: false, messageId: req.messageId.toLowerCase() })
      : [];
    const [message] = await this.forDevice(device, candidates);
    if (!message) throw notFound("in-app message not found");
    const result = await this.deps.messages.recordEvent(message.id, device.id, event);
    if (result === "limit") {
      throw aborted("this device has already seen this in-app message the maximum number of times");
    }
    if (result === "gone") throw notFound("in-app message not found");
    return {};
  }

  /** The candidates whose audience includes the device: segment rules are evaluated now, in one query. */
  private async forDevice(device: DeviceRef, candidates: DeviceCandidateRow[]): Promise<DeviceCandidateRow[]> {
    const rules = new Map<string, number>();
    const segmentRules = [];
    for (const row of candidates) {
      if (row.segment_id === null || row.segment_rule === null || rules.has(row.segment_id)) continue;
      rules.set(row.segment_id, segmentRules.length);
      segmentRules.push(fromStoredRule(row.segment_rule));
    }
    const matches = await this.deps.messages.matchRules(device.id, segmentRules);
    return candidates.filter((row) => row.segment_id === null || matches[rules.get(row.segment_id) ?? -1] === true);
  }

  /** Send-to-segment's rule: another app's segment is as unknown as a missing one. */
  private async requireSegment(appId: string, audience: InAppAudienceTarget): Promise<void> {
    if (audience.kind !== "segment") return;
    const segment = await this.deps.segments.get(audience.segmentId);
    if (!segment || segment.app_id !== appId.toLowerCase()) throw notFound("segment not found");
  }

  private async device(id: string): Promise<DeviceRef> {
    const device = isUuid(id) ? await this.deps.devices.get(id) : undefined;
    if (!device) throw notFound("device not found");
    return device;
  }

  private async find(appId: string, id: string): Promise<InAppMessageRow> {
    const row = isUuid(id) ? await this.deps.messages.get(requireAppId(appId), id) : undefined;
    if (!row) throw notFound("in-app message not found");
    return row;
  }
}
