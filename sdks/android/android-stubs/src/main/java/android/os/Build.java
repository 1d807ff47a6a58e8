/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.os;

public class Build {
    public static class VERSION {
        /** Not final here, so tests can play other API levels. */
        public static int SDK_INT = 34;
    }

    public static class VERSION_CODES {
        public static final int LOLLIPOP = 21;
        public static final int M = 23;
        public static final int O = 26;
        public static final int S = 31;
        public static final int TIRAMISU = 33;
    }
}
