package dev.herald.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.Test;

/** Every case of sdks/fixtures that applies to Android. */
public class FixturesTest {
    private static final String DEVICE = "5f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";

    @Test
    public void retryClassification() throws Exception {
        JSONObject f = Fixtures.load("retry.json");
        JSONObject policy = f.getJSONObject("policy");
        assertEquals(policy.getLong("base_ms"), RetryPolicy.BASE_MS);
        assertEquals(policy.getLong("cap_ms"), RetryPolicy.CAP_MS);
        assertEquals(policy.getInt("max_attempts"), RetryPolicy.MAX_ATTEMPTS);
        assertEquals(policy.getDouble("retry_after_jitter"), RetryPolicy.RETRY_AFTER_JITTER, 0);
        for (JSONObject c : Fixtures.objects(f.getJSONArray("classify"))) {
            String name = c.toString();
            RetryPolicy.Call call = RetryPolicy.Call.valueOf(c.getString("call").toUpperCase());
            Integer status = c.isNull("status") ? null : c.getInt("status");
            assertEquals(name, c.getString("expect").toUpperCase(), RetryPolicy.classify(call, status).name());
            long now = c.has("now") ? Urls.isoMillis(c.getString("now")) : 1_800_000_000_000L;
            Long floor = RetryPolicy.retryAfterMs(c.optString("retry_after", null), now);
            if (c.has("floor_ms")) assertEquals(name, Long.valueOf(c.getLong("floor_ms")), floor);
            else assertNull(name, floor);
        }
        for (JSONObject d : Fixtures.objects(f.getJSONArray("delays"))) {
            final double r = d.getDouble("random");
            Long ra = d.isNull("retry_after_ms") ? null : d.getLong("retry_after_ms");
            assertEquals(d.toString(), d.getLong("expect_ms"), RetryPolicy.delayMs(d.getInt("attempt"), ra, () -> r));
        }
    }

    @Test
    public void locale() throws Exception {
        JSONObject f = Fixtures.load("locale.json");
        for (JSONObject c : Fixtures.objects(f.getJSONArray("languages"))) {
            assertEquals(c.toString(), c.isNull("language") ? null : c.getString("language"), Locales.languageOf(c.getString("tag")));
        }
        for (JSONObject c : Fixtures.objects(f.getJSONArray("timezones"))) {
            assertEquals(c.toString(), c.isNull("timezone") ? null : c.getString("timezone"), Locales.timezoneOf(c.getString("zone")));
        }
    }

    @Test
    public void registerBodies() throws Exception {
        JSONObject f = Fixtures.load("register.json");
        int android = 0;
        for (JSONObject c : Fixtures.objects(f.getJSONArray("cases"))) {
            if (!"android".equals(c.getString("platform"))) continue;
            android++;
            JSONObject d = c.getJSONObject("desired");
            DeviceFields desired = new DeviceFields(
                    d.isNull("external_id") ? null : d.getString("external_id"),
                    Locales.languageOf(d.optString("language_tag", null)),
                    Locales.timezoneOf(d.optString("zone", null)),
                    d.isNull("app_version") ? null : d.getString("app_version"),
                    Fixtures.strings(d.getJSONArray("tags")),
                    true);
            JSONObject body = HeraldCore.registerBody(f.getString("app_id"), c.getString("push_token"), desired, false);
            assertTrue(c.getString("name") + ": " + body, Fixtures.same(c.getJSONObject("body"), body));

            // And through the core: the request it sends for that state.
            Harness h = new Harness() {};
            h.http.then(200, Harness.device(DEVICE, c.getString("push_token"), null, null, null, true));
            HeraldCore core = HeraldCore.builder(Harness.BASE, f.getString("app_id"), Harness.KEY)
                    .store(new MemoryKeyValueStore()).transport(h.http).clock(h.scheduler).random(() -> 0.5)
                    .scheduler(h.scheduler).build();
            core.start(new HeraldCore.Environment(d.optString("language_tag", null), d.optString("zone", null),
                    d.isNull("app_version") ? null : d.getString("app_version")));
            if (!d.isNull("external_id")) core.setExternalId(d.getString("external_id"));
            core.setTags(Fixtures.strings(d.getJSONArray("tags")));
            core.setPushToken(c.getString("push_token"));
            h.scheduler.runDue();
            HttpTransport.Request sent = h.http.requests.get(0);
            assertEquals("POST", sent.method);
            assertEquals(Harness.BASE + "/v1/devices/register", sent.url);
            assertTrue(c.getString("name") + ": " + sent.body, Fixtures.same(c.getJSONObject("body"), new JSONObject(sent.body)));
        }
        assertTrue(android > 0);
    }

