/* SPDX-License-Identifier: MIT */
/* Recap (.recap, the Minecraft Paper replay format) payloads, big-endian as in the file
 * (docs/formats/recap.md): the open's header, FULL_STATE without its tag, and event actions
 * driven by the event half of the tag table (section 6.4), by the JSON names of
 * docs/protocol.md sections 2.4-2.6. */
package recd.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

final class RecapFormat implements WireFormat {
    static final RecapFormat INSTANCE = new RecapFormat();

    public String name() { return "recap"; }

    public int code() { return 3; }

    public String timeKey() { return "tick"; }

    public long timeMax() { return Long.MAX_VALUE; }

    /* One field of an event: a scalar type name, or a list with its row fields. */
    private static final class Field {
        final String name, kind;
        final List<Field> rows; /* kind "list" only */

        Field(String name, String kind, List<Field> rows) {
            this.name = name;
            this.kind = kind;
            this.rows = rows;
        }
    }

    private static final String EQUIP = "item main_hand off_hand feet legs chest head";
    private static final Map<String, Integer> TAGS = new HashMap<>();
    private static final Map<String, List<Field>> EVENT_FIELDS = new HashMap<>();

    /* spec: "type name name; type name" and optionally "|listname|row spec" for a list. */
    private static void ev(int tag, String name, String spec) {
        String[] parts = spec.split("\\|", -1);
        List<Field> fields = parse(parts[0]);
        if (parts.length == 3)
            fields.add(new Field(parts[1], "list", parse(parts[2])));
        TAGS.put(name, tag);
        EVENT_FIELDS.put(name, fields);
    }

    private static List<Field> parse(String spec) {
        List<Field> out = new ArrayList<>();
        for (String part : spec.split(";")) {
            String[] words = part.trim().split("\\s+");
            for (int i = 1; i < words.length; i++)
                out.add(new Field(words[i], words[0], null));
        }
        return out;
    }

    static {
        ev(0x05, "SWING_ARM", "u8 hand");
        ev(0x06, "USE_ITEM", "u8 hand");
        ev(0x07, "BLOCK_PLACE", "i32 x y z; text block");
        ev(0x08, "BLOCK_BREAK", "i32 x y z; text block");
        ev(0x09, "DAMAGE", "u8 cause; f32 amount; u8 flags; i32 attacker_id");
        ev(0x0D, "BLOCK_DAMAGE_START", "i32 x y z; u8 stage");
        ev(0x0E, "BLOCK_DAMAGE_ABORT", "i32 x y z");
        ev(0x0F, "SIGN_CHANGE", "i32 x y z; u8 side; text line1 line2 line3 line4");
        ev(0x11, "CONTAINER_OPEN", "i32 x y z; str container_type; u8 open");
        ev(0x12, "CONTAINER_UPDATE", "u16 slot; item item");
        ev(0x14, "PROJECTILE", "str entity_type; f64 x y z vx vy vz; i32 projectile_id");
        ev(0x15, "DEATH", "text message");
        ev(0x17, "RIPTIDE", "u8 level");
        ev(0x18, "BED_ENTER", "i32 x y z");
        ev(0x19, "BED_LEAVE", "i32 x y z");
        ev(0x1A, "REDSTONE_INTERACTION", "i32 x y z; text block");
        ev(0x1B, "CRITICAL_HIT", "i32 target_id");
        ev(0x1C, "ENCHANT_CRIT", "i32 target_id");
        ev(0x1D, "CHAT_MESSAGE", "text message");
        ev(0x1E, "ENTITY_INTERACTION", "i32 entity_id; str entity_type; u8 hand; item item");
        ev(0x1F, "VEHICLE_ENTER", "i32 entity_id; str entity_type");
        ev(0x20, "VEHICLE_LEAVE", "i32 entity_id; str entity_type");
        ev(0x21, "MOB_STATES", "|mobs|i32 entity_id; str entity_type; f64 x y z; "
                + "f32 yaw pitch head_yaw health; u8 flags; i32 variant; " + EQUIP);
        ev(0x22, "POTION_EFFECTS", "i32 color|effects|str effect; u8 amplifier; i32 duration; u8 flags");
        ev(0x23, "TOTEM", "");
        ev(0x24, "ARROWS_IN_BODY", "u8 count");
        ev(0x25, "EXPLOSION", "f64 x y z; f32 power|blocks|i32 x y z");
        ev(0x26, "PARTICLES", "|particles|str particle; f64 x y z; f32 dx dy dz speed; i32 count; bytes data");
        ev(0x27, "SIGN_EXTRAS", "i32 x y z; u8 side color glowing");
        ev(0x28, "ITEM_DROP", "item item; f64 x y z vx vy vz");
        ev(0x29, "CAPTURED_PACKETS", "|packets|str type; bytes data");
        ev(0x2B, "BLOCK_CHANGES", "|changes|i32 x y z; text block");
        ev(0xFF, "EXTENSION", "u8 id; bytes data");
    }

