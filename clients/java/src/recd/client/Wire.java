/* SPDX-License-Identifier: MIT */
/* recd's wire encodings without sockets (docs/wire.md): binary frames and NDJSON lines from
 * message maps, and the server's error reply. */
package recd.client;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

public final class Wire {
    private Wire() {}

    public static final int DEFAULT_MAX_FRAME = 65536;
    static final int MAGIC = 0xD7, VERSION = 1, TYPE_ERROR = 0x7F;
    static final int FLAG_SEQ = 1, FLAG_TIME = 2, FLAG_RESUME = 4;
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern TOKEN = Pattern.compile("[\\x21-\\x7e]{1,256}");

    static int typeCode(Object type) {
        if ("open".equals(type)) return 1;
        if ("state".equals(type)) return 2;
        if ("event".equals(type)) return 3;
        if ("flush".equals(type)) return 4;
        if ("close".equals(type)) return 5;
        throw new EncodeException("type: '" + type + "' is not open, state, event, flush or close");
    }

    public static String checkSessionKey(Object key) {
        if (!(key instanceof String) || !KEY.matcher((String) key).matches() || ((String) key).startsWith("."))
            throw new EncodeException("session: '" + key + "' is not a valid session key "
                    + "(1..64 bytes of A-Z a-z 0-9 . _ -, not starting with '.')");
        return (String) key;
    }

    private static String checkCommon(Map<String, Object> m) {
        typeCode(m.get("type"));
        if (m.get("seq") != null)
            Fields.integer(m.get("seq"), "u63", "seq");
        if ("open".equals(m.get("type")) && m.get("auth") != null
                && !(m.get("auth") instanceof String && TOKEN.matcher((String) m.get("auth")).matches()))
            throw new EncodeException("open.auth: 1-256 printable ASCII bytes without spaces");
        return checkSessionKey(m.get("session"));
    }

    /* One NDJSON line. Fields pass through, so any format works without a table entry. */
    public static byte[] encodeNdjson(Map<String, Object> m, boolean omitSession, int maxFrame, String formatName) {
        checkCommon(m);
        Object type = m.get("type");
        WireFormat fmt = formatName == null ? null : Formats.TABLE.get(formatName);
        if (fmt != null && fmt.timeKey() != null && ("state".equals(type) || "event".equals(type))
                && !m.containsKey(fmt.timeKey()))
            throw new EncodeException(type + "." + fmt.timeKey() + ": missing (NDJSON always carries the time)");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("type", type);
        for (Map.Entry<String, Object> e : m.entrySet())
            if (!e.getKey().equals("type") && !(omitSession && e.getKey().equals("session")))
                out.put(e.getKey(), e.getValue());
        StringBuilder sb = new StringBuilder(256);
        Json.write(sb, out, String.valueOf(type));
        byte[] line = Fields.utf8(sb.toString(), String.valueOf(type));
        if (line.length > maxFrame)
            throw new EncodeException(type + ": the line is " + line.length + " bytes, over max frame " + maxFrame);
        byte[] withNl = java.util.Arrays.copyOf(line, line.length + 1);
        withNl[line.length] = '\n';
        return withNl;
    }