    @Test
    public void channelSequence() throws Exception {
        JSONObject f = Fixtures.load("channels.json");
        Harness h = Harness.withChannels();
        // The app's own channel is never in the library's record, so never in a plan.
        List<String> appOwn = Fixtures.strings(f.getJSONArray("app_own_channels"));
        boolean first = true;
        for (JSONObject step : Fixtures.objects(f.getJSONArray("steps"))) {
            String name = step.getString("name");
            JSONObject a = step.getJSONObject("answer");
            String text = a.has("body") ? a.get("body").toString() : a.optString("body_text", "");
            List<String> headers = new ArrayList<>();
            if (a.has("etag")) Collections.addAll(headers, "ETag", a.getString("etag"));
            if (a.has("retry_after")) Collections.addAll(headers, "Retry-After", a.getString("retry_after"));
            h.http.then(a.getInt("status"), a.getInt("status") == 304 ? "" : text, headers.toArray(new String[0]));
            h.applier.clear();
            int before = h.http.requests.size();
            if (first) {
                h.core.start(null);
                first = false;
            } else if (h.scheduler.hasDelayed()) {
                h.scheduler.fireNext(); // the retry of the previous step asks again
            } else {
                h.core.syncChannels();
            }
            h.scheduler.runDue();
            assertEquals(name, before + 1, h.http.requests.size());
            HttpTransport.Request sent = h.http.last();
            assertEquals(name, Harness.BASE + "/v1/apps/" + Harness.APP + "/android-channels", sent.url);
            assertEquals(name, "Bearer " + Harness.KEY, sent.header("Authorization"));
            assertEquals(name, step.isNull("sent_if_none_match") ? null : step.getString("sent_if_none_match"), sent.header("If-None-Match"));
            if (step.isNull("plan")) {
                assertTrue(name, h.applier.created.isEmpty() && h.applier.updated.isEmpty() && h.applier.deleted.isEmpty());
            } else {
                JSONObject plan = step.getJSONObject("plan");
                assertEquals(name, Fixtures.strings(plan.getJSONArray("create")), sorted(h.applier.created));
                assertEquals(name, Fixtures.strings(plan.getJSONArray("update")), sorted(h.applier.updated));
                assertEquals(name, Fixtures.strings(plan.getJSONArray("delete")), sorted(h.applier.deleted));
            }
            for (String own : appOwn) assertFalse(name, h.applier.deleted.contains(own) || h.applier.updated.contains(own));
            assertEquals(name, step.getString("etag_after"), h.core.channelEtag());
            h.scheduler.runDue();
            assertEquals(name, Fixtures.strings(step.getJSONArray("library_channels_after")), h.core.ownedChannelIds());
            h.scheduler.runDue();
        }
    }

    private static List<String> sorted(List<String> in) {
        List<String> out = new ArrayList<>(in);
        Collections.sort(out);
        return out;
    }

