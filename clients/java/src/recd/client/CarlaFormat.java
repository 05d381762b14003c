/* SPDX-License-Identifier: MIT */
/* The `carla` format's binary payloads (docs/wire.md section 2.3), little-endian: the open's log
 * header fields, a state as one frame (FrameStart fields, then packets of records as CARLA's log
 * stores them, vectors always f64 so both log widths stay exact), and an event as one record.
 * The record layouts are the tables below, by the JSON names of docs/protocol.md section 2.8. */
package recd.client;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

final class CarlaFormat implements WireFormat {
    static final CarlaFormat INSTANCE = new CarlaFormat();

    private static final int WIDTH = 8; /* the vectors of every frame and event this client sends */
    private static final int MAX_PACKETS = 1024;

    public String name() { return "carla"; }

    public int code() { return 4; }

    /* A frame's time is in its payload: the frame header always says 0 (docs/wire.md 2.2). */
    public String timeKey() { return null; }

    public long timeMax() { return 0; }

    /* One field of a record: a type name (u8 u16 u32 i32 u64 f32 f64 vec str), or "list16" /
     * "list32" with the row's fields. */
    private static final class Field {
        final String name, kind;
        final List<Field> rows;

        Field(String name, String kind, List<Field> rows) {
            this.name = name;
            this.kind = kind;
            this.rows = rows;
        }
    }

    /* A packet kind: its 0.9.16 id, and either its record fields or, for the kinds that hold one
     * number and no count (PlatformTime, FrameCounter, VisualTime), that number's type. */
    private static final class Kind {
        final int id;
        final List<Field> fields;
        final String single;

        Kind(int id, List<Field> fields, String single) {
            this.id = id;
            this.fields = fields;
            this.single = single;
        }
    }

    private static final Map<String, List<Field>> ROWS = new HashMap<>();
    private static final Map<String, Kind> KINDS = new HashMap<>();
    private static final Map<Integer, Kind> BY_ID = new HashMap<>();
    private static final List<String> EVENT_NAMES = List.of("add", "delete", "parent", "collision");

    /* spec: "type name name; type name; list16:ROW name" */
    private static List<Field> spec(String text) {
        List<Field> out = new ArrayList<>();
        for (String part : text.split(";")) {
            String[] words = part.trim().split("\\s+");
            for (int i = 1; i < words.length; i++) {
                if (words[0].startsWith("list"))
                    out.add(new Field(words[i], words[0].substring(0, 6), ROWS.get(words[0].substring(7))));
                else
                    out.add(new Field(words[i], words[0], null));
            }
        }
        return out;
    }

    private static void kind(int id, String name, String fields) {
        Kind k = new Kind(id, spec(fields), null);
        KINDS.put(name, k);
        BY_ID.put(id, k);
    }

    private static void single(int id, String name, String type) {
        Kind k = new Kind(id, null, type);
        KINDS.put(name, k);
        BY_ID.put(id, k);
    }

