import { DEVICE_PLATFORMS, type DevicePlatform } from "./push-token.js";

/**
 * SQL for the audience of a campaign, shared by StreamAudience and CountAudience so that
 * the count always equals what the stream yields. Every value travels as a parameter.
 */
/** Which devices of which app; `platform` narrows any target to one platform. */
export interface Audience {
  appId: string;
  target: AudienceTarget;
  platform?: DevicePlatform;
}

export type AudienceTarget =
  | { kind: "all" }
  | { kind: "externalIds"; externalIds: readonly string[] }
  | { kind: "deviceIds"; deviceIds: readonly string[] }
  | { kind: "segment"; rule: SegmentCriteria };

/** Every non-empty part must match; an empty list places no condition. */
export interface SegmentCriteria {
  tagsAny: readonly string[];
  tagsAll: readonly string[];
  tagsNone: readonly string[];
  platforms: readonly DevicePlatform[];
  languages: readonly string[];
  appVersions: readonly string[];
  timezones: readonly string[];
  hasExternalId?: boolean;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/**
 * One keyset page: devices after `afterId` in id order. Each platform's walk is an index
 * scan of the targetable partial index on (app_id, platform, id) that stops after `limit`
 * rows, whatever the app's size and whatever the planner's statistics say (a bulk import
 * leaves them stale; a plan that reads the whole app and sorts would then cost O(app) per
 * page). Without a platform, the three per-platform walks are merged in id order.
 */
export function audiencePageQuery(audience: Audience, afterId: string | undefined, limit: number): SqlQuery {
  const values: unknown[] = [];
  if (audience.platform !== undefined) {
    return { text: platformPage(audience, afterId, limit, values), values };
  }
  const walks = DEVICE_PLATFORMS.map(
    (platform) => `(${platformPage({ ...audience, platform }, afterId, limit, values)})`,
  );
  const text =
    `SELECT id, platform, push_token, language FROM (${walks.join(" UNION ALL ")}) AS page ` +
    `ORDER BY id LIMIT ${param(values, limit)}`;
  return { text, values };
}

function platformPage(audience: Audience, afterId: string | undefined, limit: number, values: unknown[]): string {
  const where = audienceConditions(audience, values);
  if (afterId !== undefined) where.push(`id > ${param(values, afterId)}::uuid`);
  return (
    `SELECT id, platform, push_token, language FROM devices WHERE ${where.join(" AND ")} ` +
    `ORDER BY id LIMIT ${param(values, limit)}`
  );
}

export function audienceCountQuery(audience: Audience): SqlQuery {
  const values: unknown[] = [];
  const where = audienceConditions(audience, values);
  return { text: `SELECT count(*)::bigint AS count FROM devices WHERE ${where.join(" AND ")}`, values };
}

/**
 * Which of the rules one device matches, as one boolean per rule in `matches`, with the
 * conditions audience pages use. The device need not be targetable (in-app messages
 * reach opted-out and invalid devices): only the rule is evaluated. No row: no device.
 */
export function deviceRuleMatchQuery(deviceId: string, rules: readonly SegmentCriteria[]): SqlQuery {
  const values: unknown[] = [];
  const matches = rules.map((rule) => {
    const where = segmentConditions(rule, values);
    return where.length === 0 ? "true" : `(${where.join(" AND ")})`;
  });
  return {
    text: `SELECT ARRAY[${matches.join(", ")}]::boolean[] AS matches FROM devices WHERE id = ${param(values, deviceId)}::uuid`,
    values,
  };
}

function audienceConditions({ appId, target, platform }: Audience, values: unknown[]): string[] {
  // Written exactly as the partial index predicate, so the planner can use that index.
  const where = [`app_id = ${param(values, appId)}::uuid`, "opted_in", "NOT invalid"];
  if (platform !== undefined) where.push(`platform = ${param(values, platform)}`);
  switch (target.kind) {
    case "all":
      break;
    case "externalIds":
      where.push(`external_id = ANY(${param(values, target.externalIds)}::text[])`);
      break;
    case "deviceIds":
      // Still a walk of each platform's index range: the list is an index condition on id.
      where.push(`id = ANY(${param(values, target.deviceIds)}::uuid[])`);
      break;
    case "segment":
      where.push(...segmentConditions(target.rule, values));
      break;
  }
  return where;
}

function segmentConditions(rule: SegmentCriteria, values: unknown[]): string[] {
  const where: string[] = [];
  const list = (items: readonly string[]) => `${param(values, items)}::text[]`;
  if (rule.tagsAny.length > 0) where.push(`tags && ${list(rule.tagsAny)}`);
  if (rule.tagsAll.length > 0) where.push(`tags @> ${list(rule.tagsAll)}`);
  if (rule.tagsNone.length > 0) where.push(`NOT (tags && ${list(rule.tagsNone)})`);
  if (rule.platforms.length > 0) where.push(`platform = ANY(${list(rule.platforms)})`);
  if (rule.languages.length > 0) where.push(`language = ANY(${list(rule.languages)})`);
  if (rule.appVersions.length > 0) where.push(`app_version = ANY(${list(rule.appVersions)})`);
  if (rule.timezones.length > 0) where.push(`timezone = ANY(${list(rule.timezones)})`);
  if (rule.hasExternalId !== undefined) where.push(`external_id IS ${rule.hasExternalId ? "NOT NULL" : "NULL"}`);
  return where;
}

/** Appends a value and returns its placeholder. */
function param(values: unknown[], value: unknown): string {
  values.push(value);
  return `$${values.length}`;
}
