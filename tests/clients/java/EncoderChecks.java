/* SPDX-License-Identifier: MIT */
/* The Java client's encoders without a server: the example frame of docs/wire.md section 2.4,
 * the on-foot, samp-player and carla frame sizes, refusals that name the field, NDJSON passing
 * unknown formats through, URL parsing, and autoSeq numbering each session (read back from a
 * local UDP socket).
 * Prints "ok" or the first failure and exits 1. */
package recd.client;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class EncoderChecks {
    private static void check(boolean ok, String what) {
        if (!ok) {
            System.out.println("FAIL: " + what);
            System.exit(1);
        }
    }

    private static void refuses(Runnable r, String text) {
        try {
            r.run();
        } catch (IllegalArgumentException e) { // EncodeException too
            check(e.getMessage().contains(text), "refusal '" + e.getMessage() + "' should contain '" + text + "'");
            return;
        }
        check(false, "no refusal containing '" + text + "'");
    }

    static Map<String, Object> onfoot() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "state");
        m.put("session", "p");
        m.put("t", 285);
        m.put("left_right", 0);
        m.put("up_down", -128);
        m.put("keys", 8);
        m.put("position", List.of(1532.5, -1675.25, 13.546875));
        m.put("rotation", List.of(1.0, 0.0, 0.0, 0.0));
        m.put("health", 100);
        m.put("armour", 0);
        m.put("weapon", 22);
        m.put("additional_key", 0);
        m.put("special_action", 0);
        m.put("velocity", List.of(0.0, 0.0, 0.0));
        m.put("surf_offset", List.of(0.0, 0.0, 0.0));
        m.put("surf_id", 0);
        m.put("anim_id", 1189);
        m.put("anim_flags", Map.of("frame_delta", 4, "loop", false, "lock_x", false, "lock_y", false,
                "freeze", false, "time", 8));
        return m;
    }

    static Map<String, Object> vehicle() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "state");
        m.put("session", "p");
        m.put("t", 31);
        for (String k : new String[] {"vehicle_id", "left_right", "up_down", "keys", "driver_health", "driver_armour",
                "weapon", "additional_key", "siren", "landing_gear", "trailer_id"})
            m.put(k, 0);
        m.put("rotation", List.of(1.0, 0.0, 0.0, 0.0));
        m.put("position", List.of(1.0, 2.0, 3.0));
        m.put("velocity", List.of(0.0, 0.0, 0.0));
        m.put("vehicle_health", 1000.0);
        m.put("train_speed", 0.5);
        return m;
    }

    public static void main(String[] args) throws Exception {
        Map<String, Object> close = new LinkedHashMap<>();
        close.put("type", "close");
        close.put("session", "ab");
        close.put("seq", 0x0102030405060708L);
        close.put("end_time", -2);
        check(HexFormat.of().formatHex(Wire.encodeBinary(close, null, false, 65536))
                        .equals("d701050113000000026162" + "0807060504030201" + "feffffffffffffff"),
                "docs/wire.md 2.4 example");
        check(Wire.encodeBinary(onfoot(), "samp-onfoot", true, 65536).length == 85, "on-foot frame is 85 bytes");

        Map<String, Object> bad = onfoot();
        bad.put("health", 300);
        refuses(() -> Wire.encodeBinary(bad, "samp-onfoot", false, 65536), "state.health: 300 does not fit u8");
        Map<String, Object> nan = onfoot();
        nan.put("velocity", List.of(Double.NaN, 0.0, 0.0));
        refuses(() -> Wire.encodeNdjson(nan, false, 65536, "samp-onfoot"), "NaN");
        refuses(() -> Wire.encodeBinary(nan, "samp-onfoot", false, 65536), "state.velocity[0]: NaN");
        refuses(() -> Wire.encodeNdjson(Map.of("type", "close", "session", "../x"), false, 65536, null),
                "valid session key");
        refuses(() -> Wire.encodeBinary(Map.of("type", "open", "session", "c", "format", "later"), "later", false,
                65536), "no binary encoding");
        Map<String, Object> car = vehicle();
        check(Wire.encodeBinary(car, "samp-player", true, 65536).length == 8 + 1 + 8 + 67, "player vehicle frame size");
        car.put("vehicle_model", 99);
        refuses(() -> Wire.encodeBinary(car, "samp-player", false, 65536), "state.vehicle_model: 99 is not 400..611");
        car.put("vehicle_model", 411);
        car.put("seat", 4);
        refuses(() -> Wire.encodeBinary(car, "samp-player", false, 65536), "state.seat: 4 is not 0..3");
        Map<String, Object> walker = onfoot();
        walker.put("seat", 1);
        refuses(() -> Wire.encodeBinary(walker, "samp-player", false, 65536), "belong to vehicle states");
        Map<String, Object> frame = new LinkedHashMap<>(Map.of("type", "state", "session", "c", "frame", 1,
                "elapsed", 0.5));
        check(Wire.encodeBinary(frame, "carla", false, 65536).length == 8 + 2 + 8 + 28, "empty carla frame size");
        frame.put("positionz", List.of());
        refuses(() -> Wire.encodeBinary(frame, "carla", false, 65536), "state: unknown key 'positionz'");
        frame.remove("positionz");
        frame.put("walker_animations", List.of(Map.of("id", 1, "speed", 1e39)));
        refuses(() -> Wire.encodeBinary(frame, "carla", false, 65536),
                "state.walker_animations[0].speed: 1.0E39 does not fit f32");
        frame.put("walker_animations", List.of(Map.of("id", 1, "speed", "nan:0x7fc0")));
        refuses(() -> Wire.encodeBinary(frame, "carla", false, 65536), "is not a number");
        refuses(() -> Wire.encodeBinary(Map.of("type", "event", "session", "c", "kind", "spawn"), "carla", false,
                65536), "event.kind");
        refuses(() -> Wire.encodeBinary(Map.of("type", "open", "session", "c", "format", "carla"), "carla", false,
                65536), "open.carla: required");
        refuses(() -> WireUrl.parse("tcp://127.0.0.1"), "HOST:PORT");
        refuses(() -> WireUrl.parse("http://x:1"), "scheme");
        check(WireUrl.parse("tcp://[::1]:7070?encoding=ndjson").host.equals("::1"), "IPv6 URL");

        Map<String, Object> any = new LinkedHashMap<>();
        any.put("type", "state");
        any.put("session", "w");
        any.put("frame", 5);
        any.put("actors", List.of(Map.of("id", 1)));
        check(new String(Wire.encodeNdjson(any, true, 65536, "later"), StandardCharsets.UTF_8)
                .equals("{\"type\":\"state\",\"frame\":5,\"actors\":[{\"id\":1}]}\n"), "NDJSON passes fields through");

        try (DatagramChannel rx = DatagramChannel.open()) {
            rx.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = ((InetSocketAddress) rx.getLocalAddress()).getPort();
            RecdClient.Options o = new RecdClient.Options();
            o.autoSeq = true;
            o.datagramBytes = 65000;
            try (RecdClient c = RecdClient.connect("udp://127.0.0.1:" + port + "?encoding=ndjson", o)) {
                c.open("a", "samp-onfoot", Map.of());
                c.open("b", "samp-onfoot", Map.of());
                c.state("a", onfoot());
                c.state("b", onfoot());
                c.closeSession("a", null);
            }
            ByteBuffer buf = ByteBuffer.allocate(65536);
            rx.receive(buf);
            String text = new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
            StringBuilder got = new StringBuilder();
            for (String line : text.split("\n")) {
                int s = line.indexOf("\"session\":\"") + 11;
                int q = line.indexOf("\"seq\":") + 6;
                got.append(line, s, s + 1).append(line.charAt(q)).append(' ');
            }
            check(got.toString().equals("a0 b0 a1 b1 a2 "), "autoSeq numbers each session: " + got);
        }
        System.out.println("ok");
    }
}
