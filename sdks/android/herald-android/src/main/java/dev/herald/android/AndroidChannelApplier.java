package dev.herald.android;

import android.app.NotificationChannel;
import android.app.NotificationChannelGroup;
import android.app.NotificationManager;
import android.media.AudioAttributes;
import android.net.Uri;
import android.os.Build;
import dev.herald.core.ChannelApplier;
import dev.herald.core.ChannelSpec;

/**
 * The server's channels as NotificationChannels (API 26+; nothing to do before). Android keeps
 * importance, sound, vibration and lights as first created, so an update sets only the name
 * and the description. The core tracks which channels it created and deletes only those.
 */
final class AndroidChannelApplier implements ChannelApplier {
    private final NotificationManager manager;
    private final String packageName;

    AndroidChannelApplier(NotificationManager manager, String packageName) {
        this.manager = manager;
        this.packageName = packageName;
    }

    @Override
    public void create(ChannelSpec c) {
        if (Build.VERSION.SDK_INT < 26 || manager == null) return;
        NotificationChannel channel = new NotificationChannel(c.id, c.name, importance(c.importance));
        channel.setDescription(c.description);
        // null and "default": the system's default sound (left as the channel has it).
        if (c.sound != null && !"default".equals(c.sound)) {
            String name = c.sound.replaceFirst("\\.[A-Za-z0-9]+$", "");
            AudioAttributes attrs = new AudioAttributes.Builder()
                    .setUsage(AudioAttributes.USAGE_NOTIFICATION)
                    .setContentType(AudioAttributes.CONTENT_TYPE_SONIFICATION)
                    .build();
            channel.setSound(Uri.parse("android.resource://" + packageName + "/raw/" + name), attrs);
        }
        channel.enableVibration(c.vibration);
        if (c.vibrationPattern != null && c.vibrationPattern.length > 0) channel.setVibrationPattern(c.vibrationPattern);
        channel.enableLights(c.lights);
        if (c.lightColor != null) channel.setLightColor(0xff000000 | Integer.parseInt(c.lightColor.substring(1), 16));
        channel.setShowBadge(c.badge);
        if (c.group != null) {
            manager.createNotificationChannelGroup(new NotificationChannelGroup(c.group, c.group));
            channel.setGroup(c.group);
        }
        manager.createNotificationChannel(channel);
    }

    @Override
    public void update(ChannelSpec c) {
        if (Build.VERSION.SDK_INT < 26 || manager == null) return;
        NotificationChannel existing = manager.getNotificationChannel(c.id);
        if (existing == null) {
            create(c); // the user's "clear data" or another app version removed it
            return;
        }
        // createNotificationChannel on an existing id updates its name and description only.
        NotificationChannel channel = new NotificationChannel(c.id, c.name, existing.getImportance());
        channel.setDescription(c.description);
        manager.createNotificationChannel(channel);
    }

    @Override
    public void delete(String channelId) {
        if (Build.VERSION.SDK_INT < 26 || manager == null) return;
        manager.deleteNotificationChannel(channelId);
    }

    static int importance(String name) {
        switch (name == null ? "default" : name) {
            case "min": return NotificationManager.IMPORTANCE_MIN;
            case "low": return NotificationManager.IMPORTANCE_LOW;
            case "high": return NotificationManager.IMPORTANCE_HIGH;
            case "max": return NotificationManager.IMPORTANCE_MAX;
            default: return NotificationManager.IMPORTANCE_DEFAULT;
        }
    }
}
