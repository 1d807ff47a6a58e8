package dev.herald.android;

import android.app.Activity;
import android.os.Bundle;

/**
 * The tap of a notification Herald showed (exported="false", no UI): reports "clicked", opens
 * action_url when it is http or https, else the app, and finishes.
 */
public class HeraldClickActivity extends Activity {
    @Override
    protected void onCreate(Bundle savedInstanceState) {
        super.onCreate(savedInstanceState);
        try {
            Herald.handleClick(this, getIntent(), true);
        } finally {
            finish();
        }
    }
}
