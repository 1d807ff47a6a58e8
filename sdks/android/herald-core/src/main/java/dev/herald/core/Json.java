package dev.herald.core;

import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;
import org.json.JSONTokener;

/** Defensive JSON reading: any text from the network may be truncated, huge or of the wrong shape. */
final class Json {
    /** Answers larger than this are not parsed (Herald's are a few kB). */
    static final int MAX_TEXT = 1 << 20;

    private Json() {}

    /** The JSON value of {@code text} (JSONObject, JSONArray, String, Number, Boolean, JSONObject.NULL), or null when it is not JSON. */
    static Object parse(String text) {
        if (text == null || text.length() > MAX_TEXT) return null;
        try {
            JSONTokener tokener = new JSONTokener(text);
            Object value = tokener.nextValue();
            // Anything but whitespace after the value is not one JSON document.
            if (tokener.more() && tokener.nextClean() != 0) return null;
            return value;
        } catch (JSONException | RuntimeException | StackOverflowError e) {
            return null;
        }
    }

    static JSONObject object(String text) {
        Object v = parse(text);
        return v instanceof JSONObject ? (JSONObject) v : null;
    }

    /** A string member, or null when absent, null or not a string. */
    static String string(JSONObject o, String key) {
        Object v = o.opt(key);
        return v instanceof String ? (String) v : null;
    }

    static Object orNull(Object v) {
        return v == null ? JSONObject.NULL : v;
    }

    static JSONArray array(JSONObject o, String key) {
        Object v = o.opt(key);
        return v instanceof JSONArray ? (JSONArray) v : null;
    }
}
