package dev.herald.android;

import android.app.Notification;
import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.app.PendingIntent;
import android.content.Context;
import android.content.Intent;
import android.graphics.Bitmap;
import android.graphics.BitmapFactory;
import android.os.Build;
import dev.herald.core.NotificationPresenter;
import dev.herald.core.PushMessage;
import dev.herald.core.Urls;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.Map;

/**
 * Shows a push: the campaign's channel (else the default one), its image as a big picture,
 * and a tap that goes through {@link HeraldClickActivity} (reports "clicked", opens
 * action_url when http/https, else the app). One notification per campaign (tag).
 */
final class AndroidNotificationPresenter implements NotificationPresenter {
    private static final int MAX_IMAGE_BYTES = 5 * 1024 * 1024;

    private final Context context;
    private final HeraldConfig config;

    AndroidNotificationPresenter(Context context, HeraldConfig config) {
        this.context = context;
        this.config = config;
    }

    @Override
    public boolean show(PushMessage message) {
        NotificationManager manager = (NotificationManager) context.getSystemService(Context.NOTIFICATION_SERVICE);
        if (manager == null) return false;
        Notification.Builder builder;
        if (Build.VERSION.SDK_INT >= 26) {
            builder = new Notification.Builder(context, channelFor(manager, message.channelId));
        } else {
            builder = legacyBuilder();
        }
        int icon = config.smallIcon != 0 ? config.smallIcon : context.getApplicationInfo().icon;
        builder.setSmallIcon(icon).setAutoCancel(true);
        if (message.title != null) builder.setContentTitle(message.title);
        if (message.body != null) builder.setContentText(message.body);
        Bitmap image = message.imageUrl == null ? null : loadImage(message.imageUrl);
        if (image != null) {
            builder.setStyle(new Notification.BigPictureStyle().bigPicture(image));
        } else if (message.body != null) {
            builder.setStyle(new Notification.BigTextStyle().bigText(message.body));
        }
        builder.setContentIntent(clickIntent(message));
        String campaign = message.campaignId();
        manager.notify(campaign == null ? "herald" : "herald:" + campaign, 0, builder.build());
        return true;
    }

    @SuppressWarnings("deprecation")
    private Notification.Builder legacyBuilder() {
        return new Notification.Builder(context);
    }

    private String channelFor(NotificationManager manager, String wanted) {
        if (wanted != null && manager.getNotificationChannel(wanted) != null) return wanted;
        if (manager.getNotificationChannel(config.defaultChannelId) == null) {
            NotificationChannel c = new NotificationChannel(config.defaultChannelId, config.defaultChannelName,
                    NotificationManager.IMPORTANCE_DEFAULT);
            manager.createNotificationChannel(c);
        }
        return config.defaultChannelId;
    }

    PendingIntent clickIntent(PushMessage message) {
        Intent intent = new Intent(context, HeraldClickActivity.class);
        for (Map.Entry<String, String> e : message.data.entrySet()) intent.putExtra(e.getKey(), e.getValue());
        intent.addFlags(Intent.FLAG_ACTIVITY_NEW_TASK | Intent.FLAG_ACTIVITY_NO_HISTORY);
        int flags = PendingIntent.FLAG_UPDATE_CURRENT;
        if (Build.VERSION.SDK_INT >= 23) flags |= PendingIntent.FLAG_IMMUTABLE;
        String campaign = message.campaignId();
        int requestCode = campaign == null ? 0 : campaign.hashCode();
        return PendingIntent.getActivity(context, requestCode, intent, flags);
    }

    private Bitmap loadImage(String url) {
        try {
            if (config.imageLoader != null) return config.imageLoader.load(url);
            if (Urls.openable(url) == null) return null;
            HttpURLConnection conn = (HttpURLConnection) new URL(url).openConnection();
            try {
                conn.setConnectTimeout(10_000);
                conn.setReadTimeout(30_000);
                if (conn.getResponseCode() != 200) return null;
                if (conn.getContentLength() > MAX_IMAGE_BYTES) return null;
                try (InputStream in = new LimitedStream(conn.getInputStream(), MAX_IMAGE_BYTES)) {
                    return BitmapFactory.decodeStream(in);
                }
            } finally {
                conn.disconnect();
            }
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            return null; // shown without the picture
        }
    }

    /** Ends the stream after {@code max} bytes, so a huge image cannot exhaust memory. */
    private static final class LimitedStream extends FilterInputStream {
        private long left;

        LimitedStream(InputStream in, long max) {
            super(in);
            left = max;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) throw new IOException("image too large");
            int b = super.read();
            if (b >= 0) left--;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) throw new IOException("image too large");
            int n = super.read(b, off, (int) Math.min(len, left));
            if (n > 0) left -= n;
            return n;
        }
    }
}
