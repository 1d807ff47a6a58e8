package dev.herald.android;

import android.Manifest;
import android.app.Activity;
import android.app.NotificationManager;
import android.content.Context;
import android.content.Intent;
import android.content.pm.PackageManager;
import android.net.Uri;
import android.os.Build;
import android.os.Bundle;
import android.util.Log;
import com.google.android.gms.tasks.Tasks;
import com.google.firebase.messaging.FirebaseMessaging;
import dev.herald.core.Callback;
import dev.herald.core.FileKeyValueStore;
import dev.herald.core.HeraldCore;
import dev.herald.core.InAppMessage;
import dev.herald.core.KeyValueStore;
import dev.herald.core.Logger;
import dev.herald.core.PushMessage;
import java.io.File;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TimeZone;
import java.util.concurrent.TimeUnit;

/**
 * Herald in an Android app (docs/sdk-protocol.md). Call {@link #init} in
 * {@code Application.onCreate}; everything else returns at once and works on one background
 * thread. Callbacks arrive on that thread: post to the main thread before touching views.
 */
public final class Herald {
    private static final String TAG = "Herald";
    private static final String CONFIG_KEY = "herald.config";
    private static volatile HeraldCore core;
    private static volatile HeraldConfig config;
    private static volatile Context appContext;

    private Herald() {}

    /** Configures Herald, registers the device (FCM token) and syncs pending changes and the app's channels. */
    public static synchronized void init(Context context, HeraldConfig heraldConfig) {
        Context app = context.getApplicationContext() != null ? context.getApplicationContext() : context;
        KeyValueStore store = new FileKeyValueStore(new File(app.getNoBackupFilesDir(), "herald.properties"));
        final HeraldConfig cfg = heraldConfig;
        Logger logger = new Logger() {
            @Override
            public void debug(String message) {
                if (cfg.debugLogging) Log.d(TAG, message);
            }

            @Override
            public void warn(String message, Throwable error) {
                Log.w(TAG, message, error);
            }
        };
        NotificationManager manager = (NotificationManager) app.getSystemService(Context.NOTIFICATION_SERVICE);
        HeraldCore c = HeraldCore.builder(cfg.baseUrl, cfg.appId, cfg.clientKey)
                .store(store)
                .transport(cfg.transport)
                .scheduler(cfg.scheduler)
                .logger(logger)
                .tokenSource(() -> Tasks.await(FirebaseMessaging.getInstance().getToken(), 20, TimeUnit.SECONDS))
                .channelApplier(new AndroidChannelApplier(manager, app.getPackageName()))
                .presenter(new AndroidNotificationPresenter(app, cfg))
                .build();
        try {
            // Kept so that a push or a tap that starts the process before the app's code can still be handled.
            store.put(CONFIG_KEY, cfg.baseUrl + "\n" + cfg.appId + "\n" + cfg.clientKey);
        } catch (RuntimeException e) {
            Log.w(TAG, "could not store the configuration", e);
        }
        appContext = app;
        config = cfg;
        core = c;
        c.start(new HeraldCore.Environment(Locale.getDefault().toLanguageTag(), TimeZone.getDefault().getID(), appVersion(app)));
        c.setNotificationPermission(hasNotificationPermission(app));
    }

    /** The core, initialised from the stored configuration when the process was started by a push or a tap. */
    static HeraldCore core(Context context) {
        HeraldCore c = core;
        if (c != null) return c;
        synchronized (Herald.class) {
            if (core != null) return core;
            Context app = context.getApplicationContext() != null ? context.getApplicationContext() : context;
            String saved = new FileKeyValueStore(new File(app.getNoBackupFilesDir(), "herald.properties")).get(CONFIG_KEY);
            String[] parts = saved == null ? new String[0] : saved.split("\n");
            if (parts.length != 3) return null;
            init(app, new HeraldConfig(parts[0], parts[1], parts[2]));
            return core;
        }
    }

    private static HeraldCore requireCore() {
        HeraldCore c = core;
        if (c == null) throw new IllegalStateException("call Herald.init() first");
        return c;
    }

    // ---------------------------------------------------------------- the device

    /** The user's id in your app; null at logout. */
    public static void setExternalId(String externalId) {
        requireCore().setExternalId(externalId);
    }

    public static void setTags(List<String> tags) {
        requireCore().setTags(tags);
    }

    public static void addTags(String... tags) {
        requireCore().addTags(Arrays.asList(tags));
    }

    public static void removeTags(String... tags) {
        requireCore().removeTags(Arrays.asList(tags));
    }

    /** An ISO 639-1 code or BCP 47 tag; null follows the device's language again. */
    public static void setLanguage(String language) {
        requireCore().setLanguage(language);
    }

    public static void optOut() {
        requireCore().optOut();
    }

    public static void optIn() {
        requireCore().optIn();
    }

    /** The device id Herald gave this install; null until registered. */
    public static String getDeviceId() {
        HeraldCore c = core;
        return c == null ? null : c.deviceId();
    }

    /** Deletes the device on the server (app reset, account deletion). */
    public static void deleteDevice(Callback<Boolean> done) {
        requireCore().deleteDevice(done);
    }

    /** Connectivity returned (e.g. from a ConnectivityManager callback or WorkManager job): pending changes go out. */
    public static void onNetworkAvailable() {
        requireCore().networkAvailable();
    }

