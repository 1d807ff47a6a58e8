import { ok, refuse, type Checked } from "../refusal.js";

/** `apns-push-type` values Apple documents. */
export const PUSH_TYPES = [
  "alert",
  "background",
  "location",
  "voip",
  "complication",
  "fileprovider",
  "mdm",
  "liveactivity",
  "pushtotalk",
  "widgets",
] as const;
export type PushType = (typeof PUSH_TYPES)[number];

/**
 * The suffix Apple requires on `apns-topic` for each push type ("your app's bundle ID
 * with .voip appended", …); alert and background use the bare bundle id, and mdm uses
 * the topic of the MDM certificate, so it is not checked.
 */
export const TOPIC_SUFFIX: Record<PushType, string | null> = {
  alert: "",
  background: "",
  mdm: null,
  location: ".location-query",
  voip: ".voip",
  complication: ".complication",
  fileprovider: ".pushkit.fileprovider",
  liveactivity: ".push-type.liveactivity",
  pushtotalk: ".voip-ptt",
  widgets: ".push-type.widgets",
};

/** The request headers of one push, validated; `priority` is the one in effect (APNs defaults to 10). */
export interface ApnsHeaders {
  topic: string;
  pushType: PushType | null;
  priority: 10 | 5 | 1;
  expiration: number | null;
  collapseId: string | null;
}

type HeaderValue = string | string[] | undefined;

const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Bundle ids are alphanumerics, hyphens and periods; suffixes add more periods. */
const TOPIC = /^[A-Za-z0-9][A-Za-z0-9.-]{0,254}$/;
const EPOCH_SECONDS = /^[0-9]{1,10}$/;
export const MAX_COLLAPSE_ID_BYTES = 64;

/** DuplicateHeaders: any header name sent twice (cookie crumbs aside, which HTTP/2 allows to repeat). */
export function hasDuplicateHeader(rawHeaders: readonly string[]): boolean {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (name === "cookie") continue;
    if (seen.has(name)) return true;
    seen.add(name);
  }
  return false;
}

/** `apns-id`: absent, or a canonical lowercase UUID (8-4-4-4-12 lowercase hex digits). */
export function checkApnsId(value: HeaderValue): Checked<string | null> {
  if (value === undefined) return ok(null);
  if (typeof value !== "string" || !LOWERCASE_UUID.test(value)) return refuse(400, "BadMessageId");
  return ok(value);
}

/**
 * The headers after authentication, in this order: topic (required with token
 * authentication), push type, priority (background pushes must use 5: Apple calls 10
 * with a content-available-only payload an error), expiration, collapse id.
 */
export function checkApnsHeaders(headers: Record<string, HeaderValue>): Checked<ApnsHeaders> {
  const topic = headers["apns-topic"];
  if (topic === undefined) return refuse(400, "MissingTopic");
  if (typeof topic !== "string" || !TOPIC.test(topic)) return refuse(400, "BadTopic");

  const rawType = headers["apns-push-type"];
  if (rawType !== undefined && (typeof rawType !== "string" || !(PUSH_TYPES as readonly string[]).includes(rawType))) {
    return refuse(400, "InvalidPushType");
  }
  const pushType = (rawType as PushType | undefined) ?? null;

  const rawPriority = headers["apns-priority"];
  if (rawPriority !== undefined && rawPriority !== "10" && rawPriority !== "5" && rawPriority !== "1") {
    return refuse(400, "BadPriority");
  }
  const priority = rawPriority === undefined ? 10 : (Number(rawPriority) as 10 | 5 | 1);
  if (pushType === "background" && priority !== 5) return refuse(400, "BadPriority");

  const rawExpiration = headers["apns-expiration"];
  if (rawExpiration !== undefined && (typeof rawExpiration !== "string" || !EPOCH_SECONDS.test(rawExpiration))) {
    return refuse(400, "BadExpirationDate");
  }
  const expiration = rawExpiration === undefined ? null : Number(rawExpiration);

  const collapseId = headers["apns-collapse-id"];
  if (
    collapseId !== undefined &&
    (typeof collapseId !== "string" || collapseId.length === 0 || Buffer.byteLength(collapseId) > MAX_COLLAPSE_ID_BYTES)
  ) {
    return refuse(400, "BadCollapseId");
  }
  return ok({ topic, pushType, priority, expiration, collapseId: collapseId ?? null });
}

/** The push-type suffix a topic carries ("" for a bare bundle id). */
export function topicSuffix(topic: string): string {
  let best = "";
  for (const suffix of Object.values(TOPIC_SUFFIX)) {
    if (suffix && topic.endsWith(suffix) && topic.length > suffix.length && suffix.length > best.length) best = suffix;
  }
  return best;
}

/**
 * Whether the provider key may push to `topic` with `pushType`: the topic must be one
 * of the key's bundle ids, bare or with a push-type suffix (else TopicDisallowed), and
 * its suffix must be the one the push type requires (else InvalidPushType).
 */
export function checkTopicForKey(
  topic: string,
  pushType: PushType | null,
  keyTopics: ReadonlySet<string>,
): Checked<null> {
  const suffix = topicSuffix(topic);
  const allowed = keyTopics.has(topic) || (suffix !== "" && keyTopics.has(topic.slice(0, -suffix.length)));
  if (!allowed) return refuse(400, "TopicDisallowed");
  const required = pushType === null ? null : TOPIC_SUFFIX[pushType];
  if (required !== null && required !== suffix) return refuse(400, "InvalidPushType");
  return ok(null);
}

/** The push type a request is treated as: the header's, else the one its topic suffix implies. */
export function effectivePushType(headers: ApnsHeaders): PushType | null {
  if (headers.pushType) return headers.pushType;
  const suffix = topicSuffix(headers.topic);
  if (!suffix) return null;
  return (Object.entries(TOPIC_SUFFIX).find(([, s]) => s === suffix)?.[0] as PushType | undefined) ?? null;
}

/** A topic given to the admin API, validated the same way as `apns-topic`. */
export function isTopic(value: unknown): value is string {
  return typeof value === "string" && TOPIC.test(value);
}
