package dev.herald.core;

import java.io.UnsupportedEncodingException;
import java.net.URLEncoder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * Herald's client protocol (docs/sdk-protocol.md) without Android: registration, the
 * desired-state sync of the device's fields (§5), token changes (§6), notification events,
 * channel sync and in-app messages (§7).
 *
 * <p>Every public method returns at once and never throws for network or server trouble: the
 * work runs in order on one background thread ({@link Scheduler}), one request at a time, so
 * a late retry can never overwrite a newer change. What the app sets is stored as desired
 * state at once and sent when possible; the record (§3) is written after every confirmed 200
 * and every change, so it survives restarts.
 */
public final class HeraldCore {
    public static final String PLATFORM = "android";
    static final String STATE_KEY = "herald.state";
    static final String CHANNELS_KEY = "herald.channels";
    static final long WEEK_MS = 7L * 24 * 3600 * 1000;
    static final long DAY_MS = 24L * 3600 * 1000;

    private final String baseUrl;
    private final String appId;
    private final String clientKey;
    private final KeyValueStore store;
    private final HttpTransport transport;
    private final Clock clock;
    private final RandomSource random;
    private final Scheduler scheduler;
    private final Logger log;
    private final PushTokenSource tokenSource;
    private final ChannelApplier channelApplier;
    private final NotificationPresenter presenter;

    // The record (§3); touched only on the scheduler's thread.
    private boolean loaded;
    private String deviceId;
    private String pushToken;
    /** A token the OS handed over that is not registered yet. */
    private String pendingToken;
    private DeviceFields confirmed;
    private DeviceFields desired = DeviceFields.empty();
    private boolean languageFromApp;
    /** The OS notification permission as last seen; null: unknown (counts as granted). */
    private Boolean permissionGranted;
    private long registeredAt;
    /** The registration a token change replaced, deleted with its own token (§6 step 3). */
    private String oldDeviceId;
    private String oldToken;
    private final List<JSONObject> events = new ArrayList<>();
    private String channelEtag;
    private Map<String, String[]> ownedChannels = new LinkedHashMap<>();

    // The session: reset by start().
    private boolean registerDue;
    private boolean stopped;
    private boolean exhausted;
    private boolean forbiddenRetried;
    private boolean notFoundRetried;
    private boolean registerDropped;
    private boolean optDropped;
    private boolean localeOmitted;
    private int failures;
    private Scheduler.Cancellable retry;
    private int channelFailures;
    private Scheduler.Cancellable channelRetry;
    private boolean channelsStopped;
    private int oneShotsPending;

    // Snapshots for other threads.
    private volatile String deviceIdView;
    private volatile ChannelPlan lastChannelPlan;
    private volatile String channelEtagView;
    private volatile List<String> ownedChannelsView = Collections.emptyList();

    private HeraldCore(Builder b) {
        this.baseUrl = b.baseUrl.replaceAll("/+$", "");
        this.appId = b.appId;
        this.clientKey = b.clientKey;
        this.store = b.store;
        this.transport = b.transport != null ? b.transport : new UrlConnectionTransport();
        this.clock = b.clock != null ? b.clock : Clock.SYSTEM;
        this.random = b.random != null ? b.random : RandomSource.SYSTEM;
        this.scheduler = b.scheduler != null ? b.scheduler : new ExecutorScheduler();
        this.log = b.logger != null ? b.logger : Logger.NONE;
        this.tokenSource = b.tokenSource;
        this.channelApplier = b.channelApplier;
        this.presenter = b.presenter;
    }

    public static Builder builder(String baseUrl, String appId, String clientKey) {
        return new Builder(baseUrl, appId, clientKey);
    }

    /** What the device reports at each start (the glue reads Locale, TimeZone, PackageManager). */
    public static final class Environment {
        public final String languageTag;
        public final String zoneId;
        public final String appVersion;

        public Environment(String languageTag, String zoneId, String appVersion) {
            this.languageTag = languageTag;
            this.zoneId = zoneId;
            this.appVersion = appVersion;
        }
    }

    // ---------------------------------------------------------------- public API