    /* One frame. formatName is the session's format (the open's own for an open). A state or
     * event without its time key is sent without has_time: the daemon stamps it on arrival. */
    public static byte[] encodeBinary(Map<String, Object> m, String formatName, boolean omitKey, int maxFrame) {
        String key = checkCommon(m);
        String type = (String) m.get("type");
        WireFormat fmt = formatName == null ? null : Formats.TABLE.get(formatName);
        boolean needsFormat = type.equals("open") || type.equals("state") || type.equals("event");
        if (needsFormat && fmt == null)
            throw new EncodeException(type + ": format '" + formatName + "' has no binary encoding in this "
                    + "client (use ?encoding=ndjson, or add it to Formats.TABLE)");
        int flags = 0;
        ByteWriter w = new ByteWriter();
        w.u8(MAGIC).u8(VERSION).u8(typeCode(type)).u8(0).le(0, 4);
        byte[] kb = omitKey ? new byte[0] : key.getBytes(StandardCharsets.US_ASCII);
        w.u8(kb.length).bytes(kb);
        if (m.get("seq") != null) {
            flags |= FLAG_SEQ;
            w.le(Fields.integer(m.get("seq"), "u63", "seq"), 8);
        }
        switch (type) {
        case "open": {
            if (Boolean.TRUE.equals(m.get("resume")))
                flags |= FLAG_RESUME;
            long start = Fields.integer(m.getOrDefault("start_time", 0), "i64", "open.start_time");
            byte[] tok = m.get("auth") == null ? new byte[0]
                    : ((String) m.get("auth")).getBytes(StandardCharsets.US_ASCII);
            if (tok.length > 255)
                throw new EncodeException("open.auth: binary tokens are at most 255 bytes");
            w.u8(fmt.code()).le(start, 8).u8(tok.length).bytes(tok);
            fmt.openExtra(m, w);
            break;
        }
        case "state":
        case "event": {
            Object t = fmt.timeKey() == null ? null : m.get(fmt.timeKey());
            if (fmt.timeKey() == null) {
                flags |= FLAG_TIME;
                w.le(0, 8);
            } else if (t != null) {
                long time = Fields.integer(t, "u63", type + "." + fmt.timeKey());
                if (time > fmt.timeMax())
                    throw new EncodeException(type + "." + fmt.timeKey() + ": " + time + " is over " + fmt.timeMax());
                flags |= FLAG_TIME;
                w.le(time, 8);
            }
            if (type.equals("state"))
                fmt.state(m, w);
            else
                fmt.event(m, w);
            break;
        }
        case "flush":
            if (m.get("end_tick") != null)
                w.le(Fields.integer(m.get("end_tick"), "u63", "flush.end_tick"), 8);
            break;
        default: /* close */
            if (m.get("end_time") != null)
                w.le(Fields.integer(m.get("end_time"), "i64", "close.end_time"), 8);
        }
        int body = w.length() - 8;
        if (body > maxFrame)
            throw new EncodeException(type + ": the frame body is " + body + " bytes, over max frame " + maxFrame);
        byte[] out = w.toBytes();
        out[3] = (byte) flags;
        for (int i = 0; i < 4; i++)
            out[4 + i] = (byte) (body >>> (8 * i));
        return out;
    }

    /* The server's error message from what it sent before closing; null when it sent nothing. */
    public static String decodeErrorReply(byte[] d, int n) {
        if (n == 0)
            return null;
        if ((d[0] & 0xFF) == MAGIC) {
            if (n >= 11 && (d[2] & 0xFF) == TYPE_ERROR) {
                int klen = d[8] & 0xFF;
                int at = 9 + klen;
                if (n >= at + 2) {
                    int mlen = (d[at] & 0xFF) | (d[at + 1] & 0xFF) << 8;
                    int end = Math.min(n, at + 2 + mlen);
                    String text = new String(d, at + 2, end - at - 2, StandardCharsets.US_ASCII);
                    String key = new String(d, 9, klen, StandardCharsets.US_ASCII);
                    return key.isEmpty() ? text : "session '" + key + "': " + text;
                }
            }
        } else {
            String line = new String(d, 0, n, StandardCharsets.UTF_8).split("\n", 2)[0];
            int i = line.indexOf("\"message\":\"");
            if (line.contains("\"type\":\"error\"") && i >= 0) {
                StringBuilder sb = new StringBuilder();
                for (int j = i + 11; j < line.length() && line.charAt(j) != '"'; j++) {
                    char c = line.charAt(j);
                    if (c == '\\' && j + 1 < line.length())
                        c = line.charAt(++j);
                    sb.append(c);
                }
                return sb.toString();
            }
        }
        return "server sent " + n + " bytes that are not an error reply";
    }
}
