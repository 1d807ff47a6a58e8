/**
 * The device's language and time zone as Herald stores them: an ISO 639-1 code from a
 * BCP 47 tag ("pt-BR" → "pt"), and an IANA zone name. Anything else is left out, since the
 * API refuses the whole registration for a bad value (docs/sdk-protocol.md §4).
 */
export function languageOf(tag: string | undefined | null): string | undefined {
  const primary = tag?.split(/[-_]/)[0]?.toLowerCase();
  return primary && /^[a-z]{2}$/.test(primary) ? primary : undefined;
}

/** The zone of Intl, when it is an IANA name ("Europe/Berlin", "UTC"), not an offset. */
export function timezoneOf(zone: string | undefined): string | undefined {
  return zone && /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(zone) ? zone : undefined;
}

export function currentTimezone(): string | undefined {
  try {
    return timezoneOf(Intl.DateTimeFormat().resolvedOptions().timeZone);
  } catch {
    return undefined;
  }
}
