/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

public final class NotificationChannelGroup {
    private final String id;
    private final CharSequence name;

    public NotificationChannelGroup(String id, CharSequence name) {
        this.id = id;
        this.name = name;
    }

    public String getId() {
        return id;
    }

    public CharSequence getName() {
        return name;
    }
}
