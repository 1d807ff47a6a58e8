/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.content;

import android.net.Uri;
import android.os.Bundle;

public class Intent {
    public static final String ACTION_VIEW = "android.intent.action.VIEW";
    public static final int FLAG_ACTIVITY_NEW_TASK = 0x10000000;
    public static final int FLAG_ACTIVITY_NO_HISTORY = 0x40000000;
    public static final String CATEGORY_BROWSABLE = "android.intent.category.BROWSABLE";

    private String action;
    private Uri data;
    private Bundle extras;
    private int flags;
    /** The fake's target class name when made with (Context, Class). */
    public String componentClassName;
    public String packageName;
    public final java.util.Set<String> categories = new java.util.LinkedHashSet<>();

    public Intent() {}

    public Intent(String action, Uri uri) {
        this.action = action;
        this.data = uri;
    }

    public Intent(Context packageContext, Class<?> cls) {
        this.componentClassName = cls.getName();
        this.packageName = packageContext.getPackageName();
    }

    public String getAction() {
        return action;
    }

    public Uri getData() {
        return data;
    }

    public Intent putExtra(String name, String value) {
        if (extras == null) extras = new Bundle();
        extras.putString(name, value);
        return this;
    }

    public String getStringExtra(String name) {
        return extras == null ? null : extras.getString(name);
    }

    public Bundle getExtras() {
        return extras;
    }

    public void removeExtra(String name) {
        if (extras != null) extras.remove(name);
    }

    public Intent addFlags(int flags) {
        this.flags |= flags;
        return this;
    }

    public int getFlags() {
        return flags;
    }

    public Intent addCategory(String category) {
        categories.add(category);
        return this;
    }

    public Intent setPackage(String packageName) {
        this.packageName = packageName;
        return this;
    }
}
