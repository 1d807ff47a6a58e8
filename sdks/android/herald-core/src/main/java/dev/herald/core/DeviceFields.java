package dev.herald.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/** The device fields the library owns (docs/sdk-protocol.md §3); immutable. */
public final class DeviceFields {
    public final String externalId;
    public final String language;
    public final String timezone;
    public final String appVersion;
    public final List<String> tags;
    public final boolean optedIn;

    public DeviceFields(String externalId, String language, String timezone, String appVersion, List<String> tags, boolean optedIn) {
        this.externalId = externalId;
        this.language = language;
        this.timezone = timezone;
        this.appVersion = appVersion;
        this.tags = Collections.unmodifiableList(new ArrayList<>(tags == null ? Collections.<String>emptyList() : tags));
        this.optedIn = optedIn;
    }

    public static DeviceFields empty() {
        return new DeviceFields(null, null, null, null, null, true);
    }

    public DeviceFields withExternalId(String v) {
        return new DeviceFields(v, language, timezone, appVersion, tags, optedIn);
    }

    public DeviceFields withLanguage(String v) {
        return new DeviceFields(externalId, v, timezone, appVersion, tags, optedIn);
    }

    public DeviceFields withTimezone(String v) {
        return new DeviceFields(externalId, language, v, appVersion, tags, optedIn);
    }

    public DeviceFields withAppVersion(String v) {
        return new DeviceFields(externalId, language, timezone, v, tags, optedIn);
    }

    public DeviceFields withTags(List<String> v) {
        return new DeviceFields(externalId, language, timezone, appVersion, v, optedIn);
    }

    public DeviceFields withOptedIn(boolean v) {
        return new DeviceFields(externalId, language, timezone, appVersion, tags, v);
    }

    JSONObject toJson() {
        try {
            JSONObject o = new JSONObject();
            o.put("external_id", Json.orNull(externalId));
            o.put("language", Json.orNull(language));
            o.put("timezone", Json.orNull(timezone));
            o.put("app_version", Json.orNull(appVersion));
            o.put("tags", new JSONArray(tags));
            o.put("opted_in", optedIn);
            return o;
        } catch (JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The fields of a stored record or of a device answer; null when {@code o} is not one. */
    static DeviceFields fromJson(JSONObject o) {
        if (o == null) return null;
        List<String> tags = new ArrayList<>();
        JSONArray arr = o.optJSONArray("tags");
        if (arr != null) {
            for (int i = 0; i < arr.length(); i++) {
                Object t = arr.opt(i);
                if (t instanceof String) tags.add((String) t);
            }
        }
        Object opted = o.opt("opted_in");
        return new DeviceFields(
                Json.string(o, "external_id"),
                Json.string(o, "language"),
                Json.string(o, "timezone"),
                Json.string(o, "app_version"),
                tags,
                !(opted instanceof Boolean) || (Boolean) opted);
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof DeviceFields)) return false;
        DeviceFields d = (DeviceFields) other;
        return Objects.equals(externalId, d.externalId) && Objects.equals(language, d.language)
                && Objects.equals(timezone, d.timezone) && Objects.equals(appVersion, d.appVersion)
                && tags.equals(d.tags) && optedIn == d.optedIn;
    }

    @Override
    public int hashCode() {
        return Objects.hash(externalId, language, timezone, appVersion, tags, optedIn);
    }

    @Override
    public String toString() {
        return toJson().toString();
    }
}