    /**
     * Starts a session: loads the record, takes the device's language, zone and app version,
     * asks the token source for the current token, registers when something changed or a
     * week has passed (with up to a day of jitter), resumes pending changes and syncs the
     * channels. Ends a stop of the previous session (configuration errors, exhausted retries).
     */
    public void start(final Environment env) {
        run(() -> {
            load();
            stopped = false;
            exhausted = false;
            failures = 0;
            forbiddenRetried = false;
            notFoundRetried = false;
            registerDropped = false;
            optDropped = false;
            localeOmitted = false;
            channelsStopped = false;
            channelFailures = 0;
            cancelRetries();
            if (env != null) {
                DeviceFields d = desired;
                if (!languageFromApp) d = d.withLanguage(Locales.languageOf(env.languageTag));
                d = d.withTimezone(Locales.timezoneOf(env.zoneId));
                d = d.withAppVersion(limit(env.appVersion, 64));
                desired = d;
            }
            if (tokenSource != null) {
                try {
                    String token = tokenSource.currentToken();
                    if (token != null && !token.isEmpty() && !token.equals(pushToken)) pendingToken = token;
                } catch (Exception | LinkageError e) {
                    log.warn("no push token now", e);
                }
            }
            if (deviceId != null && confirmed != null) {
                boolean changed = !eq(desired.language, confirmed.language) || !eq(desired.timezone, confirmed.timezone)
                        || !eq(desired.appVersion, confirmed.appVersion);
                boolean weekly = clock.nowMillis() - registeredAt > WEEK_MS + (long) (random.nextDouble() * DAY_MS);
                if (changed || weekly) registerDue = true;
            }
            persist();
            pump();
            syncChannelsNow();
        });
    }

    /** The OS handed over a token (FirebaseMessagingService.onNewToken): registered, and a changed one replaces the old (§6). */
    public void setPushToken(final String token) {
        if (token == null || token.isEmpty() || token.length() > 8192) return;
        run(() -> {
            load();
            if (token.equals(pushToken) && deviceId != null) {
                pendingToken = null;
            } else {
                pendingToken = token;
            }
            persist();
            pump();
        });
    }

    /** The user's id in the app, or null at logout. */
    public void setExternalId(final String externalId) {
        if (externalId != null && externalId.length() > 255) {
            log.warn("external id longer than 255 characters ignored", null);
            return;
        }
        change(d -> d.withExternalId(externalId == null || externalId.isEmpty() ? null : externalId));
    }

    /** Replaces the device's tags (duplicates and invalid tags, not 1–64 characters, are left out; at most 100). */
    public void setTags(final List<String> tags) {
        final List<String> clean = cleanTags(tags);
        change(d -> d.withTags(clean));
    }

    public void addTags(final List<String> tags) {
        final List<String> add = cleanTags(tags);
        change(d -> {
            List<String> next = new ArrayList<>(d.tags);
            for (String t : add) if (!next.contains(t)) next.add(t);
            return d.withTags(cleanTags(next));
        });
    }

    public void removeTags(final List<String> tags) {
        final List<String> remove = tags == null ? Collections.<String>emptyList() : new ArrayList<>(tags);
        change(d -> {
            List<String> next = new ArrayList<>(d.tags);
            next.removeAll(remove);
            return d.withTags(next);
        });
    }

    /** An ISO 639-1 code or BCP 47 tag ("pt-BR" is stored as "pt"); null follows the device's language again. */
    public void setLanguage(final String language) {
        if (language == null) {
            run(() -> {
                load();
                languageFromApp = false;
                persist();
            });
            return;
        }
        final String code = Locales.languageOf(language);
        if (code == null) {
            log.warn("\"" + language + "\" is not an ISO 639-1 language; ignored", null);
            return;
        }
        run(() -> {
            load();
            languageFromApp = true;
            desired = desired.withLanguage(code);
            persist();
            pump();
        });
    }

    /** The user's own choice: no pushes until {@link #optIn()}. */
    public void optOut() {
        change(d -> d.withOptedIn(false));
    }

    public void optIn() {
        change(d -> d.withOptedIn(true));
    }

    /** The OS notification permission as the glue sees it: a revoked one opts the device out (§4), a granted one back in (if the user chose so). */
    public void setNotificationPermission(final boolean granted) {
        run(() -> {
            load();
            if (permissionGranted != null && permissionGranted == granted) return;
            permissionGranted = granted;
            persist();
            pump();
        });
    }

    /** Connectivity returned: ends the stop after exhausted retries and retries now. */
    public void networkAvailable() {
        run(() -> {
            load();
            exhausted = false;
            failures = 0;
            channelFailures = 0;
            cancelRetries();
            pump();
        });
    }

    /** Reports a notification of {@code campaignId} "received" or "clicked" (§7); kept until sent. */
    public void reportNotification(final String campaignId, final String type) {
        if (campaignId == null || campaignId.isEmpty() || !("received".equals(type) || "clicked".equals(type))) return;
        run(() -> {
            load();
            JSONObject body = new JSONObject();
            try {
                body.put("campaign_id", campaignId);
                body.put("type", type);
            } catch (JSONException e) {
                return;
            }
            for (JSONObject e : events) if (e.toString().equals(body.toString())) return;
            if (events.size() >= 100) events.remove(0);
            events.add(body);
            persist();
            pump();
        });
    }

