import type { Device, SegmentRule } from "../api/types";

/**
 * The segment rule grammar of gateway/src/schemas/segments.ts, evaluated in the browser
 * for the builder's live count: every part that is set must match (AND), any value of a
 * list matches (OR) except tags_all; only opted-in devices with a valid token count.
 */
export function normalizeLanguage(code: string): string {
  return code.trim().toLowerCase().split(/[-_]/)[0] ?? "";
}

export function matchesRule(d: Device, rule: SegmentRule): boolean {
  if (!d.opted_in || d.invalid) return false;
  const tags = new Set(d.tags);
  const language = d.language ? normalizeLanguage(d.language) : undefined;
  return (
    (!rule.tags_any?.length || rule.tags_any.some((t) => tags.has(t))) &&
    (!rule.tags_all?.length || rule.tags_all.every((t) => tags.has(t))) &&
    (!rule.tags_none?.length || !rule.tags_none.some((t) => tags.has(t))) &&
    (!rule.platforms?.length || rule.platforms.includes(d.platform)) &&
    (!rule.languages?.length || (language !== undefined && rule.languages.map(normalizeLanguage).includes(language))) &&
    (!rule.app_versions?.length || (d.app_version !== null && rule.app_versions.includes(d.app_version))) &&
    (!rule.timezones?.length || (d.timezone !== null && rule.timezones.includes(d.timezone))) &&
    (rule.has_external_id === undefined || rule.has_external_id === Boolean(d.external_id))
  );
}

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
