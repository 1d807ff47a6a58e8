/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.content;

import android.content.pm.ApplicationInfo;
import android.content.pm.PackageManager;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Abstract on Android; a configurable fake here (tests set its fields). */
public class Context {
    public static final String NOTIFICATION_SERVICE = "notification";

    /** The fake's state. */
    public String packageName = "com.example.app";
    public File noBackupFilesDir = new File(System.getProperty("java.io.tmpdir"), "herald-fake-nobackup");
    public final Map<String, Object> services = new HashMap<>();
    public final Map<String, Integer> permissions = new HashMap<>();
    public final List<Intent> startedActivities = new ArrayList<>();
    public PackageManager packageManager = new PackageManager();
    public ApplicationInfo applicationInfo = new ApplicationInfo();

    public Context getApplicationContext() {
        return this;
    }

    public String getPackageName() {
        return packageName;
    }

    public PackageManager getPackageManager() {
        return packageManager;
    }

    public ApplicationInfo getApplicationInfo() {
        return applicationInfo;
    }

    public Object getSystemService(String name) {
        return services.get(name);
    }

    public File getNoBackupFilesDir() {
        return noBackupFilesDir;
    }

    public int checkSelfPermission(String permission) {
        Integer v = permissions.get(permission);
        return v == null ? PackageManager.PERMISSION_DENIED : v;
    }

    public void startActivity(Intent intent) {
        startedActivities.add(intent);
    }
}
