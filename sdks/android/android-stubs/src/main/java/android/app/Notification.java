/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

import android.content.Context;
import android.graphics.Bitmap;

public class Notification {
    /** The fake's record of what was built. */
    public String channelId;
    public CharSequence title;
    public CharSequence text;
    public int smallIcon;
    public boolean autoCancel;
    public PendingIntent contentIntent;
    public Style style;

    public abstract static class Style {}

    public static class BigPictureStyle extends Style {
        public Bitmap picture;
        public CharSequence summary;

        public BigPictureStyle() {}

        public BigPictureStyle bigPicture(Bitmap b) {
            picture = b;
            return this;
        }

        public BigPictureStyle setSummaryText(CharSequence cs) {
            summary = cs;
            return this;
        }
    }

    public static class BigTextStyle extends Style {
        public CharSequence text;

        public BigTextStyle() {}

        public BigTextStyle bigText(CharSequence cs) {
            text = cs;
            return this;
        }
    }

    public static class Builder {
        private final Notification n = new Notification();

        public Builder(Context context, String channelId) {
            n.channelId = channelId;
        }

        /** Deprecated in API 26 (no channel); still the one for older devices. */
        @Deprecated
        public Builder(Context context) {}

        public Builder setContentTitle(CharSequence title) { n.title = title; return this; }
        public Builder setContentText(CharSequence text) { n.text = text; return this; }
        public Builder setSmallIcon(int icon) { n.smallIcon = icon; return this; }
        public Builder setAutoCancel(boolean autoCancel) { n.autoCancel = autoCancel; return this; }
        public Builder setContentIntent(PendingIntent intent) { n.contentIntent = intent; return this; }
        public Builder setStyle(Style style) { n.style = style; return this; }
        public Builder setLargeIcon(Bitmap b) { return this; }

        public Notification build() {
            return n;
        }
    }
}
