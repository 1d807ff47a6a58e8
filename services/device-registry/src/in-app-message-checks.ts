import type { InAppAudience, InAppContents, InAppMessageSettings, InAppTime } from "@herald/proto/in_app_message";
import { failedPrecondition, fromTimestamp, invalidArgument, ISO_639_1 } from "@herald/runtime";
import { MAX_EXTERNAL_IDS } from "./audience-filter.js";
import { hasControlCharacter, MAX_EXTERNAL_ID_LENGTH } from "./device-checks.js";
import { isUuid } from "./ids.js";

/**
 * Validation of in-app message settings. Shape problems are INVALID_ARGUMENT (400 at the
 * gateway); a well-formed message that cannot be served — no "en" fallback, an end not
 * after its start — is FAILED_PRECONDITION (422), as for sends. Messages name the field
 * and echo user values only when short and harmless.
 */
export const IN_APP_LIMITS = {
  /** Messages per app: the device fetch reads every active one of the app. */
  perApp: 1_000,
  /** Messages one fetch returns. */
  perFetch: 20,
  nameLength: 200,
  languages: 100,
  titleLength: 200,
  bodyLength: 2_000,
  urlLength: 2_048,
  maxPriority: 100,
  maxImpressions: 1_000_000,
} as const;

export const FALLBACK_LANGUAGE = "en";

/** Language code → text; always holds FALLBACK_LANGUAGE once stored. */
export type InAppContentsMap = Record<string, { title: string; body: string }>;

export type InAppAudienceTarget =
  | { kind: "all" }
  | { kind: "segment"; segmentId: string }
  | { kind: "external_ids"; externalIds: string[] };

/** The settings of a create or an update; undefined keeps the stored value, null clears it. */
export interface InAppFields {
  name?: string;
  contents?: InAppContentsMap;
  imageUrl?: string | null;
  actionUrl?: string | null;
  audience?: InAppAudienceTarget;
  startsAt?: Date | null;
  endsAt?: Date | null;
  priority?: number;
  maxImpressions?: number | null;
}

const chars = (s: string): number => [...s].length;

/** The wire settings → fields; every set field is validated, the 422 rules are separate. */
export function inAppFields(s: InAppMessageSettings | undefined): InAppFields {
  const out: InAppFields = {};
  if (!s) return out;
  if (s.name !== undefined) out.name = name(s.name);
  if (s.contents !== undefined) out.contents = contents(s.contents);
  if (s.imageUrl !== undefined) out.imageUrl = s.imageUrl === "" ? null : url(s.imageUrl, "image_url", ["https:"]);
  if (s.actionUrl !== undefined) {
    out.actionUrl = s.actionUrl === "" ? null : url(s.actionUrl, "action_url", ["https:", "http:"]);
  }
  if (s.audience !== undefined) out.audience = audience(s.audience);
  if (s.startsAt !== undefined) out.startsAt = time(s.startsAt, "starts_at");
  if (s.endsAt !== undefined) out.endsAt = time(s.endsAt, "ends_at");
  if (s.priority !== undefined) {
    if (s.priority > IN_APP_LIMITS.maxPriority)
      throw invalidArgument(`priority must be 0 to ${IN_APP_LIMITS.maxPriority}`);
    out.priority = s.priority;
  }
  if (s.maxImpressions !== undefined) {
    if (s.maxImpressions > IN_APP_LIMITS.maxImpressions) {
      throw invalidArgument(`max_impressions must be 1 to ${IN_APP_LIMITS.maxImpressions}, or null for unlimited`);
    }
    out.maxImpressions = s.maxImpressions === 0 ? null : s.maxImpressions;
  }
  return out;
}

/** Every device gets its language's entry or the "en" one, so a message without "en" could show nothing. */
export function requireFallback(value: InAppContentsMap): void {
  if (!Object.hasOwn(value, FALLBACK_LANGUAGE)) {
    throw failedPrecondition(`contents must include an "${FALLBACK_LANGUAGE}" entry, the fallback language`);
  }
}

/** The window as it will be stored: an end must come after the start. */
export function requireWindow(startsAt: Date | null, endsAt: Date | null): void {
  if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw failedPrecondition("ends_at must be after starts_at");
  }
}

function name(value: string): string {
  const n = chars(value);
  if (n < 1 || n > IN_APP_LIMITS.nameLength || hasControlCharacter(value)) {
    throw invalidArgument(`name must be 1 to ${IN_APP_LIMITS.nameLength} characters without control characters`);
  }
  return value;
}

/** The key rules of a send's contents (services/campaign/src/campaign-checks.ts), with the in-app lengths. */
function contents(value: InAppContents): InAppContentsMap {
  const entries = Object.entries(value.entries);
  if (entries.length < 1 || entries.length > IN_APP_LIMITS.languages) {
    throw invalidArgument(`contents must hold 1 to ${IN_APP_LIMITS.languages} languages`);
  }
  const out: InAppContentsMap = {};
  for (const [lang, content] of entries) {
    if (!/^[a-z]{2}$/.test(lang) || !ISO_639_1.has(lang)) {
      throw invalidArgument(
        `contents keys must be ISO 639-1 codes such as "en" (two lowercase letters); "${lang.slice(0, 16)}" is not one`,
      );
    }
    const { title, body } = content;
    if (chars(title) < 1 || chars(title) > IN_APP_LIMITS.titleLength) {
      throw invalidArgument(`contents.${lang}.title must be 1 to ${IN_APP_LIMITS.titleLength} characters`);
    }
    if (chars(body) < 1 || chars(body) > IN_APP_LIMITS.bodyLength) {
      throw invalidArgument(`contents.${lang}.body must be 1 to ${IN_APP_LIMITS.bodyLength} characters`);
    }
    out[lang] = { title, body };
  }
  return out;
}

function url(value: string, field: string, protocols: readonly string[]): string {
  const kind = protocols.length === 1 ? "an https" : "an http or https";
  const bad = () => invalidArgument(`${field} must be ${kind} URL of at most ${IN_APP_LIMITS.urlLength} characters`);
  if (value.length > IN_APP_LIMITS.urlLength || /\s/.test(value)) throw bad();
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw bad();
  }
  if (!protocols.includes(parsed.protocol) || parsed.hostname === "") throw bad();
  return value;
}

function audience(value: InAppAudience): InAppAudienceTarget {
  const t = value.target;
  switch (t.case) {
    case "all":
      return { kind: "all" };
    case "segmentId":
      if (!isUuid(t.value)) throw invalidArgument("audience.segment_id must be a UUID");
      return { kind: "segment", segmentId: t.value.toLowerCase() };
    case "externalIds": {
      const ids = [...new Set(t.value.externalIds)];
      if (ids.length < 1 || ids.length > MAX_EXTERNAL_IDS) {
        throw invalidArgument(`audience.external_ids must hold 1 to ${MAX_EXTERNAL_IDS} distinct ids`);
      }
      if (!ids.every((id) => id !== "" && id.length <= MAX_EXTERNAL_ID_LENGTH && !hasControlCharacter(id))) {
        throw invalidArgument(
          `audience.external_ids must be non-empty strings of at most ${MAX_EXTERNAL_ID_LENGTH} characters without control characters`,
        );
      }
      return { kind: "external_ids", externalIds: ids };
    }
    default:
      throw invalidArgument("audience must be one of all, segment_id or external_ids");
  }
}

/** Set without a time: cleared. */
function time(value: InAppTime, field: string): Date | null {
  if (!value.at) return null;
  const date = fromTimestamp(value.at);
  if (Number.isNaN(date.getTime())) throw invalidArgument(`${field} must be a valid timestamp`);
  return date;
}
