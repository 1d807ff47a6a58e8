package dev.herald.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.json.JSONArray;
import org.json.JSONObject;

/**
 * What one channel list changes on the device (docs/sdk-protocol.md §7): channels new to the
 * library are created, the ones it created before are updated when their name or description
 * differ from what it applied, and deleted when gone from the list. Channels the app made
 * itself are never in the library's record, so never touched.
 */
public final class ChannelPlan {
    public final List<ChannelSpec> create;
    public final List<ChannelSpec> update;
    public final List<String> delete;
    /** The record after the plan: the library's channel ids → the name and description applied. */
    final Map<String, String[]> owned;

    private ChannelPlan(List<ChannelSpec> create, List<ChannelSpec> update, List<String> delete, Map<String, String[]> owned) {
        this.create = Collections.unmodifiableList(create);
        this.update = Collections.unmodifiableList(update);
        this.delete = Collections.unmodifiableList(delete);
        this.owned = owned;
    }

    /** Ids of a plan part, sorted. */
    public static List<String> ids(List<ChannelSpec> channels) {
        List<String> out = new ArrayList<>();
        for (ChannelSpec c : channels) out.add(c.id);
        Collections.sort(out);
        return out;
    }

    /** The list of a 200 answer; null when the text is not the list envelope. */
    public static List<ChannelSpec> parseList(String text) {
        JSONObject o = Json.object(text);
        if (o == null) return null;
        JSONArray data = Json.array(o, "data");
        if (data == null) return null;
        List<ChannelSpec> out = new ArrayList<>();
        for (int i = 0; i < data.length(); i++) {
            ChannelSpec c = ChannelSpec.fromJson(data.opt(i));
            if (c != null) out.add(c);
        }
        return out;
    }

    /** The plan from the library's record ({@code owned}: id → {name, description}) to {@code list}. */
    public static ChannelPlan of(Map<String, String[]> owned, List<ChannelSpec> list) {
        Map<String, ChannelSpec> byId = new TreeMap<>();
        for (ChannelSpec c : list) byId.put(c.id, c);
        List<ChannelSpec> create = new ArrayList<>();
        List<ChannelSpec> update = new ArrayList<>();
        List<String> delete = new ArrayList<>();
        Map<String, String[]> next = new TreeMap<>();
        for (ChannelSpec c : byId.values()) {
            String[] applied = owned.get(c.id);
            if (applied == null) create.add(c);
            else if (!Objects.equals(applied[0], c.name) || !Objects.equals(applied[1], c.description)) update.add(c);
            next.put(c.id, new String[] {c.name, c.description});
        }
        for (String id : new TreeMap<>(owned).keySet()) {
            if (!byId.containsKey(id)) delete.add(id);
        }
        return new ChannelPlan(create, update, delete, next);
    }

    static String ownedToJson(Map<String, String[]> owned) {
        JSONObject o = new JSONObject();
        try {
            for (Map.Entry<String, String[]> e : owned.entrySet()) {
                o.put(e.getKey(), new JSONArray().put(e.getValue()[0]).put(Json.orNull(e.getValue()[1])));
            }
        } catch (org.json.JSONException e) {
            throw new IllegalStateException(e);
        }
        return o.toString();
    }

    static Map<String, String[]> ownedFromJson(String text) {
        Map<String, String[]> out = new LinkedHashMap<>();
        JSONObject o = Json.object(text);
        if (o == null) return out;
        for (java.util.Iterator<String> it = o.keys(); it.hasNext(); ) {
            String id = it.next();
            JSONArray a = o.optJSONArray(id);
            out.put(id, new String[] {a == null ? null : a.optString(0, null), a == null || a.isNull(1) ? null : a.optString(1, null)});
        }
        return out;
    }
}
