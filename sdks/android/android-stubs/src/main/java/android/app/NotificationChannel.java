/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.app;

import android.media.AudioAttributes;
import android.net.Uri;

public final class NotificationChannel {
    private final String id;
    private CharSequence name;
    private String description;
    private final int importance;
    private Uri sound;
    private boolean soundSet;
    private boolean vibration;
    private long[] vibrationPattern;
    private boolean lights;
    private int lightColor;
    private boolean showBadge = true;
    private String group;

    public NotificationChannel(String id, CharSequence name, int importance) {
        this.id = id;
        this.name = name;
        this.importance = importance;
    }

    public String getId() { return id; }
    public CharSequence getName() { return name; }
    public void setName(CharSequence name) { this.name = name; }
    public String getDescription() { return description; }
    public void setDescription(String description) { this.description = description; }
    public int getImportance() { return importance; }
    public void setSound(Uri sound, AudioAttributes audioAttributes) { this.sound = sound; this.soundSet = true; }
    public Uri getSound() { return sound; }
    public void enableVibration(boolean vibration) { this.vibration = vibration; }
    public boolean shouldVibrate() { return vibration; }
    public void setVibrationPattern(long[] pattern) { this.vibrationPattern = pattern; if (pattern != null && pattern.length > 0) vibration = true; }
    public long[] getVibrationPattern() { return vibrationPattern; }
    public void enableLights(boolean lights) { this.lights = lights; }
    public boolean shouldShowLights() { return lights; }
    public void setLightColor(int argb) { this.lightColor = argb; }
    public int getLightColor() { return lightColor; }
    public void setShowBadge(boolean showBadge) { this.showBadge = showBadge; }
    public boolean canShowBadge() { return showBadge; }
    public void setGroup(String groupId) { this.group = groupId; }
    public String getGroup() { return group; }
}
