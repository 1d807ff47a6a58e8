package dev.herald.core;

import java.net.URI;
import java.text.ParsePosition;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;

/** URL and time helpers. */
public final class Urls {
    private Urls() {}

    /** {@code url} when it is an absolute http or https URL with a host, else null: never javascript:, intent:, file: … */
    public static String openable(String url) {
        if (url == null) return null;
        try {
            URI uri = new URI(url.trim());
            String scheme = uri.getScheme();
            if (scheme == null) return null;
            scheme = scheme.toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https")) return null;
            if (uri.getHost() == null || uri.getHost().isEmpty()) return null;
            return url.trim();
        } catch (Exception e) {
            return null;
        }
    }

    /** Milliseconds of an ISO 8601 UTC timestamp ("2026-11-21T10:00:00.000Z"), or null. */
    public static Long isoMillis(String text) {
        if (text == null) return null;
        for (String pattern : new String[] {"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", "yyyy-MM-dd'T'HH:mm:ss'Z'"}) {
            SimpleDateFormat f = new SimpleDateFormat(pattern, Locale.US);
            f.setTimeZone(TimeZone.getTimeZone("UTC"));
            f.setLenient(false);
            ParsePosition pos = new ParsePosition(0);
            Date d = f.parse(text, pos);
            if (d != null && pos.getIndex() == text.length()) return d.getTime();
        }
        return null;
    }
}
