package dev.herald.core;

/** The OS's current push token (FirebaseMessaging.getToken() in the glue). Called on the core's thread; may block briefly. */
public interface PushTokenSource {
    /** The token, or null when there is none yet. Throws when it cannot be had now. */
    String currentToken() throws Exception;
}
