/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

import android.content.Context;
import android.content.Intent;

public final class PendingIntent {
    public static final int FLAG_UPDATE_CURRENT = 0x08000000;
    public static final int FLAG_IMMUTABLE = 0x04000000;

    /** The fake's record of what it would start. */
    public final Intent intent;
    public final int requestCode;
    public final int flags;

    private PendingIntent(Intent intent, int requestCode, int flags) {
        this.intent = intent;
        this.requestCode = requestCode;
        this.flags = flags;
    }

    public static PendingIntent getActivity(Context context, int requestCode, Intent intent, int flags) {
        return new PendingIntent(intent, requestCode, flags);
    }
}
