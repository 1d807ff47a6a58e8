/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.net;

public abstract class Uri {
    public static Uri parse(String uriString) {
        return new StringUri(uriString);
    }

    public abstract String getScheme();

    @Override
    public abstract String toString();

    private static final class StringUri extends Uri {
        private final String s;

        StringUri(String s) {
            this.s = s;
        }

        @Override
        public String getScheme() {
            int i = s.indexOf(':');
            return i > 0 ? s.substring(0, i) : null;
        }

        @Override
        public String toString() {
            return s;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof StringUri && ((StringUri) o).s.equals(s);
        }

        @Override
        public int hashCode() {
            return s.hashCode();
        }
    }
}
