package dev.herald.android;

import android.graphics.Bitmap;
import dev.herald.core.HttpTransport;
import dev.herald.core.Scheduler;

/** What {@link Herald#init} needs: the gateway's origin, the app's id and a client key (hk_pub_…). */
public final class HeraldConfig {
    final String baseUrl;
    final String appId;
    final String clientKey;
    int smallIcon;
    String defaultChannelId = "herald_default";
    String defaultChannelName = "Notifications";
    boolean debugLogging;
    HttpTransport transport;
    Scheduler scheduler;
    ImageLoader imageLoader;

    public HeraldConfig(String baseUrl, String appId, String clientKey) {
        this.baseUrl = baseUrl;
        this.appId = appId;
        this.clientKey = clientKey;
    }

    /** The notification's small icon (a monochrome drawable); default: the app's icon. */
    public HeraldConfig smallIcon(int drawableRes) {
        this.smallIcon = drawableRes;
        return this;
    }

    /** The channel for pushes that name none (or one not on the device); created on first use. */
    public HeraldConfig defaultChannel(String id, String name) {
        this.defaultChannelId = id;
        this.defaultChannelName = name;
        return this;
    }

    public HeraldConfig debugLogging(boolean on) {
        this.debugLogging = on;
        return this;
    }

    /** Replaces HttpURLConnection (e.g. OkHttp, or a fake in tests). */
    public HeraldConfig transport(HttpTransport transport) {
        this.transport = transport;
        return this;
    }

    /** Replaces the single background thread (tests). */
    public HeraldConfig scheduler(Scheduler scheduler) {
        this.scheduler = scheduler;
        return this;
    }

    /** Replaces the image download of big-picture notifications (tests, or an app's image cache). */
    public HeraldConfig imageLoader(ImageLoader loader) {
        this.imageLoader = loader;
        return this;
    }

    /** Loads a notification's image; null when it cannot. Called off the main thread. */
    public interface ImageLoader {
        Bitmap load(String url);
    }
}
