package dev.herald.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A push from Herald as the app receives it (docs/sdk-protocol.md §7–8): FCM {@code data}
 * (RemoteMessage.getData(), or the launch intent's extras when the system showed the
 * notification) plus the notification part (title, body, image, channel id), if any.
 */
public final class PushMessage {
    public static final String CAMPAIGN_ID_KEY = "herald_campaign_id";
    public static final String ACTION_URL_KEY = "action_url";

    public final Map<String, String> data;
    public final String title;
    public final String body;
    public final String imageUrl;
    public final String channelId;

    public PushMessage(Map<String, String> data, String title, String body, String imageUrl, String channelId) {
        this.data = Collections.unmodifiableMap(new LinkedHashMap<>(data == null ? Collections.<String, String>emptyMap() : data));
        this.title = emptyToNull(title);
        this.body = emptyToNull(body);
        this.imageUrl = emptyToNull(imageUrl);
        this.channelId = emptyToNull(channelId);
    }

    /** The campaign's id (data.herald_campaign_id), or null for a push not sent by Herald. */
    public String campaignId() {
        return emptyToNull(data.get(CAMPAIGN_ID_KEY));
    }

    /** data.action_url as sent (may be any scheme), or null. */
    public String actionUrl() {
        return emptyToNull(data.get(ACTION_URL_KEY));
    }

    /** The URL a click opens: action_url when http or https, else null. */
    public String openableActionUrl() {
        return Urls.openable(actionUrl());
    }

    /** Whether there is something to show: a silent send (data only) has no text. */
    public boolean hasNotification() {
        return title != null || body != null;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
