import { invalidArgument, notFound } from "@herald/runtime";
import type { Platform } from "@herald/proto/common";
import type { AudienceFilter } from "@herald/proto/device";
import type { Audience, AudienceTarget, SegmentCriteria } from "./audience-query.js";
import { isUuid } from "./ids.js";
import { platformName } from "./platform.js";
import { segmentCriteria } from "./segment-rule.js";

export const MAX_EXTERNAL_IDS = 10_000;
export const MAX_DEVICE_IDS = 100;

/** The rule of a stored segment of the app; undefined when the app has no such segment. */
export type SegmentLookup = (appId: string, segmentId: string) => Promise<SegmentCriteria | undefined>;

/** The audience of a StreamAudience or CountAudience request, validated. */
export async function audience(
  appId: string,
  filter: AudienceFilter | undefined,
  platform: Platform | undefined,
  lookup: SegmentLookup,
): Promise<Audience> {
  if (platform === undefined) return { appId, target: await audienceTarget(appId, filter, lookup) };
  const name = platformName(platform);
  if (!name) throw invalidArgument("platform must be ios, android or web when set");
  return { appId, target: await audienceTarget(appId, filter, lookup), platform: name };
}

/** Turns the wire filter into a validated target for the audience query builder. */
export async function audienceTarget(
  appId: string,
  filter: AudienceFilter | undefined,
  lookup: SegmentLookup,
): Promise<AudienceTarget> {
  const target = filter?.target;
  switch (target?.case) {
    case "all":
      return { kind: "all" };
    case "externalIds": {
      const ids = [...new Set(target.value.externalIds)];
      if (ids.length > MAX_EXTERNAL_IDS) {
        throw invalidArgument(`filter.external_ids must hold at most ${MAX_EXTERNAL_IDS} ids`);
      }
      return { kind: "externalIds", externalIds: ids };
    }
    case "deviceIds": {
      if (!target.value.deviceIds.every(isUuid)) throw invalidArgument("filter.device_ids must be UUIDs");
      const ids = [...new Set(target.value.deviceIds.map((id) => id.toLowerCase()))];
      if (ids.length > MAX_DEVICE_IDS) {
        throw invalidArgument(`filter.device_ids must hold at most ${MAX_DEVICE_IDS} ids`);
      }
      return { kind: "deviceIds", deviceIds: ids };
    }
    case "segment":
      return { kind: "segment", rule: segmentCriteria(target.value, "segment") };
    case "segmentId": {
      // A stored rule was validated and normalised when saved: it becomes exactly the
      // target the same rule given inline would, so both run the same query.
      const rule = isUuid(target.value) ? await lookup(appId, target.value) : undefined;
      if (!rule) throw notFound("segment not found");
      return { kind: "segment", rule };
    }
    default:
      throw invalidArgument("filter must be one of all, external_ids, segment, segment_id or device_ids");
  }
}
