package dev.herald.android;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import android.Manifest;
import android.app.Activity;
import android.app.Notification;
import android.app.NotificationChannel;
import android.app.NotificationManager;
import android.app.PendingIntent;
import android.content.Context;
import android.content.Intent;
import android.content.pm.PackageInfo;
import android.content.pm.PackageManager;
import android.graphics.BitmapFactory;
import android.os.Build;
import com.google.firebase.messaging.FirebaseMessaging;
import com.google.firebase.messaging.RemoteMessage;
import dev.herald.core.HttpTransport;
import dev.herald.core.Scheduler;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.json.JSONObject;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The glue through the android-stubs fakes (API 34 signatures). */
public class HeraldAndroidTest {
    private static final String APP = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
    private static final String DEVICE = "5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
    private static final String CAMPAIGN = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
    private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', 1, 2, 3};

    private final Context context = new Context();
    private final NotificationManager manager = new NotificationManager();
    private final List<HttpTransport.Request> requests = Collections.synchronizedList(new ArrayList<HttpTransport.Request>());
    private volatile String channelList = "{\"data\":[],\"page\":1,\"per_page\":100,\"total\":0}";

    /** Runs the core's work at once on the calling thread; retries are recorded, not run. */
    private static final class Inline implements Scheduler {
        final List<Long> delays = new ArrayList<>();

        @Override
        public void execute(Runnable task) {
            task.run();
        }

        @Override
        public Cancellable schedule(Runnable task, long delayMs) {
            delays.add(delayMs);
            return () -> { };
        }
    }

    /** The server's copy of the device: a stateful fake, as Herald keeps it. */
    private JSONObject server;

    private final HttpTransport transport = request -> {
        requests.add(request);
        String path = request.url.substring("https://herald.example.com/v1".length());
        if (path.endsWith("/android-channels")) {
            return new HttpTransport.Response(200, Collections.singletonMap("ETag", "\"" + channelList.hashCode() + "\""), channelList);
        }
        if (path.endsWith("/notification-events")) return ok(204, "");
        try {
            if (path.equals("/devices/register")) {
                JSONObject body = new JSONObject(request.body);
                if (server == null) server = new JSONObject(device(body.getString("push_token"), true));
                merge(body);
                return ok(200, server.toString());
            }
            if (server == null) return ok(404, "{\"error\":\"NotFound\"}");
            if (request.method.equals("PUT")) {
                merge(new JSONObject(request.body));
                return ok(200, server.toString());
            }
            if (path.endsWith("/opt-out") || path.endsWith("/opt-in")) {
                server.put("opted_in", path.endsWith("/opt-in"));
                return ok(200, server.toString());
            }
        } catch (org.json.JSONException e) {
            return ok(400, "{}");
        }
        return ok(404, "{\"error\":\"NotFound\"}");
    };

    private void merge(JSONObject body) throws org.json.JSONException {
        for (java.util.Iterator<String> it = body.keys(); it.hasNext(); ) {
            String k = it.next();
            if (!k.equals("app_id") && !k.equals("platform")) server.put(k, body.get(k));
        }
    }

