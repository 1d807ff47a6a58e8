package dev.herald.core;

import java.text.ParsePosition;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;

/** What to do with one answer, and how long to wait before a retry (docs/sdk-protocol.md §5). */
public final class RetryPolicy {
    public static final long BASE_MS = 1_000;
    public static final long CAP_MS = 300_000;
    public static final int MAX_ATTEMPTS = 8;
    public static final double RETRY_AFTER_JITTER = 0.1;

    /** The kind of call an answer belongs to. */
    public enum Call {
        /** POST /v1/devices/register */
        REGISTER,
        /** any /v1/devices/{id} call, with the token proof */
        DEVICE,
        /** GET /v1/apps/{app_id}/android-channels */
        CHANNELS
    }

    public enum Outcome {
        DONE,
        RETRY,
        /** register the current token with the full desired state, then continue */
        REREGISTER,
        /** a bug or bad input: log, drop this change */
        DROP,
        /** a configuration error: stop syncing until the next start */
        STOP
    }

    private RetryPolicy() {}

    /** {@code status} null: a network error or timeout. 304 counts as done (a current copy). */
    public static Outcome classify(Call call, Integer status) {
        if (status == null) return Outcome.RETRY;
        int s = status;
        if ((s >= 200 && s < 300) || s == 304) return Outcome.DONE;
        if (s == 408 || s == 429 || s >= 500) return Outcome.RETRY;
        if (s == 401) return Outcome.STOP;
        if (s == 403) return call == Call.DEVICE ? Outcome.REREGISTER : Outcome.STOP;
        if (s == 404 && call == Call.DEVICE) return Outcome.REREGISTER;
        return Outcome.DROP;
    }

    /**
     * The wait before retry {@code attempt} (0 = the first retry): full jitter under an
     * exponential cap, and with a Retry-After the larger of that and the floor plus 0–10 %.
     */
    public static long delayMs(int attempt, Long retryAfterMs, RandomSource random) {
        long ceiling = attempt >= 30 ? CAP_MS : Math.min(CAP_MS, BASE_MS << attempt);
        long exponential = Math.round(random.nextDouble() * ceiling);
        if (retryAfterMs == null) return exponential;
        long floor = Math.round(retryAfterMs * (1 + random.nextDouble() * RETRY_AFTER_JITTER));
        return Math.max(exponential, floor);
    }

    /** Retry-After as milliseconds from {@code nowMs}: integer seconds or an HTTP date; null when absent or unreadable. */
    public static Long retryAfterMs(String header, long nowMs) {
        if (header == null) return null;
        String value = header.trim();
        if (value.isEmpty()) return null;
        if (value.matches("\\d{1,9}")) return Long.parseLong(value) * 1000;
        for (String pattern : new String[] {"EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"}) {
            SimpleDateFormat format = new SimpleDateFormat(pattern, Locale.US);
            format.setTimeZone(TimeZone.getTimeZone("GMT"));
            format.setLenient(false);
            ParsePosition pos = new ParsePosition(0);
            Date date = format.parse(value, pos);
            if (date != null && pos.getIndex() == value.length()) return Math.max(0, date.getTime() - nowMs);
        }
        return null;
    }
}
