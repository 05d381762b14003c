/* SPDX-License-Identifier: MIT */
/* Checked reads of message fields: a message is a Map of the JSON model (docs/protocol.md), so
 * integers may arrive as Integer or Long, floats as any Number, bytes as byte[] or base64. Each
 * refusal names the field. */
package recd.client;

import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.util.Base64;
import java.util.List;
import java.util.Map;

final class Fields {
    private Fields() {}

    static final double FLT_MAX = Float.MAX_VALUE;

    static Object need(Map<String, ?> m, String key, String where) {
        Object v = m.get(key);
        if (v == null)
            throw new EncodeException(where + "." + key + ": missing");
        return v;
    }

    static boolean isInteger(Object v) {
        return v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte
                || v instanceof BigInteger;
    }

    /* kind: u8 u16 s16 u32 i32 i64 u63 */
    static long integer(Object v, String kind, String where) {
        if (!isInteger(v))
            throw new EncodeException(where + ": " + v + " is not an integer");
        if (v instanceof BigInteger && ((BigInteger) v).bitLength() > 63)
            throw new EncodeException(where + ": " + v + " does not fit " + kind);
        long x = ((Number) v).longValue();
        long lo, hi;
        switch (kind) {
        case "u8": lo = 0; hi = 0xFF; break;
        case "u16": lo = 0; hi = 0xFFFF; break;
        case "s16": lo = Short.MIN_VALUE; hi = Short.MAX_VALUE; break;
        case "u32": lo = 0; hi = 0xFFFFFFFFL; break;
        case "i32": lo = Integer.MIN_VALUE; hi = Integer.MAX_VALUE; break;
        case "u63": lo = 0; hi = Long.MAX_VALUE; break;
        case "i64": lo = Long.MIN_VALUE; hi = Long.MAX_VALUE; break;
        default: throw new AssertionError(kind);
        }
        if (x < lo || x > hi)
            throw new EncodeException(where + ": " + x + " does not fit " + kind);
        return x;
    }

    static long bits(Object v, int n, String where) {
        if (!isInteger(v) || ((Number) v).longValue() < 0 || ((Number) v).longValue() >= (1L << n))
            throw new EncodeException(where + ": " + v + " does not fit " + n + " bits");
        return ((Number) v).longValue();
    }

    static double real(Object v, boolean f32, String where) {
        if (!(v instanceof Number))
            throw new EncodeException(where + ": " + v + " is not a number");
        double d = ((Number) v).doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d))
            throw new EncodeException(where + ": NaN and infinities are refused");
        if (f32 && Math.abs(d) > FLT_MAX)
            throw new EncodeException(where + ": " + d + " does not fit f32");
        return d;
    }

    static double[] vec(Object v, int n, boolean f32, String where) {
        if (!(v instanceof List) || ((List<?>) v).size() != n)
            throw new EncodeException(where + ": expected an array of " + n + " numbers");
        double[] out = new double[n];
        for (int i = 0; i < n; i++)
            out[i] = real(((List<?>) v).get(i), f32, where + "[" + i + "]");
        return out;
    }

    static boolean bool(Object v, String where) {
        if (!(v instanceof Boolean))
            throw new EncodeException(where + ": expected true or false");
        return (Boolean) v;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object v, String where) {
        if (!(v instanceof Map))
            throw new EncodeException(where + ": expected an object");
        return (Map<String, Object>) v;
    }

    static List<?> list(Object v, String where) {
        if (!(v instanceof List))
            throw new EncodeException(where + ": expected an array");
        return (List<?>) v;
    }

    /* Strict UTF-8 (a lone surrogate is refused, never replaced). */
    static byte[] utf8(Object v, String where) {
        if (!(v instanceof String))
            throw new EncodeException(where + ": expected a string");
        try {
            ByteBuffer b = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap((String) v));
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        } catch (CharacterCodingException e) {
            throw new EncodeException(where + ": not valid UTF-8");
        }
    }

    /* bytes fields: byte[] as it is, or the base64 text of the JSON mapping. */
    static byte[] raw(Object v, String where) {
        if (v instanceof byte[])
            return (byte[]) v;
        if (v instanceof String) {
            try {
                return Base64.getDecoder().decode((String) v);
            } catch (IllegalArgumentException e) {
                throw new EncodeException(where + ": not valid base64");
            }
        }
        throw new EncodeException(where + ": expected bytes or a base64 string");
    }

    /* width: 1, 2 or 4 bytes of big-endian length before the data. */
    static void prefixed(ByteWriter w, byte[] data, int width, String where) {
        long limit = width == 1 ? 0xFF : width == 2 ? 0xFFFF : 0xFFFFFFFFL;
        if (data.length > limit)
            throw new EncodeException(where + ": " + data.length + " bytes is longer than " + limit);
        w.be(data.length, width).bytes(data);
    }

    /* The same with a little-endian length (CARLA's strings). */
    static void prefixedLe(ByteWriter w, byte[] data, int width, String where) {
        long limit = width == 2 ? 0xFFFF : 0xFFFFFFFFL;
        if (data.length > limit)
            throw new EncodeException(where + ": " + data.length + " bytes is longer than " + limit);
        w.le(data.length, width).bytes(data);
    }
}
