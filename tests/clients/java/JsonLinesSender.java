/* SPDX-License-Identifier: MIT */
/* Test driver for the Java client: reads JSON lines on stdin and sends each message through
 * RecdClient, so test_java_client.py can replay the Python client's test sessions through it.
 * Control lines: {"cmd":"flush"}, {"cmd":"acks"} (nats: wait for every ack), {"cmd":"break"} (the connection dies), {"cmd":"sync"} (flush,
 * then print "synced", so the test knows the data left). At end of input it
 * closes the client and prints {"reconnects":N,"lost":N,"sent":N,"published":N,"acked":N,
 * "error":TEXT-or-null} (published and acked: JetStream messages, nats:// only).
 * Usage: java -cp recd-client.jar:classes recd.client.JsonLinesSender URL TOKEN|- [BATCH DATAGRAM] */
package recd.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class JsonLinesSender {
    private final String s;
    private int i;

    private JsonLinesSender(String s) { this.s = s; }

    public static void main(String[] args) throws IOException {
        RecdClient.Options o = new RecdClient.Options();
        o.auth = args[1].equals("-") ? null : args[1];
        if (args.length > 3) {
            o.batchBytes = Integer.parseInt(args[2]);
            o.datagramBytes = Integer.parseInt(args[3]);
        }
        RecdClient c = RecdClient.connect(args[0], o);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String error = null;
        try {
            for (String line; (line = in.readLine()) != null;) {
                if (line.isBlank())
                    continue;
                @SuppressWarnings("unchecked")
                Map<String, Object> m = (Map<String, Object>) new JsonLinesSender(line).value();
                Object cmd = m.get("cmd");
                if ("flush".equals(cmd))
                    c.flush();
                else if ("acks".equals(cmd))
                    c.natsWaitForAcks();
                else if ("break".equals(cmd))
                    c.breakConnectionForTest();
                else if ("sync".equals(cmd)) {
                    c.flush();
                    System.out.println("synced");
                    System.out.flush();
                }
                else
                    c.send(m);
            }
            c.close();
        } catch (IOException | EncodeException e) {
            error = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        StringBuilder sb = new StringBuilder();
        sb.append("{\"reconnects\":").append(c.reconnects()).append(",\"lost\":").append(c.messagesLost())
                .append(",\"sent\":").append(c.messagesSent()).append(",\"published\":").append(c.natsPublished())
                .append(",\"acked\":").append(c.natsAcked())
                .append(",\"error\":");
        if (error == null)
            sb.append("null");
        else
            Json.string(sb, error);
        System.out.println(sb.append('}'));
    }

    /* One JSON value (objects keep their key order), for FrameDump too. */
    static Object parse(String line) { return new JsonLinesSender(line).value(); }

    private void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i)))
            i++;
    }

    private Object value() {
        ws();
        char c = s.charAt(i);
        if (c == '{') {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (s.charAt(i) == '}') {
                i++;
                return m;
            }
            for (;;) {
                ws();
                String k = string();
                ws();
                i++; /* : */
                m.put(k, value());
                ws();
                if (s.charAt(i++) == '}')
                    return m;
            }
        }
        if (c == '[') {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (s.charAt(i) == ']') {
                i++;
                return l;
            }
            for (;;) {
                l.add(value());
                ws();
                if (s.charAt(i++) == ']')
                    return l;
            }
        }
        if (c == '"')
            return string();
        if (s.startsWith("true", i)) {
            i += 4;
            return Boolean.TRUE;
        }
        if (s.startsWith("false", i)) {
            i += 5;
            return Boolean.FALSE;
        }
        if (s.startsWith("null", i)) {
            i += 4;
            return null;
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0)
            i++;
        String num = s.substring(start, i);
        if (num.contains(".") || num.contains("e") || num.contains("E"))
            return Double.parseDouble(num);
        return Long.parseLong(num);
    }

    private String string() {
        StringBuilder sb = new StringBuilder();
        i++; /* opening quote */
        for (;;) {
            char c = s.charAt(i++);
            if (c == '"')
                return sb.toString();
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            char e = s.charAt(i++);
            switch (e) {
            case 'n': sb.append('\n'); break;
            case 't': sb.append('\t'); break;
            case 'r': sb.append('\r'); break;
            case 'b': sb.append('\b'); break;
            case 'f': sb.append('\f'); break;
            case 'u':
                sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                i += 4;
                break;
            default: sb.append(e);
            }
        }
    }
}