    /**
     * A push arrived (FirebaseMessagingService.onMessageReceived): shows it through the
     * presenter, on the calling thread, and reports it received. Answers whether it was shown.
     */
    public boolean onMessageReceived(PushMessage message) {
        if (message == null || !message.hasNotification()) return false;
        boolean shown = false;
        if (presenter != null) {
            try {
                shown = presenter.show(message);
            } catch (RuntimeException e) {
                log.warn("could not show the notification", e);
            }
        }
        if (shown && message.campaignId() != null) reportNotification(message.campaignId(), "received");
        return shown;
    }

    /** The user opened a notification: reports it clicked; answers the URL to open (http/https only), or null. */
    public String onNotificationOpened(PushMessage message) {
        if (message == null) return null;
        if (message.campaignId() != null) reportNotification(message.campaignId(), "clicked");
        return message.openableActionUrl();
    }

    /** Reads the app's channels (If-None-Match with the stored ETag) and applies the changes (§7). */
    public void syncChannels() {
        run(this::syncChannelsNow);
    }

    /** The device's in-app messages now due, in order; null when they could not be had (§7). */
    public void fetchInAppMessages(final Callback<List<InAppMessage>> callback) {
        run(() -> {
            load();
            oneShot(RetryPolicy.Call.DEVICE, "GET", "/in-app-messages", null, new Answer() {
                @Override
                public Boolean handle(HttpTransport.Response res, RetryPolicy.Outcome outcome) {
                    if (outcome == RetryPolicy.Outcome.DONE) {
                        List<InAppMessage> list = InAppMessage.parseList(res.body, clock.nowMillis());
                        if (list == null) {
                            log.warn("unusable in-app answer" + requestId(res), null);
                            return null;
                        }
                        deliver(callback, list);
                        return true;
                    }
                    if (outcome == RetryPolicy.Outcome.RETRY) return null;
                    deliver(callback, null);
                    return true;
                }

                @Override
                public void giveUp() {
                    deliver(callback, null);
                }
            });
        });
    }

    /** Reports "impression", "click" or "dismiss" of an in-app message; the outcome says whether to show it (409: do not). */
    public void reportInAppEvent(final String messageId, final String type, final Callback<InAppMessage.EventOutcome> callback) {
        if (messageId == null || !("impression".equals(type) || "click".equals(type) || "dismiss".equals(type))) {
            deliver(callback, InAppMessage.EventOutcome.DROP);
            return;
        }
        run(() -> {
            load();
            String body = "{\"type\":" + JSONObject.quote(type) + "}";
            oneShot(RetryPolicy.Call.DEVICE, "POST", "/in-app-messages/" + segment(messageId) + "/events", body, new Answer() {
                @Override
                public Boolean handle(HttpTransport.Response res, RetryPolicy.Outcome outcome) {
                    int status = res == null ? 0 : res.status;
                    if (outcome == RetryPolicy.Outcome.DONE) deliver(callback, InAppMessage.EventOutcome.DONE);
                    else if (outcome == RetryPolicy.Outcome.RETRY) return null;
                    else if (status == 409 && "impression".equals(type)) deliver(callback, InAppMessage.EventOutcome.DO_NOT_SHOW);
                    else if (status == 404 || outcome == RetryPolicy.Outcome.DROP) deliver(callback, InAppMessage.EventOutcome.DROP);
                    else deliver(callback, InAppMessage.EventOutcome.FAILED);
                    return true;
                }

                @Override
                public void giveUp() {
                    deliver(callback, InAppMessage.EventOutcome.FAILED);
                }
            });
        });
    }

    /**
     * Deletes the device on the server for good (app reset, account deletion) and forgets the
     * registration; the app's settings stay for a later registration. {@code done} gets
     * whether the server confirmed (204, or 404: already gone).
     */
    public void deleteDevice(final Callback<Boolean> done) {
        run(() -> {
            load();
            if (deviceId == null) {
                deliver(done, true);
                return;
            }
            oneShot(RetryPolicy.Call.DEVICE, "DELETE", "", null, new Answer() {
                @Override
                public Boolean handle(HttpTransport.Response res, RetryPolicy.Outcome outcome) {
                    if (outcome == RetryPolicy.Outcome.RETRY) return null;
                    boolean gone = outcome == RetryPolicy.Outcome.DONE || (res != null && res.status == 404);
                    if (gone) {
                        deviceId = null;
                        pushToken = null;
                        pendingToken = null;
                        confirmed = null;
                        registeredAt = 0;
                        events.clear();
                        persist();
                    }
                    deliver(done, gone);
                    return true;
                }

                @Override
                public void giveUp() {
                    deliver(done, false);
                }
            });
        });
    }

    /** The device id Herald gave this install, or null before the first registration. */
    public String deviceId() {
        return deviceIdView;
    }

    /** The plan the last channel list applied (null before one): for tests and logs. */
    public ChannelPlan lastChannelPlan() {
        return lastChannelPlan;
    }