    private static String echo(String token, String body) {
        try {
            JSONObject d = new JSONObject(device(token, true));
            JSONObject b = new JSONObject(body);
            for (java.util.Iterator<String> it = b.keys(); it.hasNext(); ) {
                String k = it.next();
                d.put(k, b.get(k));
            }
            return d.toString();
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String tokenOf(String body) {
        try {
            return new JSONObject(body).getString("push_token");
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    private static HttpTransport.Response ok(int status, String body) {
        return new HttpTransport.Response(status, Collections.<String, String>emptyMap(), body);
    }

    private static String device(String token, boolean optedIn) {
        try {
            return new JSONObject().put("id", DEVICE).put("app_id", APP).put("push_token", token).put("platform", "android")
                    .put("external_id", JSONObject.NULL).put("language", JSONObject.NULL).put("timezone", JSONObject.NULL)
                    .put("app_version", JSONObject.NULL).put("tags", new org.json.JSONArray()).put("opted_in", optedIn)
                    .put("invalid", false).toString();
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    @Before
    public void setUp() throws Exception {
        Herald.reset();
        Build.VERSION.SDK_INT = 34;
        context.noBackupFilesDir = Files.createTempDirectory("herald-nobackup").toFile();
        context.services.put(Context.NOTIFICATION_SERVICE, manager);
        context.permissions.put(Manifest.permission.POST_NOTIFICATIONS, PackageManager.PERMISSION_GRANTED);
        PackageInfo info = new PackageInfo();
        info.versionName = "2.4.1";
        context.packageManager.packages.put(context.packageName, info);
        FirebaseMessaging.fakeToken = "tok1";
    }

    @After
    public void tearDown() {
        Herald.reset();
        Build.VERSION.SDK_INT = 34;
    }

    private void init() {
        Herald.init(context, new HeraldConfig("https://herald.example.com", APP, "hk_pub_test")
                .transport(transport)
                .scheduler(new Inline())
                .imageLoader(url -> BitmapFactory.decodeStream(new ByteArrayInputStream(PNG))));
    }

    private List<String> lines() {
        List<String> out = new ArrayList<>();
        synchronized (requests) {
            for (HttpTransport.Request r : requests) out.add(r.method + " " + r.url.substring("https://herald.example.com/v1".length()));
        }
        return out;
    }

    private List<String> eventsSent() throws Exception {
        List<String> out = new ArrayList<>();
        synchronized (requests) {
            for (HttpTransport.Request r : requests) {
                if (r.url.endsWith("/notification-events")) {
                    JSONObject b = new JSONObject(r.body);
                    out.add(b.getString("type") + " " + b.getString("campaign_id") + " " + r.header("X-Herald-Push-Token"));
                }
            }
        }
        return out;
    }

    @Test
    public void initRegistersTheFcmTokenWithTheDeviceState() throws Exception {
        init();
        assertEquals(DEVICE, Herald.getDeviceId());
        JSONObject body = new JSONObject(requests.get(0).body);
        assertEquals("tok1", body.getString("push_token"));
        assertEquals("android", body.getString("platform"));
        assertEquals("2.4.1", body.getString("app_version"));
        assertTrue(new java.io.File(context.noBackupFilesDir, "herald.properties").isFile());
    }

    @Test
    public void onNewTokenRegistersTheNewToken() throws Exception {
        init();
        requests.clear();
        HeraldMessaging.onNewToken(context, "tok2");
        assertEquals("POST /devices/register", lines().get(0));
        assertEquals("tok2", new JSONObject(requests.get(0).body).getString("push_token"));
    }

    @Test
    public void channelsAreCreatedUpdatedAndOnlyTheLibrarysDeleted() throws Exception {
        NotificationChannel own = new NotificationChannel("app_own", "Mine", NotificationManager.IMPORTANCE_LOW);
        manager.createNotificationChannel(own);
        channelList = "{\"data\":[" + channel("orders", "Orders", "high", "[0,250,250,250]", "\"#00ff00\"", "null")
                + "," + channel("promos", "Offers", "low", "false", "false", "\"updates\"") + "],\"page\":1,\"per_page\":100,\"total\":2}";
        init();
        NotificationChannel orders = manager.getNotificationChannel("orders");
        assertNotNull(orders);
        assertEquals(NotificationManager.IMPORTANCE_HIGH, orders.getImportance());
        assertEquals("Where", orders.getDescription());
        assertTrue(orders.shouldVibrate());
        assertEquals(4, orders.getVibrationPattern().length);
        assertTrue(orders.shouldShowLights());
        assertEquals(0xff00ff00, orders.getLightColor());
        assertEquals("updates", manager.getNotificationChannel("promos").getGroup());
        assertTrue(manager.groups.containsKey("updates"));

        // Renamed and importance changed on the server: only the name changes on the device.
        channelList = "{\"data\":[" + channel("orders", "Order updates", "max", "[0,250,250,250]", "\"#00ff00\"", "null")
                + "," + channel("promos", "Offers", "low", "false", "false", "\"updates\"") + "],\"page\":1,\"per_page\":100,\"total\":2}";
        Herald.syncChannels();
        assertEquals("Order updates", manager.getNotificationChannel("orders").getName());
        assertEquals(NotificationManager.IMPORTANCE_HIGH, manager.getNotificationChannel("orders").getImportance());

        // All removed on the server: the library's go, the app's own stays.
        channelList = "{\"data\":[],\"page\":1,\"per_page\":100,\"total\":0}";
        Herald.syncChannels();
        assertNull(manager.getNotificationChannel("orders"));
        assertNull(manager.getNotificationChannel("promos"));
        assertNotNull(manager.getNotificationChannel("app_own"));
        // Sent with the stored ETag.
        HttpTransport.Request last = null;
        for (HttpTransport.Request r : requests) if (r.url.endsWith("/android-channels")) last = r;
        assertNotNull(last.header("If-None-Match"));
    }

    private static String channel(String id, String name, String importance, String vibration, String lights, String group) {
        return "{\"id\":\"" + id + "\",\"app_id\":\"" + APP + "\",\"name\":\"" + name + "\",\"description\":\"Where\",\"importance\":\""
                + importance + "\",\"sound\":\"default\",\"vibration\":" + vibration + ",\"lights\":" + lights
                + ",\"badge\":true,\"group\":" + group + ",\"created_at\":\"2026-11-20T10:00:00.000Z\",\"updated_at\":\"2026-11-20T10:00:00.000Z\"}";
    }

    @Test
    public void showsAPushWithItsChannelImageAndTapAndReportsReceived() throws Exception {
        channelList = "{\"data\":[" + channel("promos", "Offers", "low", "false", "false", "null") + "],\"page\":1,\"per_page\":100,\"total\":1}";
        init();
        Map<String, String> data = new LinkedHashMap<>();
        data.put("action_url", "https://shop.example.com/sale?from=push");
        data.put("sale_id", "42");
        data.put("herald_campaign_id", CAMPAIGN);
        RemoteMessage message = new RemoteMessage(data,
                new RemoteMessage.Notification("Sale", "50 % off today", "https://cdn.example.com/sale.png", "promos"));
        assertTrue(HeraldMessaging.onMessageReceived(context, message));
        assertEquals(1, manager.posted.size());
        Notification n = manager.posted.get(0);
        assertEquals("promos", n.channelId);
        assertEquals("Sale", n.title);
        assertEquals("50 % off today", n.text);
        assertTrue(n.style instanceof Notification.BigPictureStyle);
        assertNotNull(((Notification.BigPictureStyle) n.style).picture);
        assertEquals("herald:" + CAMPAIGN, manager.postedTags.get(0));
        PendingIntent tap = n.contentIntent;
        assertEquals(HeraldClickActivity.class.getName(), tap.intent.componentClassName);
        assertEquals(CAMPAIGN, tap.intent.getStringExtra("herald_campaign_id"));
        assertEquals("https://shop.example.com/sale?from=push", tap.intent.getStringExtra("action_url"));
        assertTrue((tap.flags & PendingIntent.FLAG_IMMUTABLE) != 0);
        assertEquals(Collections.singletonList("received " + CAMPAIGN + " tok1"), eventsSent());

        // A channel unknown on the device: the default channel, created on demand.
        data.put("herald_campaign_id", "1c8e9b63-6e5f-4d2b-8b4f-2e3d4c5b6a71");
        HeraldMessaging.onMessageReceived(context, new RemoteMessage(data, new RemoteMessage.Notification("Hi", "There", null, "nope")));
        assertEquals("herald_default", manager.posted.get(1).channelId);
        assertNotNull(manager.getNotificationChannel("herald_default"));

        // Not Herald's: left to the app. Silent: Herald's, nothing shown.
        assertFalse(HeraldMessaging.onMessageReceived(context, new RemoteMessage(Collections.singletonMap("x", "y"), null)));
        assertTrue(HeraldMessaging.onMessageReceived(context, new RemoteMessage(Collections.singletonMap("herald_campaign_id", CAMPAIGN), null)));
        assertEquals(2, manager.posted.size());
    }

    @Test
    public void aTapReportsClickedAndOpensOnlyHttpAndHttps() throws Exception {
        init();
        HeraldClickActivity activity = new HeraldClickActivity();
        Intent intent = new Intent();
        intent.putExtra("herald_campaign_id", CAMPAIGN);
        intent.putExtra("action_url", "https://example.com/x");
        activity.setIntent(intent);
        activity.onCreate(null);
        assertTrue(activity.finished);
        // The activity fake records starts on the app context only when Herald uses it; here the activity itself starts it.
        assertEquals(1, activity.startedActivities.size());
        Intent view = activity.startedActivities.get(0);
        assertEquals(Intent.ACTION_VIEW, view.getAction());
        assertEquals("https://example.com/x", view.getData().toString());
        assertEquals(Collections.singletonList("clicked " + CAMPAIGN + " tok1"), eventsSent());

        for (String bad : new String[] {"javascript:alert(1)", "intent://x#Intent;end", "file:///etc/passwd", "content://x"}) {
            HeraldClickActivity a = new HeraldClickActivity();
            Intent i = new Intent();
            i.putExtra("herald_campaign_id", CAMPAIGN);
            i.putExtra("action_url", bad);
            a.setIntent(i);
            a.onCreate(null);
            assertEquals(bad, 1, a.startedActivities.size());
            assertEquals(bad, "launcher", a.startedActivities.get(0).componentClassName); // the app, not the URL
            assertNull(bad, a.startedActivities.get(0).getAction());
        }
    }

    @Test
    public void launchIntentOfASystemShownNotificationReportsClickedOnce() throws Exception {
        init();
        Activity launcher = new Activity();
        Intent intent = new Intent();
        intent.putExtra("herald_campaign_id", CAMPAIGN);
        intent.putExtra("action_url", "http://example.com/y");
        launcher.setIntent(intent);
        assertTrue(Herald.handleLaunchIntent(launcher));
        assertFalse(Herald.handleLaunchIntent(launcher)); // not again on rotation
        assertEquals(Collections.singletonList("clicked " + CAMPAIGN + " tok1"), eventsSent());
        assertEquals("http://example.com/y", launcher.startedActivities.get(0).getData().toString());
    }

    @Test
    public void android13PermissionIsAskedAndItsAbsenceOptsOut() throws Exception {
        Build.VERSION.SDK_INT = 33;
        context.permissions.put(Manifest.permission.POST_NOTIFICATIONS, PackageManager.PERMISSION_DENIED);
        init();
        assertTrue(lines().contains("POST /devices/" + DEVICE + "/opt-out"));
        Activity activity = new Activity();
        activity.services.put(Context.NOTIFICATION_SERVICE, manager);
        assertTrue(Herald.requestNotificationPermission(activity, 7));
        assertEquals(Manifest.permission.POST_NOTIFICATIONS, activity.requestedPermissions.get(0)[0]);
        context.permissions.put(Manifest.permission.POST_NOTIFICATIONS, PackageManager.PERMISSION_GRANTED);
        Herald.refreshNotificationPermission(context);
        assertTrue(lines().toString(), lines().contains("POST /devices/" + DEVICE + "/opt-in"));
        // Before Android 13 there is nothing to ask.
        Build.VERSION.SDK_INT = 32;
        assertFalse(Herald.requestNotificationPermission(activity, 7));
    }
}
