package dev.herald.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.json.JSONObject;
import org.junit.Test;

/** The desired-state sync of docs/sdk-protocol.md §5 and the token changes of §6. */
public class SyncTest {
    private static final String D1 = "11111111-1111-4111-8111-111111111111";
    private static final String D2 = "22222222-2222-4222-8222-222222222222";

    private static List<String> since(Harness h, int from) {
        return h.http.lines().subList(from, h.http.requests.size());
    }

    @Test
    public void coalescesOfflineChangesIntoOnePut() throws Exception {
        Harness h = new Harness().registered(D1, "tok");
        // Offline: the first PUT fails, later changes pile up while the retry waits.
        h.http.thenNetworkError();
        h.core.setTags(Arrays.asList("a"));
        h.scheduler.runDue();
        h.core.addTags(Arrays.asList("b", "c"));
        h.core.removeTags(Arrays.asList("a"));
        h.core.setExternalId("user-1");
        h.scheduler.runDue();
        assertEquals(2, h.http.requests.size()); // register + the failed PUT: nothing else while the retry waits
        h.http.fallback = req -> FakeTransport.answer(200, echoOf(req, D1));
        h.scheduler.fireNext();
        List<String> after = since(h, 2);
        assertEquals(Collections.singletonList("PUT /v1/devices/" + D1), after);
        JSONObject body = new JSONObject(h.http.last().body);
        assertEquals("[\"b\",\"c\"]", body.getJSONArray("tags").toString());
        assertEquals("user-1", body.getString("external_id"));
        assertEquals("tok", h.http.last().header("X-Herald-Push-Token"));
        assertTrue(h.core.isIdle());
    }

