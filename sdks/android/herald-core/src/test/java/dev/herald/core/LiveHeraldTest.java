package dev.herald.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.Test;

/**
 * The core against a real Herald and its provider simulator (HERALD_LIVE_*; skipped when
 * HERALD_LIVE_BASE_URL is unset). The server key is used only by the test's own setup and
 * checks; the core uses the client key.
 */
public class LiveHeraldTest {
    private static final long WAIT_MS = 60_000;

    private final String base = System.getenv("HERALD_LIVE_BASE_URL");
    private final String appId = System.getenv("HERALD_LIVE_APP_ID");
    private final String clientKey = System.getenv("HERALD_LIVE_CLIENT_KEY");
    private final String serverKey = System.getenv("HERALD_LIVE_SERVER_KEY");
    private final String sim = System.getenv("HERALD_LIVE_SIM_ADMIN_URL");
    private final String project = System.getenv("HERALD_LIVE_FCM_PROJECT");

    /** Every exchange of the core, with the answer's status. */
    private static final class Recording implements HttpTransport {
        final HttpTransport real = new UrlConnectionTransport();
        final List<Object[]> log = Collections.synchronizedList(new ArrayList<Object[]>());

        @Override
        public Response execute(Request request) throws java.io.IOException {
            Response res = real.execute(request);
            log.add(new Object[] {request, res});
            return res;
        }

        Object[] lastTo(String pathEnd) {
            synchronized (log) {
                for (int i = log.size() - 1; i >= 0; i--) {
                    if (((Request) log.get(i)[0]).url.endsWith(pathEnd)) return log.get(i);
                }
            }
            return null;
        }
    }

    private static final class Applier implements ChannelApplier {
        final List<String> created = Collections.synchronizedList(new ArrayList<String>());
        final List<String> updated = Collections.synchronizedList(new ArrayList<String>());
        final List<String> deleted = Collections.synchronizedList(new ArrayList<String>());
        final Map<String, String> names = Collections.synchronizedMap(new LinkedHashMap<String, String>());

        @Override
        public void create(ChannelSpec c) {
            created.add(c.id);
            names.put(c.id, c.name);
        }

        @Override
        public void update(ChannelSpec c) {
            updated.add(c.id);
            names.put(c.id, c.name);
        }

        @Override
        public void delete(String id) {
            deleted.add(id);
            names.remove(id);
        }
    }

