package dev.herald.core;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.json.JSONArray;
import org.json.JSONObject;

/** The shared protocol fixtures of sdks/fixtures (system property herald.fixtures, set by surefire). */
final class Fixtures {
    private Fixtures() {}

    static JSONObject load(String name) throws Exception {
        String dir = System.getProperty("herald.fixtures", "../../fixtures");
        File file = new File(dir, name);
        if (!file.isFile()) throw new IOException("fixture missing: " + file.getAbsolutePath());
        return new JSONObject(new String(Files.readAllBytes(file.toPath()), StandardCharsets.UTF_8));
    }

    static List<JSONObject> objects(JSONArray a) throws org.json.JSONException {
        List<JSONObject> out = new ArrayList<>();
        for (int i = 0; i < a.length(); i++) out.add(a.getJSONObject(i));
        return out;
    }

    static List<String> strings(JSONArray a) throws org.json.JSONException {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < a.length(); i++) out.add(a.getString(i));
        return out;
    }

    /** JSON equality of two values (object key order ignored). */
    static boolean same(Object a, Object b) {
        if (a == null || a == JSONObject.NULL) return b == null || b == JSONObject.NULL;
        if (a instanceof JSONObject && b instanceof JSONObject) {
            JSONObject x = (JSONObject) a, y = (JSONObject) b;
            if (x.length() != y.length()) return false;
            for (Iterator<String> it = x.keys(); it.hasNext(); ) {
                String k = it.next();
                if (!y.has(k) || !same(x.opt(k), y.opt(k))) return false;
            }
            return true;
        }
        if (a instanceof JSONArray && b instanceof JSONArray) {
            JSONArray x = (JSONArray) a, y = (JSONArray) b;
            if (x.length() != y.length()) return false;
            for (int i = 0; i < x.length(); i++) if (!same(x.opt(i), y.opt(i))) return false;
            return true;
        }
        if (a instanceof Number && b instanceof Number) return ((Number) a).doubleValue() == ((Number) b).doubleValue();
        return a.equals(b);
    }
}
