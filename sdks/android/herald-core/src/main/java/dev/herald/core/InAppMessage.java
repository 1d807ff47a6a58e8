package dev.herald.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/** An in-app message as GET /v1/devices/{id}/in-app-messages answers it, in the device's language (else en). */
public final class InAppMessage {
    public final String id;
    public final String language;
    public final String title;
    public final String body;
    public final String imageUrl;
    public final String actionUrl;
    public final int priority;
    /** ISO 8601, or null for no end. */
    public final String endsAt;

    InAppMessage(String id, String language, String title, String body, String imageUrl, String actionUrl, int priority, String endsAt) {
        this.id = id;
        this.language = language;
        this.title = title;
        this.body = body;
        this.imageUrl = imageUrl;
        this.actionUrl = actionUrl;
        this.priority = priority;
        this.endsAt = endsAt;
    }

    /** The action URL when a click may open it (http or https only), else null. */
    public String openableActionUrl() {
        return Urls.openable(actionUrl);
    }

    /**
     * The messages to offer at {@code nowMs}, in the order given; null when the answer is
     * unusable (not JSON, not the envelope). Entries that are not messages, and messages past
     * their {@code ends_at}, are skipped.
     */
    public static List<InAppMessage> parseList(String text, long nowMs) {
        JSONObject o = Json.object(text);
        if (o == null) return null;
        JSONArray data = Json.array(o, "data");
        if (data == null) return null;
        List<InAppMessage> out = new ArrayList<>();
        for (int i = 0; i < data.length(); i++) {
            Object v = data.opt(i);
            if (!(v instanceof JSONObject)) continue;
            JSONObject m = (JSONObject) v;
            String id = Json.string(m, "id");
            String title = Json.string(m, "title");
            String body = Json.string(m, "body");
            if (id == null || title == null || body == null) continue;
            String endsAt = Json.string(m, "ends_at");
            if (endsAt != null) {
                Long end = Urls.isoMillis(endsAt);
                if (end != null && end <= nowMs) continue;
            }
            Object p = m.opt("priority");
            out.add(new InAppMessage(id, Json.string(m, "language"), title, body, Json.string(m, "image_url"),
                    Json.string(m, "action_url"), p instanceof Number ? ((Number) p).intValue() : 0, endsAt));
        }
        return Collections.unmodifiableList(out);
    }

    /** What an in-app event's answer means for the app. */
    public enum EventOutcome {
        /** counted */
        DONE,
        /** an impression beyond the message's maximum: do not show it */
        DO_NOT_SHOW,
        /** the message no longer applies (or the event was refused): forget it */
        DROP,
        /** could not be sent now (retries exhausted, no registration, configuration error) */
        FAILED
    }
}
