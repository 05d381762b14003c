/* SPDX-License-Identifier: MIT */
/* Test driver: reads JSON lines on stdin and prints each message's binary frame from the Java
 * encoder (Wire.encodeBinary, session key always present) as one line of hex, so
 * test_java_client.py can compare them byte for byte with the C library's frames (rectool send).
 * A message the encoder refuses prints "refused: " and the reason. Each session's format is its
 * open's. Usage: java -cp recd-client.jar:classes recd.client.FrameDump < MESSAGES.jsonl */
package recd.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

public final class FrameDump {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, String> formats = new HashMap<>();
        for (String line; (line = in.readLine()) != null;) {
            if (line.isBlank())
                continue;
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) JsonLinesSender.parse(line);
            String session = String.valueOf(m.get("session"));
            if ("open".equals(m.get("type")))
                formats.put(session, (String) m.get("format"));
            try {
                byte[] frame = Wire.encodeBinary(m, formats.get(session), false, Wire.DEFAULT_MAX_FRAME);
                System.out.println(HexFormat.of().formatHex(frame));
            } catch (EncodeException e) {
                System.out.println("refused: " + e.getMessage());
            }
        }
    }
}