    @Test
    public void deviceLifecycleAgainstARealHerald() throws Exception {
        assumeTrue("HERALD_LIVE_BASE_URL is not set", base != null && !base.isEmpty());
        String run = UUID.randomUUID().toString().substring(0, 8);
        String externalId = "android-live-" + run;

        // A device token from the FCM simulator.
        JSONObject devices = call("POST", sim + "/admin/fcm/devices", null,
                new JSONObject().put("project_id", project).put("count", 1));
        String token = devices.getJSONArray("tokens").getString(0);

        Recording http = new Recording();
        Applier applier = new Applier();
        HeraldCore core = HeraldCore.builder(base, appId, clientKey)
                .store(new MemoryKeyValueStore())
                .transport(http)
                .channelApplier(applier)
                .logger(Logger.STDERR)
                .build();

        // Register, then the fields.
        core.start(new HeraldCore.Environment("de-DE", "Europe/Berlin", "1.2.3"));
        core.setPushToken(token);
        core.setExternalId(externalId);
        core.setTags(Arrays.asList("beta", "live"));
        assertTrue(core.awaitIdle(WAIT_MS));
        String deviceId = core.deviceId();
        assertNotNull(deviceId);
        JSONObject device = server("GET", "/v1/devices/" + deviceId, null);
        assertEquals(externalId, device.getString("external_id"));
        assertEquals("[\"beta\",\"live\"]", device.getJSONArray("tags").toString());
        assertEquals("de", device.getString("language"));
        assertEquals("Europe/Berlin", device.getString("timezone"));
        assertEquals("1.2.3", device.getString("app_version"));
        assertEquals("android", device.getString("platform"));
        assertEquals(token, device.getString("push_token"));
        assertTrue(device.getBoolean("opted_in"));
        for (Object[] x : http.log) {
            HttpTransport.Request r = (HttpTransport.Request) x[0];
            if (r.url.contains("/v1/devices/" + deviceId)) assertEquals(token, r.header("X-Herald-Push-Token"));
            assertEquals("Bearer " + clientKey, r.header("Authorization"));
        }

        // Opted out: a send reaches no device.
        core.optOut();
        assertTrue(core.awaitIdle(WAIT_MS));
        assertFalse(server("GET", "/v1/devices/" + deviceId, null).getBoolean("opted_in"));
        String silentCampaign = send(externalId, "opted out " + run, new JSONObject().put("n", "1"));
        JSONObject c1 = completed(silentCampaign);
        assertEquals(0, c1.getInt("audience_size"));
        assertEquals(0, deliveries(token).length());

        // Back in: delivered, with the campaign's id in data.
        core.optIn();
        assertTrue(core.awaitIdle(WAIT_MS));
        assertTrue(server("GET", "/v1/devices/" + deviceId, null).getBoolean("opted_in"));
        String campaign = send(externalId, "opted in " + run, new JSONObject().put("action_url", "https://example.com/live?r=" + run));
        completed(campaign);
        JSONObject message = null;
        long end = System.currentTimeMillis() + WAIT_MS;
        while (message == null && System.currentTimeMillis() < end) {
            JSONArray list = deliveries(token);
            for (int i = 0; i < list.length(); i++) {
                JSONObject m = list.getJSONObject(i).getJSONObject("message");
                JSONObject data = m.optJSONObject("data");
                if (data != null && campaign.equals(data.optString("herald_campaign_id"))) message = m;
            }
            if (message == null) Thread.sleep(250);
        }
        assertNotNull("the simulator recorded no delivery of " + campaign, message);

        // received / clicked, from the data the simulator recorded.
        Map<String, String> data = new LinkedHashMap<>();
        JSONObject d = message.getJSONObject("data");
        for (Iterator<String> it = d.keys(); it.hasNext(); ) {
            String k = it.next();
            data.put(k, d.getString(k));
        }
        JSONObject n = message.optJSONObject("notification");
        PushMessage push = new PushMessage(data, n == null ? null : n.optString("title", null),
                n == null ? null : n.optString("body", null), null, null);
        assertEquals(campaign, push.campaignId());
        assertTrue(push.hasNotification());
        core.reportNotification(push.campaignId(), "received");
        assertEquals("https://example.com/live?r=" + run, core.onNotificationOpened(push));
        assertTrue(core.awaitIdle(WAIT_MS));
        JSONObject stats = null;
        end = System.currentTimeMillis() + WAIT_MS;
        while (System.currentTimeMillis() < end) {
            stats = server("GET", "/v1/campaigns/" + campaign, null).getJSONObject("stats");
            if (stats.getInt("received") >= 1 && stats.getInt("clicked") >= 1) break;
            Thread.sleep(250);
        }
        assertEquals(1, stats.getInt("received"));
        assertEquals(1, stats.getInt("clicked"));

        // Channels: 200, then 304 with the stored ETag, a PATCH, a DELETE.
        String channel = "live_" + run;
        server("POST", "/v1/apps/" + appId + "/android-channels", new JSONObject().put("id", channel).put("name", "Live " + run)
                .put("description", "first").put("importance", "high").put("vibration", new JSONArray().put(0).put(100)));
        core.syncChannels();
        assertTrue(core.awaitIdle(WAIT_MS));
        assertTrue(applier.created.contains(channel));
        String etag = core.channelEtag();
        assertNotNull(etag);
        String channelsPath = "/v1/apps/" + appId + "/android-channels";
        assertEquals(200, ((HttpTransport.Response) http.lastTo(channelsPath)[1]).status);
        int createdBefore = applier.created.size();
        core.syncChannels();
        assertTrue(core.awaitIdle(WAIT_MS));
        Object[] second = http.lastTo(channelsPath);
        assertEquals(etag, ((HttpTransport.Request) second[0]).header("If-None-Match"));
        assertEquals(304, ((HttpTransport.Response) second[1]).status);
        assertEquals(createdBefore, applier.created.size());
        server("PATCH", "/v1/apps/" + appId + "/android-channels/" + channel, new JSONObject().put("name", "Renamed " + run));
        core.syncChannels();
        assertTrue(core.awaitIdle(WAIT_MS));
        assertTrue(applier.updated.contains(channel));
        assertEquals("Renamed " + run, applier.names.get(channel));
        server("DELETE", "/v1/apps/" + appId + "/android-channels/" + channel, null);
        core.syncChannels();
        assertTrue(core.awaitIdle(WAIT_MS));
        assertTrue(applier.deleted.contains(channel));
        assertFalse(core.ownedChannelIds().contains(channel));

        // In-app: the device's language, else en; impression, click, dismiss move the counters.
        JSONObject audience = new JSONObject().put("kind", "external_ids").put("external_ids", new JSONArray().put(externalId));
        String german = server("POST", "/v1/apps/" + appId + "/in-app-messages", new JSONObject()
                .put("name", "live de " + run).put("priority", 10).put("audience", audience)
                .put("action_url", "https://example.com/in-app")
                .put("contents", new JSONObject()
                        .put("en", new JSONObject().put("title", "Hello").put("body", "English"))
                        .put("de", new JSONObject().put("title", "Hallo").put("body", "Deutsch")))).getString("id");
        String english = server("POST", "/v1/apps/" + appId + "/in-app-messages", new JSONObject()
                .put("name", "live en " + run).put("priority", 5).put("audience", audience)
                .put("contents", new JSONObject().put("en", new JSONObject().put("title", "Only").put("body", "English only"))))
                .getString("id");
        List<InAppMessage> messages = fetch(core);
        assertNotNull(messages);
        InAppMessage de = find(messages, german);
        InAppMessage en = find(messages, english);
        assertNotNull(de);
        assertNotNull(en);
        assertEquals("de", de.language);
        assertEquals("Hallo", de.title);
        assertEquals("en", en.language);
        assertEquals("https://example.com/in-app", de.openableActionUrl());
        for (String type : new String[] {"impression", "click", "dismiss"}) {
            assertEquals(type, InAppMessage.EventOutcome.DONE, report(core, german, type));
        }
        JSONObject inAppStats = server("GET", "/v1/apps/" + appId + "/in-app-messages/" + german, null).getJSONObject("stats");
        assertEquals(1, inAppStats.getInt("impressions"));
        assertEquals(1, inAppStats.getInt("clicks"));
        assertEquals(1, inAppStats.getInt("dismissals"));
        assertTrue(find(fetch(core), german) == null); // dismissed: not listed again

        // Logout clears the external id; delete removes the device.
        core.setExternalId(null);
        assertTrue(core.awaitIdle(WAIT_MS));
        assertTrue(server("GET", "/v1/devices/" + deviceId, null).isNull("external_id"));
        final CountDownLatch deleted = new CountDownLatch(1);
        final AtomicReference<Boolean> ok = new AtomicReference<>();
        core.deleteDevice(r -> {
            ok.set(r);
            deleted.countDown();
        });
        assertTrue(deleted.await(WAIT_MS, TimeUnit.MILLISECONDS));
        assertTrue(ok.get());
        for (String id : new String[] {german, english}) {
            try {
                server("DELETE", "/v1/apps/" + appId + "/in-app-messages/" + id, null);
            } catch (AssertionError ignored) {
                // cleanup only
            }
        }
    }