    static {
        ROWS.put("attr", spec("u8 type; str id value"));
        ROWS.put("bone", spec("str name; vec location rotation"));
        ROWS.put("wheel", spec("u8 location; f32 steering_angle tire_rotation"));
        ROWS.put("pair", spec("f32 x y"));
        ROWS.put("gear", spec("f32 ratio down_ratio up_ratio"));
        ROWS.put("wheelphys", spec("f32 tire_friction damping_rate max_steer_angle radius max_brake_torque "
                + "max_handbrake_torque lat_stiff_max_load lat_stiff_value long_stiff_value position_x "
                + "position_y position_z"));
        String box = "u32 id; vec origin extent";
        kind(2, "add", "u32 id; u8 actor_type; vec location rotation; u32 uid; str blueprint; "
                + "list16:attr attributes");
        kind(3, "delete", "u32 id");
        kind(4, "parent", "u32 id parent");
        kind(5, "collision", "u32 id actor1 actor2; u8 hero1 hero2");
        kind(6, "positions", "u32 id; vec location rotation");
        kind(7, "traffic_lights", "u32 id; u8 frozen; f32 elapsed; u8 state");
        kind(8, "vehicle_animations", "u32 id; f32 steering throttle brake; u8 handbrake; i32 gear");
        kind(9, "walker_animations", "u32 id; f32 speed");
        kind(10, "vehicle_lights", "u32 id state");
        kind(11, "scene_lights", "i32 id; f32 intensity r g b a; u8 on type");
        kind(12, "kinematics", "u32 id; vec linear_velocity angular_velocity");
        kind(13, "bounding_boxes", box);
        single(14, "platform_time", "f64");
        kind(15, "physics_controls", "u32 id; f32 max_rpm moi damping_rate_full_throttle "
                + "damping_rate_zero_throttle_clutch_engaged damping_rate_zero_throttle_clutch_disengaged; "
                + "u8 use_gear_autobox; f32 clutch_strength final_ratio mass drag_coefficient center_of_mass_x "
                + "center_of_mass_y center_of_mass_z; list32:pair torque_curve; list32:gear forward_gears; "
                + "list32:pair steering_curve; list32:wheelphys wheels");
        kind(16, "traffic_light_times", "u32 id; f32 green_time yellow_time red_time");
        kind(17, "trigger_volumes", box);
        single(18, "frame_counter", "u64");
        kind(19, "walker_bones", "u32 id; list16:bone bones");
        single(20, "visual_time", "f64");
        kind(21, "wheel_animations", "u32 id; list32:wheel wheels");
        kind(22, "biker_animations", "u32 id; f32 forward_speed engine_rotation");
        kind(23, "doors", "u32 id; u8 doors open");
        kind(24, "weather", "f32 cloudiness precipitation precipitation_deposits wind_intensity "
                + "sun_azimuth_angle sun_altitude_angle fog_density fog_distance fog_falloff wetness "
                + "scattering_intensity mie_scattering_scale rayleigh_scattering_scale dust_storm");
    }

    // ---- numbers: CARLA logs hold NaN and infinities, sent as "nan", "inf", "nan:0x<bits>" ----

    /* f32 bits <-> f64 bits keeping a NaN's payload and quiet bit (a float cast may quiet it). */
    static long widenBits(int b) {
        if ((b & 0x7F800000) == 0x7F800000 && (b & 0x007FFFFF) != 0)
            return (long) (b >>> 31) << 63 | 0x7FF0000000000000L | (long) (b & 0x007FFFFF) << 29;
        return Double.doubleToRawLongBits(Float.intBitsToFloat(b));
    }

    static int narrowBits(long b) {
        long mant = b & 0x000FFFFFFFFFFFFFL;
        if ((b & 0x7FF0000000000000L) == 0x7FF0000000000000L && mant != 0 && (mant >>> 29) != 0)
            return (int) (b >>> 63) << 31 | 0x7F800000 | (int) (mant >>> 29);
        return Float.floatToRawIntBits((float) Double.longBitsToDouble(b));
    }

