/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.util;

public final class Log {
    public static int d(String tag, String msg) {
        return 0;
    }

    public static int w(String tag, String msg, Throwable tr) {
        System.err.println(tag + ": " + msg + (tr == null ? "" : " (" + tr + ")"));
        return 0;
    }
}
