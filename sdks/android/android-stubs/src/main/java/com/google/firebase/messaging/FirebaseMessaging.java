/*
 * JVM stand-in for the Firebase Cloud Messaging (firebase-messaging 23.x, play-services-tasks
 * 18.x) class of the same name: only the members Herald's glue uses, with the real
 * signatures, behaving as a simple recording fake. Never shipped.
 */
package com.google.firebase.messaging;

import com.google.android.gms.tasks.Task;
import com.google.android.gms.tasks.Tasks;

public class FirebaseMessaging {
    private static final FirebaseMessaging INSTANCE = new FirebaseMessaging();
    /** The fake's token. */
    public static volatile String fakeToken = "fake-fcm-token";

    public static synchronized FirebaseMessaging getInstance() {
        return INSTANCE;
    }

    public Task<String> getToken() {
        return Tasks.forResult(fakeToken);
    }
}