    /* The f64 bits of a number field; f32Bits[0] is set to the exact f32 bits for "nan:0x" + 8 hex
     * digits (else left null). */
    private static long f64Bits(Object v, String where, Integer[] f32Bits) {
        if (v instanceof Number)
            return Double.doubleToRawLongBits(((Number) v).doubleValue());
        if (v instanceof String) {
            String s = (String) v;
            switch (s) {
            case "inf": return Double.doubleToRawLongBits(Double.POSITIVE_INFINITY);
            case "-inf": return Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY);
            case "nan": return 0x7FF8000000000000L;
            case "-nan": return 0xFFF8000000000000L;
            default: break;
            }
            String hex = s.startsWith("nan:0x") ? s.substring(6) : "";
            if ((hex.length() == 8 || hex.length() == 16) && hex.matches("[0-9a-f]+")) {
                long bits = Long.parseUnsignedLong(hex, 16);
                if (hex.length() == 8) {
                    f32Bits[0] = (int) bits;
                    bits = widenBits((int) bits);
                }
                if (Double.isNaN(Double.longBitsToDouble(bits)))
                    return bits;
            }
        }
        throw new EncodeException(where + ": " + v + " is not a number (or \"nan\", \"-nan\", \"inf\", \"-inf\", "
                + "\"nan:0x\" and the bits)");
    }

    static long f64(Object v, String where) { return f64Bits(v, where, new Integer[1]); }

    static int f32(Object v, String where) {
        Integer[] exact = new Integer[1];
        long bits = f64Bits(v, where, exact);
        if (exact[0] != null)
            return exact[0];
        double d = Double.longBitsToDouble(bits);
        if (Double.isNaN(d))
            return narrowBits(bits);
        if (!Double.isInfinite(d) && Math.abs(d) > Fields.FLT_MAX)
            throw new EncodeException(where + ": " + d + " does not fit f32");
        return Float.floatToRawIntBits((float) d);
    }

    // ---- records ----

    /* The record's own keys only: recd refuses a record with keys it does not know. */
    private static void record(List<Field> fields, Object v, String where, Set<String> skip, ByteWriter w) {
        Map<String, Object> m = Fields.object(v, where);
        for (String key : m.keySet()) {
            if (skip.contains(key))
                continue;
            boolean known = false;
            for (Field f : fields)
                known |= f.name.equals(key);
            if (!known)
                throw new EncodeException(where + ": unknown key '" + key + "'");
        }
        for (Field f : fields)
            value(f.kind, f.rows, Fields.need(m, f.name, where), where + "." + f.name, w);
    }

    private static void value(String kind, List<Field> rows, Object v, String where, ByteWriter w) {
        switch (kind) {
        case "u8": w.u8((int) Fields.integer(v, "u8", where)); break;
        case "u16": w.le(Fields.integer(v, "u16", where), 2); break;
        case "u32": w.le(Fields.integer(v, "u32", where), 4); break;
        case "i32": w.le(Fields.integer(v, "i32", where), 4); break;
        case "u64": w.le(Fields.integer(v, "u63", where), 8); break;
        case "f32": w.le(f32(v, where) & 0xFFFFFFFFL, 4); break;
        case "f64": w.le(f64(v, where), 8); break;
        case "vec": {
            List<?> xyz = Fields.list(v, where);
            if (xyz.size() != 3)
                throw new EncodeException(where + ": expected an array of 3 numbers");
            for (int i = 0; i < 3; i++)
                w.le(f64(xyz.get(i), where + "[" + i + "]"), 8);
            break;
        }
        case "str": {
            Fields.prefixedLe(w, Fields.utf8(v, where), 2, where);
            break;
        }
        default: { /* list16, list32 */
            List<?> list = Fields.list(v, where);
            long max = kind.equals("list16") ? 0xFFFFL : 0xFFFFFFFFL;
            if (list.size() > max)
                throw new EncodeException(where + ": more than " + max + " rows");
            w.le(list.size(), kind.equals("list16") ? 2 : 4);
            for (int i = 0; i < list.size(); i++)
                record(rows, list.get(i), where + "[" + i + "]", Set.of(), w);
        }
        }
    }

    // ---- payloads ----

    public void openExtra(Map<String, Object> o, ByteWriter out) {
        String w = "open.carla";
        if (o.get("carla") == null)
            throw new EncodeException(w + ": required for format carla (an object)");
        Map<String, Object> c = Fields.object(o.get("carla"), w);
        for (String key : c.keySet())
            if (!Set.of("map", "date", "width", "ids", "additional_data").contains(key))
                throw new EncodeException(w + ": unknown key '" + key + "'");
        Object width = c.getOrDefault("width", "f32");
        if (!"f32".equals(width) && !"f64".equals(width))
            throw new EncodeException(w + ".width: '" + width + "' is not \"f32\" or \"f64\"");
        Object ids = c.getOrDefault("ids", "0.9.16");
        int idTable = "0.9.13".equals(ids) ? 13 : "0.9.15".equals(ids) ? 15 : "0.9.16".equals(ids) ? 16 : 0;
        if (idTable == 0)
            throw new EncodeException(w + ".ids: '" + ids + "' is not one of 0.9.13, 0.9.15, 0.9.16");
        boolean extra = Fields.bool(c.getOrDefault("additional_data", false), w + ".additional_data");
        byte[] map = Fields.utf8(Fields.need(c, "map", w), w + ".map");
        for (byte b : map)
            if (b == 0)
                throw new EncodeException(w + ".map: holds a NUL byte");
        out.le(Fields.integer(c.getOrDefault("date", 0), "i64", w + ".date"), 8);
        out.u8("f32".equals(width) ? 4 : 8).u8(idTable).u8(extra ? 1 : 0);
        Fields.prefixedLe(out, map, 2, w + ".map");
    }

    private static final Set<String> FRAME_KEYS = Set.of("type", "session", "seq", "frame", "elapsed", "duration");

    /* Packets go in the message's key order (a LinkedHashMap keeps the caller's), as recd's own
     * JSON reader does; the writer puts them in the log's order. */
    public void state(Map<String, Object> m, ByteWriter w) {
        ByteWriter packets = new ByteWriter();
        int count = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            String key = e.getKey();
            if (FRAME_KEYS.contains(key))
                continue;
            if (key.equals("raw")) {
                List<?> raw = Fields.list(e.getValue(), "state.raw");
                for (int i = 0; i < raw.size(); i++, count++)
                    rawPacket(raw.get(i), "state.raw[" + i + "]", packets);
                continue;
            }
            Kind k = KINDS.get(key);
            if (k == null)
                throw new EncodeException("state: unknown key '" + key + "'");
            packet(k, e.getValue(), "state." + key, packets);
            count++;
        }
        if (count > MAX_PACKETS)
            throw new EncodeException("state: " + count + " packets, more than " + MAX_PACKETS);
        boolean hasDuration = m.get("duration") != null;
        w.le(Fields.integer(Fields.need(m, "frame", "state"), "u63", "state.frame"), 8);
        w.le(f64(Fields.need(m, "elapsed", "state"), "state.elapsed"), 8);
        w.u8(hasDuration ? 1 : 0);
        w.le(hasDuration ? f64(m.get("duration"), "state.duration") : 0L, 8);
        w.u8(WIDTH).le(count, 2);
        w.bytes(packets.toBytes());
    }

    private static void packet(Kind k, Object v, String where, ByteWriter w) {
        ByteWriter body = new ByteWriter();
        long count = 0;
        if (k.single != null) {
            value(k.single, null, v, where, body);
        } else {
            List<?> rows = Fields.list(v, where);
            for (int i = 0; i < rows.size(); i++)
                record(k.fields, rows.get(i), where + "[" + i + "]", Set.of(), body);
            count = rows.size();
        }
        w.u8(k.id).u8(0).le(count, 4).le(body.length(), 4).bytes(body.toBytes());
    }

    /* {"id": 2..255, "data": bytes}: a packet kept byte for byte; with "parsed": false a known
     * kind in a layout recd does not parse, its data a u16 count and the records. */
    private static void rawPacket(Object v, String where, ByteWriter w) {
        Map<String, Object> r = Fields.object(v, where);
        for (String key : r.keySet())
            if (!Set.of("id", "data", "parsed").contains(key))
                throw new EncodeException(where + ": unknown key '" + key + "'");
        long id = Fields.integer(Fields.need(r, "id", where), "u8", where + ".id");
        if (id < 2)
            throw new EncodeException(where + ".id: " + id + " is not 2..255");
        byte[] data = Fields.raw(Fields.need(r, "data", where), where + ".data");
        if (r.containsKey("parsed")) {
            if (!Boolean.FALSE.equals(r.get("parsed")))
                throw new EncodeException(where + ".parsed: only false is allowed");
            if (data.length < 2 || !BY_ID.containsKey((int) id))
                throw new EncodeException(where + ": unparsed packets hold a known id and a count");
            int count = (data[0] & 0xFF) | (data[1] & 0xFF) << 8;
            w.u8((int) id).u8(0).le(count, 4).le(data.length - 2, 4).bytes(data, 2, data.length - 2);
            return;
        }
        w.u8((int) id).u8(1).le(0, 4).le(data.length, 4).bytes(data);
    }

    public void event(Map<String, Object> m, ByteWriter w) {
        Object name = Fields.need(m, "kind", "event");
        if (!EVENT_NAMES.contains(name))
            throw new EncodeException("event.kind: '" + name + "' is not add, delete, parent or collision");
        Kind k = KINDS.get(name);
        w.u8(k.id).u8(WIDTH);
        record(k.fields, m, "event", Set.of("type", "session", "seq", "kind"), w);
    }
}
