/* SPDX-License-Identifier: MIT */
/* Test driver: reads JSON lines on stdin (each with its session and seq) and prints, as lines of
 * hex, the packed JetStream messages a publisher with pack_bytes (the argument) and no linger
 * publishes for them (FleetPack), in publishing order: a pack when it reaches pack_bytes, the rest
 * oldest first at the end. test_fleet_pack_clients.py compares them with librecd's and the Python
 * client's. Usage: java -cp recd-client.jar:classes recd.client.PackDump PACK_BYTES < M.jsonl */
package recd.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

public final class PackDump {
    public static void main(String[] args) throws IOException {
        int packBytes = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, String> formats = new HashMap<>();
        Map<String, FleetPack> packs = new LinkedHashMap<>(); // oldest first
        for (String line; (line = in.readLine()) != null;) {
            if (line.isBlank())
                continue;
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) JsonLinesSender.parse(line);
            String session = String.valueOf(m.get("session"));
            if ("open".equals(m.get("type")))
                formats.put(session, (String) m.get("format"));
            FleetPack p = packs.get(session);
            byte[] frame = Wire.encodeBinary(m, formats.get(session), p != null, Wire.DEFAULT_MAX_FRAME);
            if (p == null)
                packs.put(session, p = new FleetPack(session));
            Object seq = m.get("seq");
            p.add(frame, seq == null ? null : ((Number) seq).longValue());
            if (p.size() >= packBytes)
                System.out.println(HexFormat.of().formatHex(packs.remove(session).message()));
        }
        for (FleetPack p : packs.values())
            System.out.println(HexFormat.of().formatHex(p.message()));
    }
}