    private static void fields(List<Field> fields, Map<String, Object> m, String where, ByteWriter w) {
        for (Field f : fields)
            field(f, Fields.need(m, f.name, where), where + "." + f.name, w);
    }

    private static void field(Field f, Object v, String where, ByteWriter w) {
        switch (f.kind) {
        case "u8": w.u8((int) Fields.integer(v, "u8", where)); break;
        case "u16": w.be(Fields.integer(v, "u16", where), 2); break;
        case "i32": w.be(Fields.integer(v, "i32", where), 4); break;
        case "i64": w.be(Fields.integer(v, "i64", where), 8); break;
        case "f32": w.f32be(Fields.real(v, true, where)); break;
        case "f64": w.f64be(Fields.real(v, false, where)); break;
        case "str": Fields.prefixed(w, Fields.utf8(v, where), 1, where); break;
        case "text": Fields.prefixed(w, Fields.utf8(v, where), 2, where); break;
        case "bytes": Fields.prefixed(w, Fields.raw(v, where), 4, where); break;
        case "item": item(v, where, w); break;
        case "list": {
            List<?> rows = Fields.list(v, where);
            if (rows.size() > 0xFFFF)
                throw new EncodeException(where + ": more than 65535 rows");
            w.be(rows.size(), 2);
            for (int i = 0; i < rows.size(); i++)
                fields(f.rows, Fields.object(rows.get(i), where + "[" + i + "]"), where + "[" + i + "]", w);
            break;
        }
        default: throw new AssertionError(f.kind);
        }
    }

    private static void item(Object v, String where, ByteWriter w) {
        Map<String, Object> it = Fields.object(v, where);
        byte[] key = Fields.utf8(it.getOrDefault("key", ""), where + ".key");
        if (key.length == 0) {
            w.u8(0);
            return;
        }
        Fields.prefixed(w, key, 1, where + ".key");
        w.u8((int) Fields.integer(Fields.need(it, "count", where), "u8", where + ".count"));
        w.u8((int) Fields.integer(it.getOrDefault("flags", 0), "u8", where + ".flags"));
        Fields.prefixed(w, Fields.raw(it.getOrDefault("data", new byte[0]), where + ".data"), 2, where + ".data");
    }

    public void event(Map<String, Object> m, ByteWriter w) {
        Object action = Fields.need(m, "action", "event");
        List<Field> fs = EVENT_FIELDS.get(action);
        if (fs == null)
            throw new EncodeException("event.action: '" + action + "' is not a Recap event action");
        w.u8(TAGS.get(action));
        fields(fs, m, "event", w);
    }

    private static TreeMap<Integer, Map<String, Object>> slots(Object items, int count, String where) {
        TreeMap<Integer, Map<String, Object>> out = new TreeMap<>();
        if (items == null)
            return out;
        List<?> list = Fields.list(items, where);
        for (int i = 0; i < list.size(); i++) {
            String w = where + "[" + i + "]";
            Map<String, Object> it = Fields.object(list.get(i), w);
            int slot = (int) Fields.integer(Fields.need(it, "slot", w), "u8", w + ".slot");
            if (slot >= count || out.containsKey(slot))
                throw new EncodeException(w + ".slot: " + slot + " is out of range or repeated");
            Object key = it.get("key");
            if (!(key instanceof String) || ((String) key).isEmpty())
                throw new EncodeException(w + ".key: a state lists non-empty slots only");
            out.put(slot, it);
        }
        return out;
    }

