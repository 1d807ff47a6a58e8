/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

import android.content.ContextWrapper;
import android.content.Intent;
import android.os.Bundle;
import java.util.ArrayList;
import java.util.List;

public class Activity extends ContextWrapper {
    private Intent intent;
    /** The fake's record. */
    public boolean finished;
    public final List<String[]> requestedPermissions = new ArrayList<>();

    public Activity() {
        super(null);
    }

    protected void onCreate(Bundle savedInstanceState) {}

    public Intent getIntent() {
        return intent;
    }

    public void setIntent(Intent newIntent) {
        intent = newIntent;
    }

    public void finish() {
        finished = true;
    }

    public final void requestPermissions(String[] permissions, int requestCode) {
        requestedPermissions.add(permissions);
    }

    public boolean shouldShowRequestPermissionRationale(String permission) {
        return false;
    }
}
