import { invalidArgument, notFound } from "@herald/runtime";
import type { Platform } from "@herald/proto/common";
import type { AudienceFilter } from "@herald/proto/device";
import type { Audience, AudienceTarget } from "./audience-query.js";
import { normaliseLanguage } from "./device-fields.js";
import { platformName } from "./platform.js";
import type { DevicePlatform } from "./push-token.js";

export const MAX_EXTERNAL_IDS = 10_000;
/** Per list of a segment rule: far above any real rule, low enough to bound the query. */
export const MAX_RULE_VALUES = 1_000;

/** The audience of a StreamAudience or CountAudience request, validated. */
export function audience(appId: string, filter: AudienceFilter | undefined, platform: Platform | undefined): Audience {
  if (platform === undefined) return { appId, target: audienceTarget(filter) };
  const name = platformName(platform);
  if (!name) throw invalidArgument("platform must be ios, android or web when set");
  return { appId, target: audienceTarget(filter), platform: name };
}

/** Turns the wire filter into a validated target for the audience query builder. */
export function audienceTarget(filter: AudienceFilter | undefined): AudienceTarget {
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
    case "segment": {
      const rule = target.value;
      const lists = { tags_any: rule.tagsAny, tags_all: rule.tagsAll, tags_none: rule.tagsNone,
        platforms: rule.platforms, languages: rule.languages, app_versions: rule.appVersions, timezones: rule.timezones };
      for (const [name, list] of Object.entries(lists)) {
        if (list.length > MAX_RULE_VALUES) throw invalidArgument(`segment.${name} must hold at most ${MAX_RULE_VALUES} values`);
      }
      const platforms = rule.platforms.map((p) => {
        const name = platformName(p);
        if (!name) throw invalidArgument("segment.platforms must name ios, android or web");
        return name;
      });
      return {
        kind: "segment",
        rule: {
          tagsAny: rule.tagsAny,
          tagsAll: rule.tagsAll,
          tagsNone: rule.tagsNone,
          platforms: [...new Set<DevicePlatform>(platforms)],
          languages: [...new Set(rule.languages.map(normaliseLanguage))],
          appVersions: rule.appVersions,
          timezones: rule.timezones,
          hasExternalId: rule.hasExternalId,
        },
      };
    }
    case "segmentId":
      // Segments are not stored yet (no RPC manages them), so every segment id is unknown.
      throw notFound("segment not found");
    default:
      throw invalidArgument("filter must be one of all, external_ids, segment or segment_id");
  }
}