    @Test
    public void inAppAnswers() throws Exception {
        JSONObject f = Fixtures.load("in-app.json");
        long now = Urls.isoMillis(f.getString("now"));
        for (JSONObject c : Fixtures.objects(f.getJSONArray("cases"))) {
            String name = c.getString("name");
            String text = c.has("body") ? c.get("body").toString() : c.getString("body_text");
            List<InAppMessage> got = InAppMessage.parseList(text, now);
            if (c.isNull("messages")) {
                assertNull(name, got);
                continue;
            }
            JSONArray want = c.getJSONArray("messages");
            assertEquals(name, want.length(), got.size());
            for (int i = 0; i < want.length(); i++) {
                JSONObject w = want.getJSONObject(i);
                InAppMessage m = got.get(i);
                assertEquals(name, w.getString("id"), m.id);
                assertEquals(name, w.getString("language"), m.language);
                assertEquals(name, w.getString("title"), m.title);
                assertEquals(name, w.getString("body"), m.body);
                assertEquals(name, w.isNull("image_url") ? null : w.getString("image_url"), m.imageUrl);
                assertEquals(name, w.isNull("action_url") ? null : w.getString("action_url"), m.actionUrl);
                assertEquals(name, w.getInt("priority"), m.priority);
                assertEquals(name, w.isNull("ends_at") ? null : w.getString("ends_at"), m.endsAt);
            }
            JSONObject opens = c.optJSONObject("opens");
            if (opens != null) {
                for (Iterator<String> it = opens.keys(); it.hasNext(); ) {
                    String id = it.next();
                    for (InAppMessage m : got) {
                        if (m.id.equals(id)) assertEquals(name + " " + id, opens.getBoolean(id), m.openableActionUrl() != null);
                    }
                }
            }
            // Through the core: a usable answer reaches the app, an unusable one is a failed fetch.
            Harness h = new Harness().registered(DEVICE, "tok");
            h.scheduler.setNow(now);
            h.http.then(c.getInt("status"), text);
            final Object[] result = {"unset"};
            h.core.fetchInAppMessages(r -> result[0] = r);
            h.scheduler.runDue();
            assertEquals(name, "/v1/devices/" + DEVICE + "/in-app-messages", h.http.last().url.substring(Harness.BASE.length()));
            assertEquals(name, "tok", h.http.last().header("X-Herald-Push-Token"));
            if (h.http.pending() == 0 && h.scheduler.hasDelayed()) {
                // unusable: retried with back-off, then given up, never thrown
                h.http.fallback = req -> FakeTransport.answer(200, text);
                while (h.scheduler.fireNext()) { }
                assertNull(name, result[0]);
            } else {
                assertEquals(name, want.length(), ((List<?>) result[0]).size());
            }
        }
    }

    @Test
    public void androidPushPayloads() throws Exception {
        JSONObject f = Fixtures.load("push-payloads.json");
        for (JSONObject c : Fixtures.objects(f.getJSONArray("android"))) {
            String name = c.getString("name");
            JSONObject m = c.getJSONObject("message");
            java.util.Map<String, String> data = new java.util.LinkedHashMap<>();
            JSONObject d = m.optJSONObject("data");
            if (d != null) for (Iterator<String> it = d.keys(); it.hasNext(); ) {
                String k = it.next();
                data.put(k, d.getString(k));
            }
            JSONObject n = m.optJSONObject("notification");
            JSONObject an = m.getJSONObject("android").optJSONObject("notification");
            PushMessage p = new PushMessage(data,
                    n == null ? null : n.optString("title", null),
                    n == null ? null : n.optString("body", null),
                    n == null ? null : n.optString("image", null),
                    an == null ? null : an.optString("channel_id", null));
            assertEquals(name, c.getString("campaign_id"), p.campaignId());
            assertEquals(name, c.isNull("action_url") ? null : c.getString("action_url"), p.actionUrl());
            assertEquals(name, c.getBoolean("opens"), p.openableActionUrl() != null);
            assertEquals(name, c.isNull("channel_id") ? null : c.getString("channel_id"), p.channelId);
            assertEquals(name, c.isNull("image_url") ? null : c.getString("image_url"), p.imageUrl);
            assertEquals(name, n != null, p.hasNotification());
        }
    }