    /**
     * Waits until nothing is left to send or the sync stopped (for tests and background
     * work, never on the main thread). Answers false on timeout.
     */
    public boolean awaitIdle(long timeoutMs) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        while (true) {
            final boolean[] idle = {false};
            final CountDownLatch latch = new CountDownLatch(1);
            run(() -> {
                try {
                    load();
                    idle[0] = isIdle();
                } finally {
                    latch.countDown();
                }
            });
            long left = end - System.currentTimeMillis();
            if (!latch.await(Math.max(1, left), TimeUnit.MILLISECONDS)) return false;
            if (idle[0]) return true;
            if (System.currentTimeMillis() >= end) return false;
            Thread.sleep(25);
        }
    }

    /** Whether nothing is in flight or waiting (call on the scheduler's thread, e.g. from tests with a manual one). */
    boolean isIdle() {
        boolean deviceIdle = stopped || exhausted || (retry == null && nextStep() == null);
        return deviceIdle && channelRetry == null && oneShotsPending == 0;
    }

    // ---------------------------------------------------------------- the record

    private void load() {
        if (loaded) return;
        loaded = true;
        JSONObject o = Json.object(safeGet(STATE_KEY));
        if (o != null && appId.equals(Json.string(o, "app_id")) && baseUrl.equals(Json.string(o, "base_url"))) {
            deviceId = Json.string(o, "device_id");
            pushToken = Json.string(o, "push_token");
            pendingToken = Json.string(o, "pending_token");
            confirmed = DeviceFields.fromJson(o.optJSONObject("confirmed"));
            DeviceFields d = DeviceFields.fromJson(o.optJSONObject("desired"));
            desired = d != null ? d : DeviceFields.empty();
            languageFromApp = o.optBoolean("language_from_app", false);
            Object p = o.opt("permission_granted");
            permissionGranted = p instanceof Boolean ? (Boolean) p : null;
            registeredAt = o.optLong("registered_at", 0);
            oldDeviceId = Json.string(o, "old_device_id");
            oldToken = Json.string(o, "old_push_token");
            JSONArray ev = o.optJSONArray("events");
            if (ev != null) {
                for (int i = 0; i < ev.length(); i++) {
                    JSONObject e = ev.optJSONObject(i);
                    if (e != null) events.add(e);
                }
            }
            if (deviceId == null || pushToken == null || confirmed == null) {
                deviceId = null;
                confirmed = null;
                if (pendingToken == null) pendingToken = pushToken;
                pushToken = null;
            }
        }
        JSONObject c = Json.object(safeGet(CHANNELS_KEY));
        if (c != null && appId.equals(Json.string(c, "app_id"))) {
            channelEtag = Json.string(c, "etag");
            JSONObject owned = c.optJSONObject("owned");
            ownedChannels = ChannelPlan.ownedFromJson(owned == null ? null : owned.toString());
        }
        updateViews();
    }

    private String safeGet(String key) {
        try {
            return store.get(key);
        } catch (RuntimeException e) {
            log.warn("could not read the stored record", e);
            return null;
        }
    }

    private void updateViews() {
        deviceIdView = deviceId;
        channelEtagView = channelEtag;
        ownedChannelsView = Collections.unmodifiableList(new ArrayList<>(new java.util.TreeSet<>(ownedChannels.keySet())));
    }

    private void persist() {
        updateViews();
        try {
            JSONObject o = new JSONObject();
            o.put("app_id", appId);
            o.put("base_url", baseUrl);
            o.put("platform", PLATFORM);
            o.put("device_id", Json.orNull(deviceId));
            o.put("push_token", Json.orNull(pushToken));
            o.put("pending_token", Json.orNull(pendingToken));
            o.put("confirmed", confirmed == null ? JSONObject.NULL : confirmed.toJson());
            o.put("desired", desired.toJson());
            o.put("language_from_app", languageFromApp);
            o.put("permission_granted", Json.orNull(permissionGranted));
            o.put("registered_at", registeredAt);
            o.put("old_device_id", Json.orNull(oldDeviceId));
            o.put("old_push_token", Json.orNull(oldToken));
            o.put("events", new JSONArray(events));
            store.put(STATE_KEY, o.toString());
            JSONObject c = new JSONObject();
            c.put("app_id", appId);
            c.put("etag", Json.orNull(channelEtag));
            c.put("owned", new JSONObject(ChannelPlan.ownedToJson(ownedChannels)));
            store.put(CHANNELS_KEY, c.toString());
        } catch (JSONException | RuntimeException e) {
            log.warn("could not store the record", e);
        }
    }

    // ---------------------------------------------------------------- the device sync (§5)

    private enum Kind { REGISTER, OPT, DELETE_OLD, UPDATE, EVENT }

    private static final class Step {
        final Kind kind;
        final String token;
        final JSONObject body;

        Step(Kind kind, String token, JSONObject body) {
            this.kind = kind;
            this.token = token;
            this.body = body;
        }
    }

    private interface Change {
        DeviceFields apply(DeviceFields d);
    }

    private void change(final Change change) {
        run(() -> {
            load();
            desired = change.apply(desired);
            persist();
            pump();
        });
    }

    private boolean wantOptedIn() {
        return desired.optedIn && !Boolean.FALSE.equals(permissionGranted);
    }

    private Step nextStep() {
        if (pendingToken != null && pendingToken.equals(pushToken) && deviceId != null) pendingToken = null;
        String token = pendingToken != null ? pendingToken : pushToken;
        if (token == null) return null;
        if (!registerDropped && (deviceId == null || pendingToken != null || registerDue)) {
            return new Step(Kind.REGISTER, token, registerBody(appId, token, desired, localeOmitted));
        }
        if (deviceId == null || confirmed == null) return null;
        if (!optDropped && wantOptedIn() != confirmed.optedIn) return new Step(Kind.OPT, pushToken, null);
        if (oldDeviceId != null) return new Step(Kind.DELETE_OLD, oldToken, null);
        JSONObject update = updateBody(desired, confirmed);
        if (update.length() > 0) return new Step(Kind.UPDATE, pushToken, update);
        if (!events.isEmpty()) return new Step(Kind.EVENT, pushToken, events.get(0));
        return null;
    }

    /** The body of POST /v1/devices/register for a desired state (§4): fields without a value are left out, tags always sent. */
    public static JSONObject registerBody(String appId, String token, DeviceFields desired, boolean omitLocale) {
        JSONObject body = new JSONObject();
        try {
            body.put("app_id", appId);
            body.put("push_token", token);
            body.put("platform", PLATFORM);
            if (desired.externalId != null) body.put("external_id", desired.externalId);
            if (!omitLocale && desired.language != null) body.put("language", desired.language);
            if (!omitLocale && desired.timezone != null) body.put("timezone", desired.timezone);
            if (desired.appVersion != null) body.put("app_version", desired.appVersion);
            body.put("tags", new JSONArray(desired.tags));
        } catch (JSONException e) {
            throw new IllegalStateException(e);
        }
        return body;
    }

    /** The body of PUT /v1/devices/{id}: the fields whose desired value differs from the confirmed one (null clears). */
    static JSONObject updateBody(DeviceFields desired, DeviceFields confirmed) {
        JSONObject body = new JSONObject();
        try {
            if (!eq(desired.externalId, confirmed.externalId)) body.put("external_id", Json.orNull(desired.externalId));
            if (!eq(desired.language, confirmed.language)) body.put("language", Json.orNull(desired.language));
            if (!eq(desired.timezone, confirmed.timezone)) body.put("timezone", Json.orNull(desired.timezone));
            if (!eq(desired.appVersion, confirmed.appVersion)) body.put("app_version", Json.orNull(desired.appVersion));
            if (!desired.tags.equals(confirmed.tags)) body.put("tags", new JSONArray(desired.tags));
        } catch (JSONException e) {
            throw new IllegalStateException(e);
        }
        return body;
    }

    /** Sends the next difference, and the next, until none is left, a retry waits, or the sync stopped. */
    private void pump() {
        if (!loaded || stopped || exhausted || retry != null) return;
        for (int guard = 0; guard < 64; guard++) {
            Step step = nextStep();
            if (step == null) return;
            if (!perform(step)) return;
        }
    }

    /** One request of the sync; answers whether to go on with the next step now. */
    private boolean perform(Step step) {
        String method;
        String path;
        String proof = step.token;
        String body = step.body == null ? null : step.body.toString();
        switch (step.kind) {
            case REGISTER:
                method = "POST";
                path = "/devices/register";
                proof = null;
                break;
            case OPT:
                method = "POST";
                path = devicePath(deviceId) + (wantOptedIn() ? "/opt-in" : "/opt-out");
                break;
            case DELETE_OLD:
                method = "DELETE";
                path = devicePath(oldDeviceId);
                break;
            case UPDATE:
                method = "PUT";
                path = devicePath(deviceId);
                break;
            default:
                method = "POST";
                path = devicePath(deviceId) + "/notification-events";
                break;
        }
        HttpTransport.Response res = send(method, path, body, proof, null);
        Integer status = res == null ? null : res.status;
        RetryPolicy.Call call = step.kind == Kind.REGISTER ? RetryPolicy.Call.REGISTER : RetryPolicy.Call.DEVICE;
        RetryPolicy.Outcome outcome = RetryPolicy.classify(call, status);
        if (step.kind == Kind.EVENT && status != null && status == 404) outcome = RetryPolicy.Outcome.DROP;
        if (step.kind == Kind.DELETE_OLD && status != null && (status == 404 || status == 403)) {
            // Already gone (404), or the old token no longer proves it: nothing more to do.
            outcome = status == 404 ? RetryPolicy.Outcome.DONE : RetryPolicy.Outcome.DROP;
        }
        JSONObject device = null;
        if (outcome == RetryPolicy.Outcome.DONE && (step.kind == Kind.REGISTER || step.kind == Kind.OPT || step.kind == Kind.UPDATE)) {
            device = Json.object(res.body);
            if (device == null || Json.string(device, "id") == null || DeviceFields.fromJson(device) == null) {
                log.warn(method + " " + path + ": unusable answer" + requestId(res), null);
                outcome = RetryPolicy.Outcome.RETRY;
            }
        }
        switch (outcome) {
            case DONE:
                failures = 0;
                if (step.kind != Kind.REGISTER) {
                    forbiddenRetried = false;
                    notFoundRetried = false;
                }
                applyDone(step, device);
                persist();
                return true;
            case RETRY:
                return scheduleRetry(res, method + " " + path);
            case REREGISTER:
                if (status != null && status == 403) {
                    if (forbiddenRetried) {
                        stop(method + " " + path + " answered 403 again after registering the token" + requestId(res));
                        return false;
                    }
                    forbiddenRetried = true;
                } else if (notFoundRetried) {
                    // Gone again right after registering: not a state a retry can fix.
                    log.warn(method + " " + path + " answered 404 again after registering; change dropped" + requestId(res), null);
                    applyDrop(step);
                    persist();
                    return true;
                } else {
                    notFoundRetried = true;
                }
                log.debug(method + " " + path + " answered " + status + ": registering again" + requestId(res));
                registerDue = true;
                return true;
            case DROP:
                log.warn(method + " " + path + " answered " + status + ": change dropped" + errorOf(res), null);
                applyDrop(step);
                persist();
                return true;
            default:
                stop(method + " " + path + " answered " + status + errorOf(res));
                return false;
        }
    }

    private void applyDone(Step step, JSONObject device) {
        switch (step.kind) {
            case REGISTER: {
                String id = Json.string(device, "id");
                if (deviceId != null && !deviceId.equals(id) && pushToken != null && !pushToken.equals(step.token)) {
                    oldDeviceId = deviceId;
                    oldToken = pushToken;
                }
                deviceId = id;
                pushToken = step.token;
                if (step.token.equals(pendingToken)) pendingToken = null;
                confirmed = DeviceFields.fromJson(device);
                registeredAt = clock.nowMillis();
                registerDue = false;
                log.debug("registered as " + id);
                break;
            }
            case OPT:
            case UPDATE:
                confirmed = DeviceFields.fromJson(device);
                break;
            case DELETE_OLD:
                oldDeviceId = null;
                oldToken = null;
                break;
            default:
                events.remove(0);
        }
    }

    private void applyDrop(Step step) {
        switch (step.kind) {
            case REGISTER:
                if (!localeOmitted && (step.body.has("language") || step.body.has("timezone"))) {
                    localeOmitted = true; // a bad language or zone is left out next time
                } else {
                    registerDropped = true;
                    registerDue = false;
                }
                break;
            case OPT:
                optDropped = true;
                break;
            case DELETE_OLD:
                oldDeviceId = null;
                oldToken = null;
                break;
            case UPDATE: {
                // Drop the change: the desired values go back to the confirmed ones.
                DeviceFields d = desired;
                if (step.body.has("external_id")) d = d.withExternalId(confirmed.externalId);
                if (step.body.has("language")) {
                    d = d.withLanguage(confirmed.language);
                    languageFromApp = false;
                }
                if (step.body.has("timezone")) d = d.withTimezone(confirmed.timezone);
                if (step.body.has("app_version")) d = d.withAppVersion(confirmed.appVersion);
                if (step.body.has("tags")) d = d.withTags(confirmed.tags);
                desired = d;
                break;
            }
            default:
                events.remove(0);
        }
    }

    private boolean scheduleRetry(HttpTransport.Response res, String what) {
        failures++;
        if (failures >= RetryPolicy.MAX_ATTEMPTS) {
            exhausted = true;
            log.warn(what + ": " + failures + " failed attempts; waiting for the next start or network change", null);
            return false;
        }
        long delay = RetryPolicy.delayMs(failures - 1, retryAfter(res), random);
        log.debug(what + " failed (" + (res == null ? "network" : String.valueOf(res.status)) + "); retry in " + delay + " ms" + requestId(res));
        retry = scheduler.schedule(() -> run(() -> {
            retry = null;
            pump();
        }), delay);
        return false;
    }

    private void stop(String why) {
        stopped = true;
        log.warn(why + "; syncing stops until the next start", null);
    }

    private void cancelRetries() {
        if (retry != null) retry.cancel();
        retry = null;
        if (channelRetry != null) channelRetry.cancel();
        channelRetry = null;
    }

    // ---------------------------------------------------------------- channels (§7)

    private void syncChannelsNow() {
        load();
        if (channelApplier == null || channelsStopped || channelRetry != null) return;
        Map<String, String> headers = new LinkedHashMap<>();
        if (channelEtag != null) headers.put("If-None-Match", channelEtag);
        String path = "/apps/" + segment(appId) + "/android-channels";
        HttpTransport.Response res = send("GET", path, null, null, headers);
        Integer status = res == null ? null : res.status;
        RetryPolicy.Outcome outcome = RetryPolicy.classify(RetryPolicy.Call.CHANNELS, status);
        List<ChannelSpec> list = null;
        if (outcome == RetryPolicy.Outcome.DONE && status != 304) {
            list = ChannelPlan.parseList(res.body);
            if (list == null) {
                log.warn("GET " + path + ": unusable answer" + requestId(res), null);
                outcome = RetryPolicy.Outcome.RETRY;
            }
        }
        switch (outcome) {
            case DONE:
                channelFailures = 0;
                if (list != null) applyChannels(list, res.header("etag"));
                return;
            case RETRY:
                channelFailures++;
                if (channelFailures >= RetryPolicy.MAX_ATTEMPTS) {
                    log.warn("GET " + path + ": giving up until the next start", null);
                    return;
                }
                long delay = RetryPolicy.delayMs(channelFailures - 1, retryAfter(res), random);
                channelRetry = scheduler.schedule(() -> run(() -> {
                    channelRetry = null;
                    syncChannelsNow();
                }), delay);
                return;
            default:
                channelsStopped = true;
                log.warn("GET " + path + " answered " + status + "; channel sync stops until the next start" + errorOf(res), null);
        }
    }

    private void applyChannels(List<ChannelSpec> list, String etag) {
        ChannelPlan plan = ChannelPlan.of(ownedChannels, list);
        Map<String, String[]> owned = new LinkedHashMap<>(plan.owned);
        boolean complete = true;
        for (ChannelSpec c : plan.create) {
            try {
                channelApplier.create(c);
            } catch (RuntimeException e) {
                log.warn("could not create channel " + c.id, e);
                owned.remove(c.id);
                complete = false;
            }
        }
        for (ChannelSpec c : plan.update) {
            try {
                channelApplier.update(c);
            } catch (RuntimeException e) {
                log.warn("could not update channel " + c.id, e);
                owned.put(c.id, ownedChannels.get(c.id));
                complete = false;
            }
        }
        for (String id : plan.delete) {
            try {
                channelApplier.delete(id);
            } catch (RuntimeException e) {
                log.warn("could not delete channel " + id, e);
                owned.put(id, ownedChannels.get(id));
                complete = false;
            }
        }
        ownedChannels = owned;
        // An ETag names the list: keep it only when all of it is applied, so a failure is retried.
        channelEtag = complete ? etag : null;
        lastChannelPlan = plan;
        persist();
    }

    /** The ETag stored with the channel list. */
    public String channelEtag() {
        return channelEtagView;
    }

    /** The ids of the channels the library created (sorted). */
    public List<String> ownedChannelIds() {
        return ownedChannelsView;
    }

    // ---------------------------------------------------------------- one-off device calls

    private interface Answer {
        /** true: finished; null: retry with back-off (the outcome was RETRY or the answer unusable). */
        Boolean handle(HttpTransport.Response res, RetryPolicy.Outcome outcome);

        void giveUp();
    }

    /** A device call outside the sync (in-app, delete), with the retries of §5; re-reads the device id and token per attempt. */
    private void oneShot(final RetryPolicy.Call call, final String method, final String rest, final String body, final Answer answer) {
        oneShotsPending++;
        attemptOneShot(call, method, rest, body, answer, 0);
    }

    private void attemptOneShot(final RetryPolicy.Call call, final String method, final String rest, final String body,
            final Answer answer, final int attempt) {
        try {
            if (deviceId == null || pushToken == null || stopped) {
                answer.giveUp();
                oneShotsPending--;
                return;
            }
            String path = devicePath(deviceId) + rest;
            HttpTransport.Response res = send(method, path, body, pushToken, null);
            RetryPolicy.Outcome outcome = RetryPolicy.classify(call, res == null ? null : res.status);
            if (outcome == RetryPolicy.Outcome.REREGISTER && res != null && res.status == 403) {
                registerDue = true; // the stored token is not the device's (§5)
            }
            if (outcome == RetryPolicy.Outcome.STOP) stop(method + " " + path + " answered " + res.status + errorOf(res));
            Boolean finished = answer.handle(res, outcome);
            if (finished == null) {
                if (attempt + 1 >= RetryPolicy.MAX_ATTEMPTS) {
                    answer.giveUp();
                    oneShotsPending--;
                    return;
                }
                long delay = RetryPolicy.delayMs(attempt, retryAfter(res), random);
                scheduler.schedule(() -> run(() -> attemptOneShot(call, method, rest, body, answer, attempt + 1)), delay);
                return;
            }
            oneShotsPending--;
            pump();
        } catch (RuntimeException e) {
            oneShotsPending--;
            throw e;
        }
    }

    // ---------------------------------------------------------------- HTTP

    private HttpTransport.Response send(String method, String path, String body, String pushTokenProof, Map<String, String> extra) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + clientKey);
        headers.put("Accept", "application/json");
        if (body != null) headers.put("Content-Type", "application/json");
        if (pushTokenProof != null) headers.put("X-Herald-Push-Token", pushTokenProof);
        headers.put("X-Request-Id", UUID.randomUUID().toString());
        if (extra != null) headers.putAll(extra);
        try {
            return transport.execute(new HttpTransport.Request(method, baseUrl + "/v1" + path, headers, body));
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            log.debug(method + " " + path + ": " + e);
            return null;
        }
    }

    private Long retryAfter(HttpTransport.Response res) {
        return res == null ? null : RetryPolicy.retryAfterMs(res.header("retry-after"), clock.nowMillis());
    }

    private static String requestId(HttpTransport.Response res) {
        String id = res == null ? null : res.header("x-request-id");
        return id == null ? "" : " (request " + id + ")";
    }

    private static String errorOf(HttpTransport.Response res) {
        if (res == null) return "";
        JSONObject o = Json.object(res.body);
        String error = o == null ? null : Json.string(o, "error");
        return (error == null ? "" : " " + error) + requestId(res);
    }

    static String devicePath(String id) {
        return "/devices/" + segment(id);
    }

    static String segment(String s) {
        try {
            return URLEncoder.encode(s, "UTF-8").replace("+", "%20");
        } catch (UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- plumbing

    /** Runs {@code task} on the core's thread; nothing it throws reaches the app. */
    private void run(final Runnable task) {
        try {
            scheduler.execute(() -> {
                try {
                    task.run();
                } catch (Throwable t) {
                    log.warn("internal error", t);
                }
            });
        } catch (RuntimeException e) {
            log.warn("could not schedule work", e);
        }
    }

    private <T> void deliver(Callback<T> callback, T value) {
        if (callback == null) return;
        try {
            callback.onResult(value);
        } catch (RuntimeException e) {
            log.warn("a callback threw", e);
        }
    }

    static List<String> cleanTags(List<String> tags) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        if (tags != null) {
            for (String t : tags) {
                if (t != null && !t.isEmpty() && t.length() <= 64) out.add(t);
                if (out.size() == 100) break;
            }
        }
        return new ArrayList<>(out);
    }

    private static String limit(String s, int max) {
        if (s == null || s.isEmpty()) return null;
        return s.length() > max ? s.substring(0, max) : s;
    }

    private static boolean eq(Object a, Object b) {
        return a == null ? b == null : a.equals(b);
    }

    /** Configuration and the pieces a platform plugs in. */
    public static final class Builder {
        final String baseUrl;
        final String appId;
        final String clientKey;
        KeyValueStore store;
        HttpTransport transport;
        Clock clock;
        RandomSource random;
        Scheduler scheduler;
        Logger logger;
        PushTokenSource tokenSource;
        ChannelApplier channelApplier;
        NotificationPresenter presenter;

        Builder(String baseUrl, String appId, String clientKey) {
            this.baseUrl = baseUrl;
            this.appId = appId;
            this.clientKey = clientKey;
        }

        public Builder store(KeyValueStore v) { store = v; return this; }
        public Builder transport(HttpTransport v) { transport = v; return this; }
        public Builder clock(Clock v) { clock = v; return this; }
        public Builder random(RandomSource v) { random = v; return this; }
        public Builder scheduler(Scheduler v) { scheduler = v; return this; }
        public Builder logger(Logger v) { logger = v; return this; }
        public Builder tokenSource(PushTokenSource v) { tokenSource = v; return this; }
        public Builder channelApplier(ChannelApplier v) { channelApplier = v; return this; }
        public Builder presenter(NotificationPresenter v) { presenter = v; return this; }

        /** Throws IllegalArgumentException for a configuration that cannot work (a server key, no base URL or app id). */
        public HeraldCore build() {
            if (baseUrl == null || !baseUrl.matches("https?://.+")) throw new IllegalArgumentException("baseUrl must be an http(s) URL");
            if (appId == null || !appId.matches("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")) {
                throw new IllegalArgumentException("appId must be the app's UUID");
            }
            if (clientKey == null || !clientKey.startsWith("hk_pub_")) {
                // A server key in an app hands every user the power to send pushes (§1).
                throw new IllegalArgumentException("Herald needs a client key (hk_pub_…), never a server key");
            }
            if (store == null) throw new IllegalArgumentException("a KeyValueStore is required");
            return new HeraldCore(this);
        }
    }
}
