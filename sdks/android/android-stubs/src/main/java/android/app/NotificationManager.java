/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class NotificationManager {
    public static final int IMPORTANCE_MIN = 1;
    public static final int IMPORTANCE_LOW = 2;
    public static final int IMPORTANCE_DEFAULT = 3;
    public static final int IMPORTANCE_HIGH = 4;
    public static final int IMPORTANCE_MAX = 5;

    /** The fake's record. */
    public final Map<String, NotificationChannel> channels = new LinkedHashMap<>();
    public final Map<String, NotificationChannelGroup> groups = new LinkedHashMap<>();
    public final List<Notification> posted = new ArrayList<>();
    public final List<String> postedTags = new ArrayList<>();
    public boolean enabled = true;

    /**
     * Like Android: creating an existing channel changes only its name and description
     * (and the group if it had none); the other settings stay as first created.
     */
    public void createNotificationChannel(NotificationChannel channel) {
        NotificationChannel existing = channels.get(channel.getId());
        if (existing == null) {
            channels.put(channel.getId(), channel);
            return;
        }
        existing.setName(channel.getName());
        existing.setDescription(channel.getDescription());
        if (existing.getGroup() == null) existing.setGroup(channel.getGroup());
    }

    public void createNotificationChannelGroup(NotificationChannelGroup group) {
        groups.put(group.getId(), group);
    }

    public NotificationChannel getNotificationChannel(String channelId) {
        return channels.get(channelId);
    }

    public void deleteNotificationChannel(String channelId) {
        channels.remove(channelId);
    }

    public void notify(String tag, int id, Notification notification) {
        postedTags.add(tag);
        posted.add(notification);
    }

    public boolean areNotificationsEnabled() {
        return enabled;
    }
}