    /** HttpURLConnection has no PATCH: one HTTP/1.1 exchange by hand (http only, the test's own setup). */
    private static JSONObject patch(String url, String key, JSONObject body) throws Exception {
        URL u = new URL(url);
        if (!"http".equals(u.getProtocol())) throw new AssertionError("PATCH by hand needs http: " + url);
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        try (java.net.Socket socket = new java.net.Socket(u.getHost(), u.getPort() < 0 ? 80 : u.getPort())) {
            socket.setSoTimeout(30_000);
            String head = "PATCH " + u.getFile() + " HTTP/1.1\r\nHost: " + u.getHost() + ":" + u.getPort()
                    + "\r\nAuthorization: Bearer " + key + "\r\nAccept: application/json\r\nContent-Type: application/json"
                    + "\r\nContent-Length: " + bytes.length + "\r\nConnection: close\r\n\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] b = new byte[8192];
            int n;
            while ((n = in.read(b)) != -1) buf.write(b, 0, n);
            String text = new String(buf.toByteArray(), StandardCharsets.UTF_8);
            int status = Integer.parseInt(text.split(" ", 3)[1]);
            if (status >= 300) throw new AssertionError("PATCH " + url + " → " + text);
            return new JSONObject();
        }
    }

    private static InAppMessage find(List<InAppMessage> list, String id) {
        for (InAppMessage m : list) if (m.id.equals(id)) return m;
        return null;
    }

