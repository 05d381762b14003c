/* SPDX-License-Identifier: MIT */
/* The SA-MP .rec formats' state payloads: the block without its u32 time, little-endian
 * (docs/formats/samp-rec.md), from the JSON field names of docs/protocol.md section 2.3; and
 * samp-player's, which puts the block's .rec type (and a vehicle's model and seat) in front. */
package recd.client;

import java.util.Map;

final class SampFormats {
    private SampFormats() {}

    private abstract static class Samp implements WireFormat {
        private final String name;
        private final int code;

        Samp(String name, int code) {
            this.name = name;
            this.code = code;
        }

        public String name() { return name; }

        public int code() { return code; }

        public String timeKey() { return "t"; }

        public long timeMax() { return 0xFFFFFFFFL; }

        public void openExtra(Map<String, Object> open, ByteWriter out) {}

        public void event(Map<String, Object> event, ByteWriter out) {
            throw new EncodeException("event: format " + name + " has no events");
        }
    }

    static long g(Map<String, Object> m, String key, String kind) {
        return Fields.integer(Fields.need(m, key, "state"), kind, "state." + key);
    }

    static void floats(ByteWriter w, Map<String, Object> m, String key, int n) {
        for (double d : Fields.vec(Fields.need(m, key, "state"), n, true, "state." + key))
            w.f32le(d);
    }

    static int weaponByte(Map<String, Object> m) {
        long weapon = Fields.bits(Fields.need(m, "weapon", "state"), 6, "state.weapon");
        long extra = Fields.bits(Fields.need(m, "additional_key", "state"), 2, "state.additional_key");
        return (int) (weapon | extra << 6);
    }

    static long animFlags(Map<String, Object> m) {
        String w = "state.anim_flags";
        Map<String, Object> f = Fields.object(Fields.need(m, "anim_flags", "state"), w);
        long v = Fields.bits(Fields.need(f, "frame_delta", w), 8, w + ".frame_delta");
        String[] flags = {"loop", "lock_x", "lock_y", "freeze"};
        for (int i = 0; i < flags.length; i++)
            if (Fields.bool(Fields.need(f, flags[i], w), w + "." + flags[i]))
                v |= 1L << (8 + i);
        return v | Fields.bits(Fields.need(f, "time", w), 4, w + ".time") << 12;
    }

    static final WireFormat ONFOOT = new Samp("samp-onfoot", 1) {
        public void state(Map<String, Object> m, ByteWriter w) {
            w.le(g(m, "left_right", "s16"), 2).le(g(m, "up_down", "s16"), 2).le(g(m, "keys", "u16"), 2);
            floats(w, m, "position", 3);
            floats(w, m, "rotation", 4);
            w.u8((int) g(m, "health", "u8")).u8((int) g(m, "armour", "u8")).u8(weaponByte(m))
                    .u8((int) g(m, "special_action", "u8"));
            floats(w, m, "velocity", 3);
            floats(w, m, "surf_offset", 3);
            w.le(g(m, "surf_id", "u16"), 2).le(g(m, "anim_id", "u16"), 2).le(animFlags(m), 2);
        }
    };

    static final WireFormat VEHICLE = new Samp("samp-vehicle", 2) {
        public void state(Map<String, Object> m, ByteWriter w) {
            boolean thrust = m.containsKey("hydra_thrust"), train = m.containsKey("train_speed");
            if (thrust == train)
                throw new EncodeException("state: exactly one of hydra_thrust and train_speed is required");
            w.le(g(m, "vehicle_id", "u16"), 2).le(g(m, "left_right", "s16"), 2)
                    .le(g(m, "up_down", "s16"), 2).le(g(m, "keys", "u16"), 2);
            floats(w, m, "rotation", 4);
            floats(w, m, "position", 3);
            floats(w, m, "velocity", 3);
            w.f32le(Fields.real(Fields.need(m, "vehicle_health", "state"), true, "state.vehicle_health"));
            w.u8((int) g(m, "driver_health", "u8")).u8((int) g(m, "driver_armour", "u8")).u8(weaponByte(m))
                    .u8((int) g(m, "siren", "u8")).u8((int) g(m, "landing_gear", "u8"))
                    .le(g(m, "trailer_id", "u16"), 2);
            if (train) {
                w.f32le(Fields.real(m.get("train_speed"), true, "state.train_speed"));
            } else {
                java.util.List<?> t = Fields.list(m.get("hydra_thrust"), "state.hydra_thrust");
                if (t.size() != 2)
                    throw new EncodeException("state.hydra_thrust: expected [low u16, high u16]");
                w.le(Fields.integer(t.get(0), "u16", "state.hydra_thrust[0]"), 2)
                        .le(Fields.integer(t.get(1), "u16", "state.hydra_thrust[1]"), 2);
            }
        }
    };

    /* samp-player (docs/wire.md 2.3, docs/protocol.md 2.9): a state with vehicle_id is a vehicle
     * state: u8 type 1, u16 model (0: not given, else 400..611), u8 seat (0xFF: not given, else
     * 0..3), the vehicle payload; any other is on foot: u8 type 2, the on-foot payload. */
    static final WireFormat PLAYER = new Samp("samp-player", 5) {
        public void state(Map<String, Object> m, ByteWriter w) {
            if (!m.containsKey("vehicle_id")) {
                if (m.containsKey("vehicle_model") || m.containsKey("seat"))
                    throw new EncodeException("state: vehicle_model and seat belong to vehicle states");
                w.u8(2);
                ONFOOT.state(m, w);
                return;
            }
            long model = 0, seat = 0xFF;
            if (m.get("vehicle_model") != null) {
                model = g(m, "vehicle_model", "u16");
                if (model < 400 || model > 611)
                    throw new EncodeException("state.vehicle_model: " + model + " is not 400..611");
            }
            if (m.get("seat") != null) {
                seat = g(m, "seat", "u8");
                if (seat > 3)
                    throw new EncodeException("state.seat: " + seat + " is not 0..3");
            }
            w.u8(1).le(model, 2).u8((int) seat);
            VEHICLE.state(m, w);
        }
    };
}