    public void state(Map<String, Object> m, ByteWriter w) {
        for (String key : new String[] {"pos", "rot", "vel"})
            for (double d : Fields.vec(Fields.need(m, key, "state"), 3, false, "state." + key))
                w.f64be(d);
        w.be(SampFormats.g(m, "flags", "u16"), 2);
        w.u8((int) SampFormats.g(m, "pose", "u8")).u8((int) SampFormats.g(m, "game_mode", "u8"))
                .u8((int) SampFormats.g(m, "hand_state", "u8"));
        w.f32be(Fields.real(Fields.need(m, "health", "state"), true, "state.health"));
        w.f32be(Fields.real(Fields.need(m, "absorption", "state"), true, "state.absorption"));
        TreeMap<Integer, Map<String, Object>> equip = slots(m.get("equipment"), 6, "state.equipment");
        for (int s = 0; s < 6; s++) {
            if (equip.containsKey(s))
                item(equip.get(s), "state.equipment", w);
            else
                w.u8(0);
        }
        TreeMap<Integer, Map<String, Object>> inv = slots(m.get("inventory"), 41, "state.inventory");
        w.be(inv.size(), 2);
        for (Map.Entry<Integer, Map<String, Object>> e : inv.entrySet()) {
            w.u8(e.getKey());
            item(e.getValue(), "state.inventory", w);
        }
    }

    /* The complete .recap header (magic through the extension area) from open.recap. */
    public void openExtra(Map<String, Object> o, ByteWriter out) {
        String w = "open.recap";
        Map<String, Object> r = Fields.object(o.get("recap"), w);
        int version = (int) Fields.integer(r.getOrDefault("version", 4), "u8", w + ".version");
        if (version < 1 || version > 4)
            throw new EncodeException(w + ".version: " + version + " is not 1..4");
        ByteWriter b = new ByteWriter();
        for (String k : new String[] {"name", "player", "uuid", "world"})
            Fields.prefixed(b, Fields.utf8(r.getOrDefault(k, ""), w + "." + k), 1, w + "." + k);
        Object origin = r.getOrDefault("origin", List.of(0, 0, 0));
        for (double d : Fields.vec(origin, 3, false, w + ".origin"))
            b.f64be(d);
        Object start = r.containsKey("start_time") ? r.get("start_time") : o.getOrDefault("start_time", 0);
        b.be(Fields.integer(start, "i64", w + ".start_time"), 8);
        b.be(Fields.integer(r.getOrDefault("end_time", 0), "i64", w + ".end_time"), 8);
        b.be(Fields.integer(r.getOrDefault("frame_count", 0), "u32", w + ".frame_count"), 4);
        long weather = Fields.integer(r.getOrDefault("weather", 0), "i32", w + ".weather");
        long tod = Fields.integer(r.getOrDefault("time_of_day", 0), "i64", w + ".time_of_day");
        if (version >= 2)
            b.be(weather, 4).be(tod, 8);
        else if (weather != 0 || tod != 0)
            throw new EncodeException(w + ": weather and time_of_day need version 2 or later");
        String[] skins = {"skin_texture", "skin_signature"};
        for (int i = 0; i < 2; i++) {
            byte[] v = Fields.utf8(r.getOrDefault(skins[i], ""), w + "." + skins[i]);
            if (v.length > 0) {
                b.u8(i + 1);
                Fields.prefixed(b, v, 2, w + "." + skins[i]);
            }
        }
        if (r.get("encoder") != null) {
            String e = w + ".encoder";
            Map<String, Object> enc = Fields.object(r.get("encoder"), e);
            b.u8(3).be(9, 2);
            b.be(Fields.integer(Fields.need(enc, "keyframe_interval", e), "u32", e + ".keyframe_interval"), 4);
            b.u8((int) Fields.integer(Fields.need(enc, "gzip_level", e), "u8", e + ".gzip_level"));
            b.be(Fields.integer(Fields.need(enc, "member_limit", e), "u32", e + ".member_limit"), 4);
        }
        if (r.containsKey("extensions"))
            b.bytes(Fields.raw(r.get("extensions"), w + ".extensions"));
        if (b.length() > 0xFFFF)
            throw new EncodeException(w + ": the header is " + b.length() + " bytes, more than 65535");
        out.bytes(new byte[] {'R', 'C', 'A', 'P'}).u8(version).be(b.length(), 2).bytes(b.toBytes());
    }
}
