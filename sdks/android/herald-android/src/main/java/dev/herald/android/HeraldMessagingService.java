package dev.herald.android;

import com.google.firebase.messaging.FirebaseMessagingService;
import com.google.firebase.messaging.RemoteMessage;

/** The FCM service the library's manifest declares: registers new tokens and shows Herald's pushes. */
public class HeraldMessagingService extends FirebaseMessagingService {
    @Override
    public void onNewToken(String token) {
        HeraldMessaging.onNewToken(this, token);
    }

    @Override
    public void onMessageReceived(RemoteMessage message) {
        HeraldMessaging.onMessageReceived(this, message);
    }
}
