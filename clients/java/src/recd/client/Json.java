/* SPDX-License-Identifier: MIT */
/* A small JSON writer for NDJSON lines: Map, List, String, Boolean, Number and byte[] (written
 * as base64, the JSON mapping of bytes fields). Doubles use Java's shortest round-trip text;
 * NaN and infinities are refused, as recd refuses them. */
package recd.client;

import java.util.Base64;
import java.util.List;
import java.util.Map;

final class Json {
    private Json() {}

    static void write(StringBuilder sb, Object v, String where) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String) {
            string(sb, (String) v);
        } else if (v instanceof Boolean) {
            sb.append(v.toString());
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d))
                throw new EncodeException(where + ": NaN and infinities are refused");
            sb.append(v instanceof Float ? Float.toString((Float) v) : Double.toString(d));
        } else if (v instanceof Number) {
            sb.append(v.toString());
        } else if (v instanceof byte[]) {
            string(sb, Base64.getEncoder().encodeToString((byte[]) v));
        } else if (v instanceof Map) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!first)
                    sb.append(',');
                first = false;
                string(sb, String.valueOf(e.getKey()));
                sb.append(':');
                write(sb, e.getValue(), where + "." + e.getKey());
            }
            sb.append('}');
        } else if (v instanceof List) {
            sb.append('[');
            List<?> l = (List<?>) v;
            for (int i = 0; i < l.size(); i++) {
                if (i > 0)
                    sb.append(',');
                write(sb, l.get(i), where + "[" + i + "]");
            }
            sb.append(']');
        } else {
            throw new EncodeException(where + ": " + v.getClass().getSimpleName() + " has no JSON form");
        }
    }

    static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
            case '"': sb.append("\\\""); break;
            case '\\': sb.append("\\\\"); break;
            case '\n': sb.append("\\n"); break;
            case '\r': sb.append("\\r"); break;
            case '\t': sb.append("\\t"); break;
            default:
                if (c < 0x20)
                    sb.append(String.format("\\u%04x", (int) c));
                else
                    sb.append(c);
            }
        }
        sb.append('"');
    }
}