    private static List<InAppMessage> fetch(HeraldCore core) throws InterruptedException {
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<List<InAppMessage>> out = new AtomicReference<>();
        core.fetchInAppMessages(r -> {
            out.set(r);
            done.countDown();
        });
        assertTrue(done.await(WAIT_MS, TimeUnit.MILLISECONDS));
        return out.get();
    }

    private static InAppMessage.EventOutcome report(HeraldCore core, String id, String type) throws InterruptedException {
        final CountDownLatch done = new CountDownLatch(1);
        final AtomicReference<InAppMessage.EventOutcome> out = new AtomicReference<>();
        core.reportInAppEvent(id, type, r -> {
            out.set(r);
            done.countDown();
        });
        assertTrue(done.await(WAIT_MS, TimeUnit.MILLISECONDS));
        return out.get();
    }

    private String send(String externalId, String name, JSONObject data) throws Exception {
        JSONObject body = new JSONObject()
                .put("app_id", appId)
                .put("name", name)
                .put("external_ids", new JSONArray().put(externalId))
                .put("contents", new JSONObject().put("en", new JSONObject().put("title", "Live").put("body", name)))
                .put("data", data);
        return server("POST", "/v1/push/send-to-users", body).getString("id");
    }

    private JSONObject completed(String campaign) throws Exception {
        long end = System.currentTimeMillis() + WAIT_MS;
        JSONObject c;
        do {
            c = server("GET", "/v1/campaigns/" + campaign, null);
            if ("completed".equals(c.getString("status"))) return c;
            Thread.sleep(200);
        } while (System.currentTimeMillis() < end);
        throw new AssertionError("campaign not completed: " + c);
    }

    private JSONArray deliveries(String token) throws Exception {
        return call("GET", sim + "/admin/deliveries?platform=fcm&target=" + java.net.URLEncoder.encode(token, "UTF-8"), null, null)
                .getJSONArray("deliveries");
    }

    private JSONObject server(String method, String path, JSONObject body) throws Exception {
        return call(method, base.replaceAll("/+$", "") + path, serverKey, body);
    }

    private static JSONObject call(String method, String url, String key, JSONObject body) throws Exception {
        if ("PATCH".equals(method)) return patch(url, key, body);
        HttpURLConnection conn = (HttpURLConnection) new URL(url).openConnection();
        conn.setConnectTimeout(10_000);
        conn.setReadTimeout(30_000);
        conn.setRequestMethod(method);
        conn.setRequestProperty("Accept", "application/json");
        if (key != null) conn.setRequestProperty("Authorization", "Bearer " + key);
        if (body != null) {
            conn.setDoOutput(true);
            conn.setRequestProperty("Content-Type", "application/json");
            try (OutputStream out = conn.getOutputStream()) {
                out.write(body.toString().getBytes(StandardCharsets.UTF_8));
            }
        }
        int status = conn.getResponseCode();
        InputStream in = status >= 400 ? conn.getErrorStream() : conn.getInputStream();
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        if (in != null) {
            byte[] b = new byte[8192];
            int n;
            while ((n = in.read(b)) != -1) buf.write(b, 0, n);
            in.close();
        }
        String text = new String(buf.toByteArray(), StandardCharsets.UTF_8);
        if (status >= 300) throw new AssertionError(method + " " + url + " → " + status + " " + text);
        return text.isEmpty() ? new JSONObject() : new JSONObject(text);
    }
}
