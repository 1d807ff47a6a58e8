package dev.herald.core;

import java.util.ArrayList;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/** A core over fakes: manual scheduler and clock, a fixed random draw, a queued transport. */
class Harness {
    static final String APP = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
    static final String BASE = "https://herald.example.com";
    static final String KEY = "hk_pub_test";

    final ManualScheduler scheduler = new ManualScheduler();
    final FakeTransport http = new FakeTransport();
    final RecordingApplier applier = new RecordingApplier();
    final KeyValueStore store;
    double draw = 0.5;
    final HeraldCore core;

    Harness() {
        this(new MemoryKeyValueStore());
    }

    Harness(KeyValueStore store) {
        this(store, false);
    }

    /** With a channel applier: start() also syncs the channels. */
    static Harness withChannels() {
        return new Harness(new MemoryKeyValueStore(), true);
    }

    Harness(KeyValueStore store, boolean channels) {
        this.store = store;
        core = HeraldCore.builder(BASE, APP, KEY)
                .store(store)
                .transport(http)
                .clock(scheduler)
                .random(() -> draw)
                .scheduler(scheduler)
                .channelApplier(channels ? applier : null)
                .build();
    }

    static String device(String id, String token, String externalId, String language, List<String> tags, boolean optedIn) {
        try {
            return deviceJson(id, token, externalId, language, tags, optedIn);
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String deviceJson(String id, String token, String externalId, String language, List<String> tags, boolean optedIn)
            throws org.json.JSONException {
        JSONObject o = new JSONObject();
        o.put("id", id);
        o.put("app_id", APP);
        o.put("push_token", token);
        o.put("platform", "android");
        o.put("external_id", externalId == null ? JSONObject.NULL : externalId);
        o.put("language", language == null ? JSONObject.NULL : language);
        o.put("timezone", JSONObject.NULL);
        o.put("app_version", JSONObject.NULL);
        o.put("tags", new JSONArray(tags == null ? new ArrayList<String>() : tags));
        o.put("opted_in", optedIn);
        o.put("invalid", false);
        o.put("created_at", "2026-11-20T10:00:00.000Z");
        o.put("updated_at", "2026-11-20T10:00:00.000Z");
        return o.toString();
    }

    /** The device the server would answer for a body: echo of the fields sent. */
    static String echo(String id, String token, JSONObject body, boolean optedIn) throws org.json.JSONException {
        JSONObject o = new JSONObject(device(id, token, null, null, null, optedIn));
        for (String k : new String[] {"external_id", "language", "timezone", "app_version", "tags"}) {
            if (body.has(k)) o.put(k, body.get(k));
        }
        return o.toString();
    }

    /** Registers {@code token} as device {@code id} with nothing else set. */
    Harness registered(String id, String token) {
        http.then(200, device(id, token, null, null, null, true));
        core.setPushToken(token);
        scheduler.runDue();
        return this;
    }

    static final class RecordingApplier implements ChannelApplier {
        final List<String> created = new ArrayList<>();
        final List<String> updated = new ArrayList<>();
        final List<String> deleted = new ArrayList<>();

        void clear() {
            created.clear();
            updated.clear();
            deleted.clear();
        }

        @Override
        public void create(ChannelSpec channel) {
            created.add(channel.id);
        }

        @Override
        public void update(ChannelSpec channel) {
            updated.add(channel.id);
        }

        @Override
        public void delete(String channelId) {
            deleted.add(channelId);
        }
    }
}
