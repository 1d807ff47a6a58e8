/*
 * JVM stand-in for the Firebase Cloud Messaging (firebase-messaging 23.x, play-services-tasks
 * 18.x) class of the same name: only the members Herald's glue uses, with the real
 * signatures, behaving as a simple recording fake. Never shipped.
 */
package com.google.firebase.messaging;

import android.app.Service;

public class FirebaseMessagingService extends Service {
    public void onMessageReceived(RemoteMessage message) {}

    public void onNewToken(String token) {}
}
