import type { Schemas } from "@herald/client";

export type SegmentRule = Schemas["SegmentRule"];

/** The rule with only the parts that are set, as the API wants it. */
export function compactRule(rule: SegmentRule): SegmentRule {
  const out: SegmentRule = {};
  for (const [k, v] of Object.entries(rule) as [keyof SegmentRule, unknown][]) {
    if (Array.isArray(v) ? v.length > 0 : v !== undefined) Object.assign(out, { [k]: v });
  }
  return out;
}

export function describeRule(rule: SegmentRule): string {
  const parts: string[] = [];
  if (rule.tags_any?.length) parts.push(`any tag of ${rule.tags_any.join(", ")}`);
  if (rule.tags_all?.length) parts.push(`all tags ${rule.tags_all.join(", ")}`);
  if (rule.tags_none?.length) parts.push(`no tag of ${rule.tags_none.join(", ")}`);
  if (rule.platforms?.length) parts.push(`platform ${rule.platforms.join(" or ")}`);
  if (rule.languages?.length) parts.push(`language ${rule.languages.join(" or ")}`);
  if (rule.app_versions?.length) parts.push(`app version ${rule.app_versions.join(" or ")}`);
  if (rule.timezones?.length) parts.push(`time zone ${rule.timezones.join(" or ")}`);
  if (rule.has_external_id !== undefined) parts.push(rule.has_external_id ? "has an external id" : "no external id");
  return parts.join("; ");
}
