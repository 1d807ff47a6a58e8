import { invalidArgument, ISO_639_1 } from "@herald/runtime";

/**
 * Validation and normalisation of the optional device fields. Each throws
 * INVALID_ARGUMENT naming the field; values are echoed only when short and harmless.
 */
export const MAX_TAGS = 100;
export const MAX_TAG_LENGTH = 64;
export const MAX_EXTERNAL_ID_LENGTH = 255;
export const MAX_APP_VERSION_LENGTH = 64;

const LANGUAGE_TAG = /^([A-Za-z]{2})(?:[-_][A-Za-z0-9]{1,8})*$/;
const TIMEZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;
const CONTROL = /\p{Cc}/u;

/** ISO 639-1 code, any case; a region or script suffix ("pt-BR", "zh_Hant") is dropped. */
export function normaliseLanguage(value: string): string {
  const code = languageCode(value);
  if (!code) throw invalidArgument('language must be an ISO 639-1 code such as "en" or "pt-BR"');
  return code;
}

/** The lower-case ISO 639-1 code of a language tag; undefined when it has none. */
export function languageCode(value: string): string | undefined {
  const code = LANGUAGE_TAG.exec(value)?.[1]?.toLowerCase();
  return code && ISO_639_1.has(code) ? code : undefined;
}

export function normaliseTimezone(value: string): string {
  const name = timezoneName(value);
  if (!name) throw invalidArgument('timezone must be an IANA time zone name such as "Europe/Berlin"');
  return name;
}

/**
 * An IANA time zone name that Intl knows; undefined otherwise. Case is corrected to the
 * canonical spelling, but aliases are kept as given (ICU would turn "Asia/Kolkata" into
 * "Asia/Calcutta").
 */
export function timezoneName(value: string): string | undefined {
  if (!TIMEZONE_NAME.test(value)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return resolved.toLowerCase() === value.toLowerCase() ? resolved : value;
}

export function checkExternalId(value: string): string {
  if (value.length > MAX_EXTERNAL_ID_LENGTH || CONTROL.test(value)) {
    throw invalidArgument(
      `external_id must be at most ${MAX_EXTERNAL_ID_LENGTH} characters without control characters`,
    );
  }
  return value;
}

export function checkAppVersion(value: string): string {
  if (!isAppVersion(value)) {
    throw invalidArgument(
      `app_version must be at most ${MAX_APP_VERSION_LENGTH} characters without control characters`,
    );
  }
  return value;
}

/** At most 100 tags of 1-64 characters; duplicates collapse, first occurrence keeps its place. */
export function normaliseTags(tags: readonly string[]): string[] {
  const unique = [...new Set(tags)];
  if (unique.length > MAX_TAGS) throw invalidArgument(`tags must hold at most ${MAX_TAGS} distinct tags`);
  if (!unique.every(isTag)) {
    throw invalidArgument(`each tag must be 1-${MAX_TAG_LENGTH} characters without control characters`);
  }
  return unique;
}

export const isTag = (tag: string): boolean => {
  const length = [...tag].length;
  return length >= 1 && length <= MAX_TAG_LENGTH && !CONTROL.test(tag);
};

export const isAppVersion = (value: string): boolean => value.length <= MAX_APP_VERSION_LENGTH && !CONTROL.test(value);

export const hasControlCharacter = (value: string): boolean => CONTROL.test(value);

/**
 * An optional field of a request: unset keeps the stored value (undefined), the empty
 * string clears it (null), anything else is normalised.
 */
export function fieldChange(value: string | undefined, normalise: (v: string) => string): string | null | undefined {
  if (value === undefined) return undefined;
  return value === "" ? null : normalise(value);
}
