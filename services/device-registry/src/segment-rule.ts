import { invalidArgument } from "@herald/runtime";
import type { SegmentRule } from "@herald/proto/device";
import type { SegmentCriteria } from "./audience-query.js";
import {
  hasControlCharacter,
  isAppVersion,
  isTag,
  languageCode,
  MAX_APP_VERSION_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  timezoneName,
} from "./device-checks.js";
import { platformName } from "./platform.js";

/** Raw entries per list, checked first, so that a huge list is refused before any work. */
export const MAX_RULE_VALUES = 1_000;
export const MAX_RULE_APP_VERSIONS = 100;
export const MAX_SEGMENT_NAME = 200;

/**
 * Validates a wire rule and normalises it the way the device fields it matches are
 * normalised (so "PT-br" finds devices stored as "pt"); lists lose duplicates, order kept.
 * The same for an inline rule and a stored segment, so both select the same devices.
 * `field` names the rule in error messages: "segment" inline, "rule" for a stored segment.
 */
export function segmentCriteria(rule: SegmentRule, field: string): SegmentCriteria {
  const lists = {
    tags_any: rule.tagsAny,
    tags_all: rule.tagsAll,
    tags_none: rule.tagsNone,
    platforms: rule.platforms,
    languages: rule.languages,
    app_versions: rule.appVersions,
    timezones: rule.timezones,
  };
  for (const [name, list] of Object.entries(lists)) {
    if (list.length > MAX_RULE_VALUES)
      throw invalidArgument(`${field}.${name} must hold at most ${MAX_RULE_VALUES} values`);
  }
  return {
    tagsAny: tags(rule.tagsAny, `${field}.tags_any`),
    tagsAll: tags(rule.tagsAll, `${field}.tags_all`),
    tagsNone: tags(rule.tagsNone, `${field}.tags_none`),
    platforms: distinct(
      rule.platforms.map((p) => platformName(p) ?? refuse(`${field}.platforms must name ios, android or web`)),
    ),
    languages: distinct(
      rule.languages.map(
        (l) => languageCode(l) ?? refuse(`${field}.languages must hold ISO 639-1 codes such as "en" or "pt-BR"`),
      ),
    ),
    appVersions: appVersions(rule.appVersions, `${field}.app_versions`),
    timezones: distinct(
      rule.timezones.map(
        (tz) => timezoneName(tz) ?? refuse(`${field}.timezones must hold IANA time zone names such as "Europe/Berlin"`),
      ),
    ),
    hasExternalId: rule.hasExternalId,
  };
}

/** The rule of a stored segment: an empty rule would only be "all devices" under a name. */
export function storedSegmentRule(rule: SegmentRule | undefined): SegmentCriteria {
  if (!rule) throw invalidArgument("rule is required");
  const criteria = segmentCriteria(rule, "rule");
  const { hasExternalId, ...lists } = criteria;
  if (hasExternalId === undefined && Object.values(lists).every((list) => list.length === 0)) {
    throw invalidArgument("rule must set at least one condition");
  }
  return criteria;
}

/** Trimmed; 1-200 characters without control characters. */
export function segmentName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length < 1 || length > MAX_SEGMENT_NAME || hasControlCharacter(trimmed)) {
    throw invalidArgument(`name must be 1-${MAX_SEGMENT_NAME} characters without control characters`);
  }
  return trimmed;
}

/** Like a device's tags: at most 100 distinct tags of 1-64 characters. */
function tags(list: readonly string[], field: string): string[] {
  const unique = distinct(list);
  if (unique.length > MAX_TAGS) throw invalidArgument(`${field} must hold at most ${MAX_TAGS} distinct tags`);
  if (!unique.every(isTag)) {
    throw invalidArgument(`${field}: each tag must be 1-${MAX_TAG_LENGTH} characters without control characters`);
  }
  return unique;
}

/** Non-empty: no device has an empty app version (an empty value clears the field). */
function appVersions(list: readonly string[], field: string): string[] {
  const unique = distinct(list);
  if (unique.length > MAX_RULE_APP_VERSIONS) {
    throw invalidArgument(`${field} must hold at most ${MAX_RULE_APP_VERSIONS} distinct versions`);
  }
  if (!unique.every((v) => v !== "" && isAppVersion(v))) {
    throw invalidArgument(
      `${field}: each version must be 1-${MAX_APP_VERSION_LENGTH} characters without control characters`,
    );
  }
  return unique;
}

const distinct = <T>(list: readonly T[]): T[] => [...new Set(list)];

function refuse(message: string): never {
  throw invalidArgument(message);
}
