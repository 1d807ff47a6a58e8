import { Priority, type CampaignTarget, type Content, type SendOptions } from "@herald/proto/campaign";
import { failedPrecondition, invalidArgument, ISO_639_1, isUuid } from "@herald/runtime";
import { httpsUrl, notificationOptions } from "./notification-checks.js";
import { FALLBACK_LANGUAGE, type Contents, type DeliveryOptions, type Target } from "./campaign.js";

/**
 * Checks of CreateCampaign. Shape problems are INVALID_ARGUMENT (400 at the gateway);
 * requests that are well formed but cannot be served are FAILED_PRECONDITION (422).
 * Every message names the field; user values are echoed only when short and harmless.
 */
export const LIMITS = {
  nameLength: 200,
  languages: 100,
  titleLength: 256,
  bodyLength: 2048,
  dataBytes: 3 * 1024,
  externalIds: 10_000,
  externalIdLength: 255,
  deviceIds: 100,
  ttlSeconds: 2_419_200,
  collapseIdBytes: 64,
  idempotencyKeyLength: 255,
  /** Clock skew tolerated for a scheduled_at "now". */
  pastToleranceMs: 5_000,
  scheduleHorizonMs: 365 * 24 * 3600 * 1000,
} as const;

const CONTROL = /\p{Cc}/u;

export { isUuid };

/** Characters as a reader counts them: code points, not UTF-16 units. */
const charCount = (s: string): number => [...s].length;

export function appId(value: string): string {
  if (!isUuid(value)) throw invalidArgument("app_id must be a UUID");
  return value.toLowerCase();
}

/**
 * An erased user's external id, as the registry accepts one (at most 255 characters, no
 * control characters); "" means none was given.
 */
export function externalId(value: string): string {
  if (charCount(value) > LIMITS.externalIdLength || CONTROL.test(value)) {
    throw invalidArgument(
      `external_id must be at most ${LIMITS.externalIdLength} characters without control characters`,
    );
  }
  return value;
}

export function name(value: string): string {
  const n = charCount(value);
  if (n < 1 || n > LIMITS.nameLength) throw invalidArgument(`name must be 1 to ${LIMITS.nameLength} characters`);
  return value;
}

/** Shape of the contents map; the "en" fallback is a semantic rule, see requireFallback. */
export function contents(value: { [lang: string]: Content }): Contents {
  const entries = Object.entries(value);
  if (entries.length < 1 || entries.length > LIMITS.languages) {
    throw invalidArgument(`contents must hold 1 to ${LIMITS.languages} languages`);
  }
  const out: Contents = {};
  for (const [lang, content] of entries) {
    if (!/^[a-z]{2}$/.test(lang) || !ISO_639_1.has(lang)) {
      throw invalidArgument(
        `contents keys must be ISO 639-1 codes such as "en" (two lowercase letters); "${lang.slice(0, 16)}" is not one`,
      );
    }
    const { title, body } = content;
    if (charCount(title) > LIMITS.titleLength) {
      throw invalidArgument(`contents.${lang}.title must be at most ${LIMITS.titleLength} characters`);
    }
    if (charCount(body) > LIMITS.bodyLength) {
      throw invalidArgument(`contents.${lang}.body must be at most ${LIMITS.bodyLength} characters`);
    }
    if (title === "" && body === "") throw invalidArgument(`contents.${lang} needs a title or a body`);
    out[lang] = { title, body };
  }
  return out;
}

export function requireFallback(value: Contents): void {
  if (!(FALLBACK_LANGUAGE in value)) {
    throw failedPrecondition(`contents must include an "${FALLBACK_LANGUAGE}" entry, the fallback language`);
  }
}

