package dev.herald.core;

/** Shows a push as a notification (NotificationManager in the glue). */
public interface NotificationPresenter {
    /** Shows {@code message}; answers whether it was shown. */
    boolean show(PushMessage message);
}
