package dev.herald.core;

import java.util.Locale;

/**
 * The device's language and time zone as Herald stores them (docs/sdk-protocol.md §4): an
 * ISO 639-1 code from a BCP 47 tag ("pt-BR" → "pt"), and an IANA zone name. Anything else
 * is left out (null), since the API refuses the whole registration for a bad value.
 */
public final class Locales {
    private Locales() {}

    /** The two-letter primary subtag of {@code tag} in lower case, or null. Java's legacy iw/in/ji map to he/id/yi. */
    public static String languageOf(String tag) {
        if (tag == null) return null;
        String primary = tag.split("[-_]", 2)[0].toLowerCase(Locale.ROOT);
        if (!primary.matches("[a-z]{2}")) return null;
        switch (primary) {
            case "iw":
                return "he";
            case "in":
                return "id";
            case "ji":
                return "yi";
            default:
                return primary;
        }
    }

    /** {@code zone} when it is an IANA name ("Europe/Berlin", "UTC", "Etc/GMT+5"), not an offset; else null. */
    public static String timezoneOf(String zone) {
        if (zone == null || zone.length() > 64) return null;
        if (!zone.matches("[A-Za-z_]+(/[A-Za-z0-9_+-]+)*")) return null;
        // "GMT+05:30" fails the pattern above; bare "GMT"/"UTC" and Etc/… names are IANA.
        return zone;
    }
}
