package dev.herald.core;

import org.json.JSONArray;
import org.json.JSONObject;

/** One Android notification channel as the server lists it (GET /v1/apps/{app_id}/android-channels). */
public final class ChannelSpec {
    public final String id;
    public final String name;
    public final String description;
    /** "min", "low", "default", "high" or "max". */
    public final String importance;
    /** A res/raw sound name of the app, or "default" / null for the system default. */
    public final String sound;
    public final boolean vibration;
    /** The vibration pattern in ms, or null for the default one. */
    public final long[] vibrationPattern;
    public final boolean lights;
    /** "#rrggbb", or null for the default colour. */
    public final String lightColor;
    public final boolean badge;
    /** The channel group's id, or null. */
    public final String group;

    public ChannelSpec(String id, String name, String description, String importance, String sound, boolean vibration,
            long[] vibrationPattern, boolean lights, String lightColor, boolean badge, String group) {
        this.id = id;
        this.name = name;
        this.description = description;
        this.importance = importance;
        this.sound = sound;
        this.vibration = vibration;
        this.vibrationPattern = vibrationPattern;
        this.lights = lights;
        this.lightColor = lightColor;
        this.badge = badge;
        this.group = group;
    }

    /** The channel of a list entry; null when the entry is not one (no id or name). */
    static ChannelSpec fromJson(Object value) {
        if (!(value instanceof JSONObject)) return null;
        JSONObject o = (JSONObject) value;
        String id = Json.string(o, "id");
        String name = Json.string(o, "name");
        if (id == null || id.isEmpty() || name == null) return null;
        String description = Json.string(o, "description");
        String importance = Json.string(o, "importance");
        if (importance == null || !importance.matches("min|low|default|high|max")) importance = "default";
        Object vib = o.opt("vibration");
        boolean vibration;
        long[] pattern = null;
        if (vib instanceof JSONArray) {
            JSONArray a = (JSONArray) vib;
            pattern = new long[a.length()];
            for (int i = 0; i < a.length(); i++) {
                Object n = a.opt(i);
                if (!(n instanceof Number)) return null;
                pattern[i] = ((Number) n).longValue();
            }
            vibration = pattern.length > 0;
        } else {
            vibration = Boolean.TRUE.equals(vib);
        }
        Object l = o.opt("lights");
        boolean lights = Boolean.TRUE.equals(l) || l instanceof String;
        String color = l instanceof String && ((String) l).matches("#[0-9a-fA-F]{6}") ? (String) l : null;
        Object badge = o.opt("badge");
        return new ChannelSpec(id, name, description == null ? "" : description, importance, Json.string(o, "sound"),
                vibration, pattern, lights, color, !Boolean.FALSE.equals(badge), Json.string(o, "group"));
    }
}
