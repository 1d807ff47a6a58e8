package dev.herald.core;

/**
 * Applies the server's channels on the device: NotificationManager in the glue. Called on
 * the core's background thread.
 */
public interface ChannelApplier {
    /** A channel new to the library: created with every setting. */
    void create(ChannelSpec channel);

    /** A channel the library created before: only its name and description may change on Android. */
    void update(ChannelSpec channel);

    /** A channel the library created that is gone from the server's list. */
    void delete(String channelId);
}