    /** Syncs the app's notification channels again (init does it at start). */
    public static void syncChannels() {
        requireCore().syncChannels();
    }

    // ---------------------------------------------------------------- permission (Android 13+)

    /** Whether notifications may be shown: POST_NOTIFICATIONS on Android 13+, and not blocked in settings. */
    public static boolean hasNotificationPermission(Context context) {
        if (Build.VERSION.SDK_INT >= 33
                && context.checkSelfPermission(Manifest.permission.POST_NOTIFICATIONS) != PackageManager.PERMISSION_GRANTED) {
            return false;
        }
        NotificationManager manager = (NotificationManager) context.getSystemService(Context.NOTIFICATION_SERVICE);
        return manager == null || Build.VERSION.SDK_INT < 24 || manager.areNotificationsEnabled();
    }

    /**
     * Asks for POST_NOTIFICATIONS on Android 13+ (nothing to ask before). Forward your
     * activity's onRequestPermissionsResult to {@link #refreshNotificationPermission}.
     * Answers whether it asked.
     */
    public static boolean requestNotificationPermission(Activity activity, int requestCode) {
        if (Build.VERSION.SDK_INT < 33 || hasNotificationPermission(activity)) return false;
        activity.requestPermissions(new String[] {Manifest.permission.POST_NOTIFICATIONS}, requestCode);
        return true;
    }

    /**
     * Reads the permission again (call from onResume and onRequestPermissionsResult): a revoked
     * one opts the device out, a granted one back in unless the user opted out in the app (§4).
     */
    public static void refreshNotificationPermission(Context context) {
        requireCore().setNotificationPermission(hasNotificationPermission(context));
    }

    // ---------------------------------------------------------------- pushes and clicks

    /**
     * Call from your launcher activity's onCreate/onNewIntent: when the system showed a
     * notification message (app in the background), its tap opens your app with the push's
     * data as extras. Reports the click and opens action_url (http/https only). Answers
     * whether the intent was a Herald tap.
     */
    public static boolean handleLaunchIntent(Activity activity) {
        Intent intent = activity.getIntent();
        if (intent == null || intent.getStringExtra(PushMessage.CAMPAIGN_ID_KEY) == null) return false;
        handleClick(activity, intent, false);
        intent.removeExtra(PushMessage.CAMPAIGN_ID_KEY); // once, not again on rotation
        return true;
    }

    /** The tap of a notification Herald showed (HeraldClickActivity) or the system showed (launch intent). */
    static void handleClick(Context context, Intent intent, boolean openAppWhenNoUrl) {
        PushMessage message = new PushMessage(extras(intent), null, null, null, null);
        HeraldCore c = core(context);
        String url = c != null ? c.onNotificationOpened(message) : message.openableActionUrl();
        Intent open = null;
        if (url != null) {
            open = new Intent(Intent.ACTION_VIEW, Uri.parse(url));
            open.addCategory(Intent.CATEGORY_BROWSABLE);
        } else if (openAppWhenNoUrl) {
            open = context.getPackageManager().getLaunchIntentForPackage(context.getPackageName());
        }
        if (open == null) return;
        open.addFlags(Intent.FLAG_ACTIVITY_NEW_TASK);
        try {
            context.startActivity(open);
        } catch (RuntimeException e) {
            Log.w(TAG, "nothing can open " + url, e);
        }
    }

    static Map<String, String> extras(Intent intent) {
        Map<String, String> data = new LinkedHashMap<>();
        Bundle extras = intent == null ? null : intent.getExtras();
        if (extras != null) {
            for (String key : extras.keySet()) {
                Object v = extras.get(key);
                if (v instanceof String) data.put(key, (String) v);
            }
        }
        return data;
    }

    // ---------------------------------------------------------------- in-app messages

    /** The device's in-app messages due now (in its language, else en), in order; null when they could not be had. */
    public static void fetchInAppMessages(Callback<List<InAppMessage>> callback) {
        requireCore().fetchInAppMessages(callback);
    }

    /** Report "impression" before showing (DO_NOT_SHOW: skip it), "click" on tap, "dismiss" on close. */
    public static void reportInAppEvent(String messageId, String type, Callback<InAppMessage.EventOutcome> callback) {
        requireCore().reportInAppEvent(messageId, type, callback);
    }

    /** Reports the click of an in-app message and opens its action URL when http/https. */
    public static void openInAppMessage(Context context, InAppMessage message) {
        requireCore().reportInAppEvent(message.id, "click", null);
        String url = message.openableActionUrl();
        if (url == null) return;
        Intent open = new Intent(Intent.ACTION_VIEW, Uri.parse(url));
        open.addFlags(Intent.FLAG_ACTIVITY_NEW_TASK);
        try {
            context.startActivity(open);
        } catch (RuntimeException e) {
            Log.w(TAG, "nothing can open " + url, e);
        }
    }

    // ---------------------------------------------------------------- plumbing

    static String appVersion(Context context) {
        try {
            return context.getPackageManager().getPackageInfo(context.getPackageName(), 0).versionName;
        } catch (PackageManager.NameNotFoundException | RuntimeException e) {
            return null;
        }
    }

    /** For tests: forget the instance. */
    static synchronized void reset() {
        core = null;
        config = null;
        appContext = null;
    }
}
