/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.content.pm;

import android.content.Intent;
import java.util.HashMap;
import java.util.Map;

/** Abstract on Android; a fake here. */
public class PackageManager {
    public static final int PERMISSION_GRANTED = 0;
    public static final int PERMISSION_DENIED = -1;

    public final Map<String, PackageInfo> packages = new HashMap<>();

    public static class NameNotFoundException extends Exception {
        public NameNotFoundException(String name) {
            super(name);
        }
    }

    public PackageInfo getPackageInfo(String packageName, int flags) throws NameNotFoundException {
        PackageInfo p = packages.get(packageName);
        if (p == null) throw new NameNotFoundException(packageName);
        return p;
    }

    public Intent getLaunchIntentForPackage(String packageName) {
        Intent i = new Intent();
        i.packageName = packageName;
        i.componentClassName = "launcher";
        return i;
    }
}
