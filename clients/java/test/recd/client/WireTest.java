/* SPDX-License-Identifier: MIT */
/* Unit tests that `mvn package` runs before it makes the jar: the frame bytes of docs/wire.md,
 * a refusal naming its field, NDJSON lines and URL parsing. The client against a real recd is
 * tested by tests/clients/java_client.sh (every format) and tests/clients/java_maven.sh. */
package recd.client;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

public class WireTest {
    private static Map<String, Object> onfoot() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "state");
        m.put("session", "p");
        m.put("t", 285);
        for (String k : new String[] {"left_right", "up_down", "keys", "health", "armour", "weapon",
                "additional_key", "special_action", "surf_id", "anim_id"})
            m.put(k, 0);
        m.put("position", List.of(1532.5, -1675.25, 13.546875));
        m.put("rotation", List.of(1.0, 0.0, 0.0, 0.0));
        m.put("velocity", List.of(0.0, 0.0, 0.0));
        m.put("surf_offset", List.of(0.0, 0.0, 0.0));
        m.put("anim_flags", Map.of("frame_delta", 4, "loop", false, "lock_x", false, "lock_y", false,
                "freeze", false, "time", 8));
        return m;
    }

    @Test
    public void encodesTheExampleFrameOfWireMd() {
        Map<String, Object> close = new LinkedHashMap<>();
        close.put("type", "close");
        close.put("session", "ab");
        close.put("seq", 0x0102030405060708L);
        close.put("end_time", -2);
        assertEquals("d701050113000000026162" + "0807060504030201" + "feffffffffffffff",
                HexFormat.of().formatHex(Wire.encodeBinary(close, null, false, 65536)));
    }

    @Test
    public void encodesAnOnFootState() {
        assertEquals(85, Wire.encodeBinary(onfoot(), "samp-onfoot", true, 65536).length);
    }

    @Test
    public void refusesAFieldByName() {
        Map<String, Object> bad = onfoot();
        bad.put("health", 300);
        EncodeException e = assertThrows(EncodeException.class,
                () -> Wire.encodeBinary(bad, "samp-onfoot", false, 65536));
        assertTrue(e.getMessage(), e.getMessage().contains("state.health: 300 does not fit u8"));
    }

    @Test
    public void writesNdjsonLines() {
        String line = new String(Wire.encodeNdjson(Map.of("type", "close", "session", "ab"), false, 65536, null),
                StandardCharsets.UTF_8);
        assertTrue(line, line.endsWith("}\n") && line.contains("\"session\":\"ab\""));
    }

    @Test
    public void parsesUrls() {
        assertEquals("::1", WireUrl.parse("tcp://[::1]:7070?encoding=ndjson").host);
        assertThrows(IllegalArgumentException.class, () -> WireUrl.parse("http://x:1"));
    }
}
