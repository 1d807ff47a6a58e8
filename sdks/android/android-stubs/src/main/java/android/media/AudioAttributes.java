/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.media;

public final class AudioAttributes {
    public static final int USAGE_NOTIFICATION = 5;
    public static final int CONTENT_TYPE_SONIFICATION = 4;

    public static class Builder {
        private int usage;

        public Builder setUsage(int usage) {
            this.usage = usage;
            return this;
        }

        public Builder setContentType(int contentType) {
            return this;
        }

        public AudioAttributes build() {
            return new AudioAttributes();
        }
    }
}