    @Test
    public void notificationEvents() throws Exception {
        JSONObject f = Fixtures.load("events.json");
        String device = f.getString("device_id");
        for (JSONObject e : Fixtures.objects(f.getJSONArray("notification_events"))) {
            expectSent(device, e, core -> core.reportNotification(e.getString("campaign_id"), e.getString("type")));
        }
        JSONObject outcomes = f.getJSONObject("notification_outcomes");
        for (Iterator<String> it = outcomes.keys(); it.hasNext(); ) {
            String status = it.next();
            String expect = outcomes.getString(status);
            Harness h = new Harness().registered(device, "tok");
            h.http.then(Integer.parseInt(status), "{\"error\":\"X\",\"message\":\"x\"}");
            h.http.fallback = req -> req.url.endsWith("/register")
                    ? FakeTransport.answer(200, Harness.device(device, "tok", null, null, null, true))
                    : FakeTransport.answer(204, "");
            h.core.reportNotification("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", "received");
            int before = h.http.requests.size();
            h.scheduler.runDue();
            List<String> lines = h.http.lines().subList(before, h.http.requests.size());
            String event = "POST /v1/devices/" + device + "/notification-events";
            switch (expect) {
                case "done":
                case "drop":
                    assertEquals(status, Collections.singletonList(event), lines);
                    assertFalse(status, h.scheduler.hasDelayed());
                    break;
                case "retry":
                    assertEquals(status, Collections.singletonList(event), lines);
                    assertTrue(status, h.scheduler.hasDelayed());
                    h.scheduler.fireNext();
                    assertEquals(status, event, h.http.lines().get(h.http.requests.size() - 1));
                    break;
                case "reregister":
                    assertEquals(status, java.util.Arrays.asList(event, "POST /v1/devices/register", event), lines);
                    break;
                default:
                    throw new AssertionError(expect);
            }
        }
    }

    @Test
    public void inAppEvents() throws Exception {
        JSONObject f = Fixtures.load("events.json");
        String device = f.getString("device_id");
        for (JSONObject e : Fixtures.objects(f.getJSONArray("in_app_events"))) {
            final Object[] got = {null};
            expectSent(device, e, core -> core.reportInAppEvent(e.getString("message_id"), e.getString("type"), r -> got[0] = r));
            assertEquals(InAppMessage.EventOutcome.DONE, got[0]);
        }
        JSONObject outcomes = f.getJSONObject("in_app_outcomes");
        for (Iterator<String> types = outcomes.keys(); types.hasNext(); ) {
            String type = types.next();
            JSONObject byStatus = outcomes.getJSONObject(type);
            for (Iterator<String> it = byStatus.keys(); it.hasNext(); ) {
                String status = it.next();
                String expect = byStatus.getString(status);
                Harness h = new Harness().registered(device, "tok");
                h.http.then(Integer.parseInt(status), "");
                h.http.fallback = req -> FakeTransport.answer(204, "");
                final Object[] got = {null};
                h.core.reportInAppEvent("0b7f8a52-5d4e-4c1a-9a3e-1f2d3c4b5a60", type, r -> got[0] = r);
                h.scheduler.runDue();
                String what = type + " " + status;
                switch (expect) {
                    case "done": assertEquals(what, InAppMessage.EventOutcome.DONE, got[0]); break;
                    case "do_not_show": assertEquals(what, InAppMessage.EventOutcome.DO_NOT_SHOW, got[0]); break;
                    case "drop": assertEquals(what, InAppMessage.EventOutcome.DROP, got[0]); break;
                    case "retry":
                        assertNull(what, got[0]);
                        assertTrue(what, h.scheduler.hasDelayed());
                        h.scheduler.fireNext();
                        assertEquals(what, InAppMessage.EventOutcome.DONE, got[0]);
                        break;
                    default: throw new AssertionError(expect);
                }
            }
        }
    }

    /** Sends an event of the client registered as `device`. */
    private interface Report {
        void on(HeraldCore core) throws Exception;
    }

    /** `report` sends the fixture's event `e` from a registered client, answered 204: it goes out as `e` says. */
    private static void expectSent(String device, JSONObject e, Report report) throws Exception {
        Harness h = new Harness().registered(device, "tok");
        h.http.then(204, "");
        report.on(h.core);
        h.scheduler.runDue();
        checkSent(e, h.http.last());
    }

    /** The request an event of the fixture sends: its method, path and body, with the client's headers. */
    private static void checkSent(JSONObject e, HttpTransport.Request r) throws Exception {
        assertEquals(e.getString("method"), r.method);
        assertEquals(Harness.BASE + e.getString("path"), r.url);
        assertTrue(Fixtures.same(e.getJSONObject("body"), new JSONObject(r.body)));
        checkHeaders(r);
    }

    private static void checkHeaders(HttpTransport.Request r) {
        assertEquals("Bearer " + Harness.KEY, r.header("Authorization"));
        assertEquals("tok", r.header("X-Herald-Push-Token"));
        assertEquals("application/json", r.header("Content-Type"));
    }
}