/** Custom data: empty, or a JSON object of at most 3 KB without an "aps" key. Returns compact text. */
export function dataJson(value: string): string {
  if (value === "") return "";
  // Whitespace may shrink when compacted, but not by this much: refuse before parsing.
  if (value.length > LIMITS.dataBytes * 16)
    throw invalidArgument(`data must be at most ${LIMITS.dataBytes} bytes as JSON`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalidArgument("data must be valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw invalidArgument("data must be a JSON object");
  }
  // iOS puts the data keys beside "aps" at the top level of the payload.
  if (Object.hasOwn(parsed, "aps")) throw invalidArgument('data must not contain the key "aps"');
  const compact = JSON.stringify(parsed);
  if (Buffer.byteLength(compact) > LIMITS.dataBytes) {
    throw invalidArgument(`data must be at most ${LIMITS.dataBytes} bytes as JSON`);
  }
  return compact === "{}" ? "" : compact;
}

export function target(value: CampaignTarget | undefined): Target {
  const t = value?.target;
  switch (t?.case) {
    case "all":
      return { kind: "all" };
    case "externalIds": {
      for (const id of t.value.externalIds) {
        if (id === "" || charCount(id) > LIMITS.externalIdLength || CONTROL.test(id)) {
          throw invalidArgument(
            `external_ids must be non-empty strings of at most ${LIMITS.externalIdLength} characters without control characters`,
          );
        }
      }
      const ids = [...new Set(t.value.externalIds)];
      if (ids.length < 1 || ids.length > LIMITS.externalIds) {
        throw invalidArgument(`external_ids must hold 1 to ${LIMITS.externalIds} distinct ids`);
      }
      return { kind: "external_ids", externalIds: ids };
    }
    case "segment":
      if (!isUuid(t.value.segmentId)) throw invalidArgument("segment_id must be a UUID");
      return { kind: "segment", segmentId: t.value.segmentId.toLowerCase() };
    case "deviceIds": {
      if (!t.value.deviceIds.every(isUuid)) throw invalidArgument("device_ids must be UUIDs");
      const ids = [...new Set(t.value.deviceIds.map((id) => id.toLowerCase()))];
      if (ids.length < 1 || ids.length > LIMITS.deviceIds) {
        throw invalidArgument(`device_ids must hold 1 to ${LIMITS.deviceIds} distinct ids`);
      }
      return { kind: "device_ids", deviceIds: ids };
    }
    default:
      throw invalidArgument("target is required: all, external_ids, segment_id or device_ids");
  }
}

export function options(value: SendOptions | undefined): DeliveryOptions {
  const ttlSeconds = value?.ttlSeconds ?? 0;
  if (ttlSeconds > LIMITS.ttlSeconds) throw invalidArgument(`ttl_seconds must be 0 to ${LIMITS.ttlSeconds}`);
  let priority: DeliveryOptions["priority"];
  switch (value?.priority ?? Priority.UNSPECIFIED) {
    case Priority.UNSPECIFIED:
    case Priority.NORMAL:
      priority = "normal";
      break;
    case Priority.HIGH:
      priority = "high";
      break;
    default:
      throw invalidArgument("priority must be normal or high");
  }
  const out: DeliveryOptions = { ttlSeconds, priority };
  if (value?.collapseId) {
    if (Buffer.byteLength(value.collapseId) > LIMITS.collapseIdBytes || CONTROL.test(value.collapseId)) {
      throw invalidArgument(`collapse_id must be at most ${LIMITS.collapseIdBytes} bytes without control characters`);
    }
    out.collapseId = value.collapseId;
  }
  if (value?.imageUrl) out.imageUrl = httpsUrl(value.imageUrl, "image_url");
  const notification = notificationOptions(value?.notification);
  if (notification) out.notification = notification;
  return out;
}

export function idempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === "" || value.length > LIMITS.idempotencyKeyLength || CONTROL.test(value)) {
    throw invalidArgument(
      `idempotency key must be 1 to ${LIMITS.idempotencyKeyLength} characters without control characters`,
    );
  }
  return value;
}

export function timestamp(value: Date, field: string): Date {
  if (Number.isNaN(value.getTime())) throw invalidArgument(`${field} must be a valid timestamp`);
  return value;
}

/** A start time that is neither (noticeably) past nor more than a year away. */
export function scheduleWindow(value: Date | undefined, now: Date): void {
  if (value === undefined) return;
  if (value.getTime() < now.getTime() - LIMITS.pastToleranceMs) throw failedPrecondition("scheduled_at is in the past");
  if (value.getTime() > now.getTime() + LIMITS.scheduleHorizonMs) {
    throw failedPrecondition("scheduled_at must be at most one year ahead");
  }
}