    private static String echoOf(HttpTransport.Request req, String id) {
        try {
            return Harness.echo(id, "tok", req.body == null ? new JSONObject() : new JSONObject(req.body), true);
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String echoOptedOut(HttpTransport.Request req) {
        try {
            return Harness.echo(D1, "tok", new JSONObject(req.body), false);
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    public void backsOffWithFullJitterAndStopsAfterEightAttempts() {
        Harness h = new Harness();
        h.draw = 0.5;
        h.http.fallback = req -> FakeTransport.answer(503, "{\"error\":\"ServiceUnavailable\"}");
        h.core.setPushToken("tok");
        h.scheduler.runDue();
        while (h.scheduler.fireNext()) { }
        assertEquals(8, h.http.requests.size());
        assertEquals(Arrays.asList(500L, 1000L, 2000L, 4000L, 8000L, 16000L, 32000L), h.scheduler.delays);
        // A network change starts again.
        h.http.fallback = req -> FakeTransport.answer(200, Harness.device(D1, "tok", null, null, null, true));
        h.core.networkAvailable();
        h.scheduler.runDue();
        assertEquals(D1, h.core.deviceId());
    }

    @Test
    public void retryAfterIsAFloor() {
        Harness h = new Harness();
        h.draw = 0.0;
        h.http.then(429, "{}", "Retry-After", "7");
        h.http.then(200, Harness.device(D1, "tok", null, null, null, true));
        h.core.setPushToken("tok");
        h.scheduler.runDue();
        assertEquals(Collections.singletonList(7000L), h.scheduler.delays);
        h.scheduler.advance(6999);
        assertNull(h.core.deviceId());
        h.scheduler.advance(1);
        assertEquals(D1, h.core.deviceId());
    }

    @Test
    public void stateSurvivesRestartOverTheSameFile() throws Exception {
        File dir = Files.createTempDirectory("herald").toFile();
        File file = new File(dir, "herald.properties");
        Harness h = new Harness(new FileKeyValueStore(file)).registered(D1, "tok");
        h.http.thenNetworkError();
        h.core.setTags(Arrays.asList("x"));
        h.core.optOut();
        h.scheduler.runDue();
        // The process dies with the change pending; a new core over the same file sends it.
        Harness again = new Harness(new FileKeyValueStore(file));
        again.http.fallback = req -> req.url.endsWith("/opt-out")
                ? FakeTransport.answer(200, Harness.device(D1, "tok", null, null, null, false))
                : FakeTransport.answer(200, echoOptedOut(req));
        again.core.start(null);
        again.scheduler.runDue();
        assertEquals(Arrays.asList("POST /v1/devices/" + D1 + "/opt-out", "PUT /v1/devices/" + D1), again.http.lines().subList(0, 2));
        assertEquals(D1, again.core.deviceId());
        assertTrue(again.core.isIdle());
        // And a third start has nothing to send.
        Harness third = new Harness(new FileKeyValueStore(file));
        third.core.start(null);
        third.scheduler.runDue();
        assertEquals(0, third.http.requests.size());
    }

    @Test
    public void tokenChangeRegistersOptsOutAndDeletesTheOldDevice() throws Exception {
        Harness h = new Harness().registered(D1, "old");
        h.http.then(200, Harness.device(D1, "old", null, null, null, false));
        h.core.optOut();
        h.scheduler.runDue();
        int from = h.http.requests.size();
        h.http.then(200, Harness.device(D2, "new", null, null, null, true));
        h.http.then(200, Harness.device(D2, "new", null, null, null, false));
        h.http.then(404, "{\"error\":\"NotFound\"}");
        h.core.setPushToken("new");
        h.scheduler.runDue();
        assertEquals(Arrays.asList("POST /v1/devices/register", "POST /v1/devices/" + D2 + "/opt-out", "DELETE /v1/devices/" + D1),
                since(h, from));
        assertEquals("new", h.http.requests.get(from + 1).header("X-Herald-Push-Token"));
        assertEquals("old", h.http.requests.get(from + 2).header("X-Herald-Push-Token"));
        assertNull(h.http.requests.get(from).header("X-Herald-Push-Token"));
        assertEquals(D2, h.core.deviceId());
        assertTrue(h.core.isIdle()); // 404 on the old device counts as done
    }

    @Test
    public void notFoundRegistersAgainWithTheFullState() throws Exception {
        Harness h = new Harness().registered(D1, "tok");
        int from = h.http.requests.size();
        h.http.then(404, "{\"error\":\"NotFound\"}");
        h.http.then(200, Harness.device(D2, "tok", "u", null, null, true));
        h.core.setExternalId("u");
        h.scheduler.runDue();
        assertEquals(Arrays.asList("PUT /v1/devices/" + D1, "POST /v1/devices/register"), since(h, from));
        assertEquals("u", new JSONObject(h.http.last().body).getString("external_id"));
        assertEquals(D2, h.core.deviceId());
        assertTrue(h.core.isIdle());
    }

    @Test
    public void forbiddenRegistersTheTokenOnceThenStops() throws Exception {
        Harness h = new Harness().registered(D1, "tok");
        int from = h.http.requests.size();
        h.http.fallback = req -> req.url.endsWith("/register")
                ? FakeTransport.answer(200, Harness.device(D1, "tok", null, null, null, true))
                : FakeTransport.answer(403, "{\"error\":\"Forbidden\"}");
        h.core.setExternalId("u");
        h.scheduler.runDue();
        assertEquals(Arrays.asList("PUT /v1/devices/" + D1, "POST /v1/devices/register", "PUT /v1/devices/" + D1), since(h, from));
        // Stopped: later changes are stored but not sent until the next start.
        h.core.setExternalId("v");
        h.scheduler.runDue();
        assertEquals(from + 3, h.http.requests.size());
        h.http.fallback = req -> FakeTransport.answer(200, echoOf(req, D1));
        h.core.start(null);
        h.scheduler.runDue();
        assertEquals("v", new JSONObject(h.http.last().body).optString("external_id"));
    }

    @Test
    public void unauthorizedStopsUntilTheNextStart() {
        Harness h = new Harness();
        h.http.fallback = req -> FakeTransport.answer(401, "{\"error\":\"Unauthorized\"}");
        h.core.setPushToken("tok");
        h.core.setTags(Arrays.asList("a"));
        h.scheduler.runDue();
        assertEquals(1, h.http.requests.size());
        assertFalse(h.scheduler.hasDelayed());
        h.core.optOut();
        h.scheduler.runDue();
        assertEquals(1, h.http.requests.size());
        h.core.start(null);
        h.scheduler.runDue();
        assertEquals(2, h.http.requests.size());
    }

    @Test
    public void badInputDropsTheChange() throws Exception {
        Harness h = new Harness().registered(D1, "tok");
        int from = h.http.requests.size();
        h.http.then(422, "{\"error\":\"ValidationError\"}");
        h.core.setTags(Arrays.asList("ok"));
        h.scheduler.runDue();
        assertEquals(1, since(h, from).size());
        assertFalse(h.scheduler.hasDelayed());
        assertTrue(h.core.isIdle());
        // A bad language on register is left out next time.
        Harness r = new Harness();
        r.http.then(400, "{\"error\":\"ValidationError\"}");
        r.http.then(200, Harness.device(D1, "tok", null, null, null, true));
        r.core.start(new HeraldCore.Environment("de-DE", "Europe/Berlin", "1.0"));
        r.core.setPushToken("tok");
        r.scheduler.runDue();
        assertTrue(new JSONObject(r.http.requests.get(0).body).has("language"));
        assertFalse(new JSONObject(r.http.requests.get(1).body).has("language"));
        assertEquals(D1, r.core.deviceId());
    }

    @Test
    public void malformedTruncatedAndHugeAnswersLeaveStateToSyncLater() throws Exception {
        StringBuilder huge = new StringBuilder("{\"id\":\"");
        while (huge.length() < 5 * 1024 * 1024) huge.append("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        for (String bad : new String[] {"[]", "{\"id\":", "null", "", "<html>", "{\"id\":42,\"opted_in\":\"yes\"}", huge.toString()}) {
            Harness h = new Harness();
            h.http.then(200, bad);
            h.http.then(500, "oops");
            h.http.then(200, Harness.device(D1, "tok", null, null, null, true));
            h.core.setPushToken("tok");
            h.scheduler.runDue();
            assertNull(bad.length() > 40 ? "huge" : bad, h.core.deviceId());
            while (h.scheduler.fireNext()) { }
            assertEquals(bad.length() > 40 ? "huge" : bad, D1, h.core.deviceId());
        }
        // Garbage in the store is an empty record, not a crash.
        MemoryKeyValueStore store = new MemoryKeyValueStore();
        store.put(HeraldCore.STATE_KEY, "{\"app_id\":");
        Harness h = new Harness(store);
        h.http.then(200, Harness.device(D1, "tok", null, null, null, true));
        h.core.start(null);
        h.core.setPushToken("tok");
        h.scheduler.runDue();
        assertEquals(D1, h.core.deviceId());
    }

    @Test
    public void weeklyRefreshAndChangedLocaleRegisterAtStart() {
        Harness h = new Harness().registered(D1, "tok");
        int from = h.http.requests.size();
        h.core.start(null);
        h.scheduler.runDue();
        assertEquals(from, h.http.requests.size());
        h.draw = 0.0;
        h.scheduler.setNow(h.scheduler.nowMillis() + HeraldCore.WEEK_MS + 1);
        h.http.fallback = req -> FakeTransport.answer(200, echoOf(req, D1));
        h.core.start(null);
        h.scheduler.runDue();
        assertEquals("POST /v1/devices/register", h.http.lines().get(from));
    }

    @Test
    public void permissionRevokedOptsOutAndGrantedOptsIn() {
        Harness h = new Harness().registered(D1, "tok");
        int from = h.http.requests.size();
        h.http.then(200, Harness.device(D1, "tok", null, null, null, false));
        h.http.then(200, Harness.device(D1, "tok", null, null, null, true));
        h.core.setNotificationPermission(false);
        h.scheduler.runDue();
        h.core.setNotificationPermission(true);
        h.scheduler.runDue();
        assertEquals(Arrays.asList("POST /v1/devices/" + D1 + "/opt-out", "POST /v1/devices/" + D1 + "/opt-in"), since(h, from));
    }

    @Test
    public void rejectsServerKeys() {
        try {
            HeraldCore.builder(Harness.BASE, Harness.APP, "hk_live_x").store(new MemoryKeyValueStore()).build();
            throw new AssertionError("accepted a server key");
        } catch (IllegalArgumentException expected) {
            assertTrue(expected.getMessage().contains("client key"));
        }
    }
}
