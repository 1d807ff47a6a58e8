package dev.herald.android;

import android.content.Context;
import com.google.firebase.messaging.RemoteMessage;
import dev.herald.core.HeraldCore;
import dev.herald.core.PushMessage;

/**
 * For apps with their own FirebaseMessagingService: call these from its onNewToken and
 * onMessageReceived (or use {@link HeraldMessagingService} as is).
 */
public final class HeraldMessaging {
    private HeraldMessaging() {}

    /** Registers the new token (§6: the old registration is replaced). */
    public static void onNewToken(Context context, String token) {
        HeraldCore core = Herald.core(context);
        if (core != null) core.setPushToken(token);
    }

    /**
     * Shows a push from Herald (data.herald_campaign_id) with its channel, image and tap,
     * and reports it received. Answers false for pushes not sent by Herald (handle them
     * yourself). Silent sends (no text) are Herald's but show nothing.
     */
    public static boolean onMessageReceived(Context context, RemoteMessage message) {
        PushMessage push = toPushMessage(message);
        if (push.campaignId() == null) return false;
        HeraldCore core = Herald.core(context);
        if (core != null) core.onMessageReceived(push);
        return true;
    }

    static PushMessage toPushMessage(RemoteMessage message) {
        RemoteMessage.Notification n = message.getNotification();
        return new PushMessage(message.getData(),
                n == null ? null : n.getTitle(),
                n == null ? null : n.getBody(),
                n == null || n.getImageUrl() == null ? null : n.getImageUrl().toString(),
                n == null ? null : n.getChannelId());
    }
}
