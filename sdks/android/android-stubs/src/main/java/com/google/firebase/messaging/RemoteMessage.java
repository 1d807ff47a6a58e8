/*
 * JVM stand-in for the Firebase Cloud Messaging (firebase-messaging 23.x, play-services-tasks
 * 18.x) class of the same name: only the members Herald's glue uses, with the real
 * signatures, behaving as a simple recording fake. Never shipped.
 */
package com.google.firebase.messaging;

import android.net.Uri;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

public final class RemoteMessage {
    private final Map<String, String> data;
    private final Notification notification;

    /** The fake's constructor (Android builds these from the FCM intent). */
    public RemoteMessage(Map<String, String> data, Notification notification) {
        this.data = Collections.unmodifiableMap(new LinkedHashMap<>(data));
        this.notification = notification;
    }

    public Map<String, String> getData() {
        return data;
    }

    public Notification getNotification() {
        return notification;
    }

    public static class Notification {
        private final String title;
        private final String body;
        private final Uri imageUrl;
        private final String channelId;

        /** The fake's constructor. */
        public Notification(String title, String body, String imageUrl, String channelId) {
            this.title = title;
            this.body = body;
            this.imageUrl = imageUrl == null ? null : Uri.parse(imageUrl);
            this.channelId = channelId;
        }

        public String getTitle() {
            return title;
        }

        public String getBody() {
            return body;
        }

        public Uri getImageUrl() {
            return imageUrl;
        }

        public String getChannelId() {
            return channelId;
        }
    }
}
