/* SPDX-License-Identifier: MIT */
/* Client URLs (docs/wire.md section 6): tcp://HOST:PORT, udp://HOST:PORT, unix:///path, each
 * with an optional ?encoding=binary|ndjson|auto (auto sends binary); tls://HOST:PORT also takes
 * ?ca=FILE&cert=FILE&key=FILE&servername=NAME (percent-encoded), as librecd does. */
package recd.client;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class WireUrl {
    public final String transport, host, path, encoding;
    public final int port;
    /* tls:// only, null when absent: CA file (else the system's), client certificate and key
     * (PEM), and the name the server's certificate must hold (else host). */
    public final String tlsCa, tlsCert, tlsKey, tlsServerName;

    private WireUrl(String transport, String host, int port, String path, String encoding,
                    Map<String, String> q) {
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.path = path;
        this.encoding = encoding;
        this.tlsCa = q.get("ca");
        this.tlsCert = q.get("cert");
        this.tlsKey = q.get("key");
        this.tlsServerName = q.get("servername");
    }

    /* The stand-in of a nats:// URL (NatsUrl has the rest): binary frames, no socket of ours. */
    static WireUrl nats() {
        return new WireUrl("nats", "", 0, "", "binary", Map.of());
    }

    private static final List<String> TLS_KEYS = List.of("ca", "cert", "key", "servername");

    /* '%XX' decoded; '+' stays '+'. */
    static String percentDecode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < b.length; i++) {
            int hi, lo;
            if (b[i] == '%' && i + 2 < b.length && (hi = Character.digit(b[i + 1], 16)) >= 0
                    && (lo = Character.digit(b[i + 2], 16)) >= 0) {
                out.write(hi << 4 | lo);
                i += 2;
            } else {
                out.write(b[i]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /* KEY=VALUE&...: unknown, repeated or empty options are errors. */
    private static Map<String, String> query(String url, String text, boolean tls) {
        Map<String, String> got = new HashMap<>();
        for (String kv : text.split("&")) {
            if (kv.isEmpty())
                continue;
            int eq = kv.indexOf('=');
            String k = eq < 0 ? kv : kv.substring(0, eq), v = eq < 0 ? "" : kv.substring(eq + 1);
            if (!k.equals("encoding") && !(tls && TLS_KEYS.contains(k)))
                throw new IllegalArgumentException("bad URL '" + url + "': unknown query key in '" + kv + "'");
            if (got.containsKey(k))
                throw new IllegalArgumentException("bad URL '" + url + "': " + k + " is given twice");
            if (v.isEmpty() && !k.equals("encoding"))
                throw new IllegalArgumentException("bad URL '" + url + "': " + k + "= needs a value");
            got.put(k, percentDecode(v));
        }
        if (got.containsKey("key") && !got.containsKey("cert"))
            throw new IllegalArgumentException("bad URL '" + url + "': key= without cert=: the key belongs to a client certificate");
        return got;
    }

    public static WireUrl parse(String url) {
        int sep = url.indexOf("://");
        if (sep < 0)
            throw new IllegalArgumentException("bad URL '" + url + "': expected SCHEME://...");
        String scheme = url.substring(0, sep), rest = url.substring(sep + 3);
        if (!List.of("tcp", "tls", "udp", "unix").contains(scheme))
            throw new IllegalArgumentException("bad URL '" + url + "': the scheme must be tcp, tls, udp or unix");
        int q = rest.indexOf('?');
        Map<String, String> opts = q >= 0 ? query(url, rest.substring(q + 1), scheme.equals("tls")) : Map.of();
        if (q >= 0)
            rest = rest.substring(0, q);
        String enc = opts.getOrDefault("encoding", "binary");
        if (!enc.equals("binary") && !enc.equals("ndjson") && !enc.equals("auto"))
            throw new IllegalArgumentException("bad URL '" + url + "': encoding must be binary, ndjson or auto");
        if (enc.equals("auto"))
            enc = "binary";
        if (scheme.equals("unix")) {
            if (rest.isEmpty())
                throw new IllegalArgumentException("bad URL '" + url + "': no socket path");
            return new WireUrl(scheme, "", 0, rest, enc, opts);
        }
        String host;
        String port;
        if (rest.startsWith("[")) {
            int close = rest.indexOf("]:");
            if (close < 0)
                throw new IllegalArgumentException("bad URL '" + url + "': expected [IPv6]:PORT");
            host = rest.substring(1, close);
            port = rest.substring(close + 2);
        } else {
            int colon = rest.lastIndexOf(':');
            if (colon <= 0 || rest.indexOf(':') != colon)
                throw new IllegalArgumentException("bad URL '" + url + "': expected HOST:PORT");
            host = rest.substring(0, colon);
            port = rest.substring(colon + 1);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            p = -1;
        }
        if (p < 1 || p > 65535)
            throw new IllegalArgumentException("bad URL '" + url + "': the port must be 1..65535");
        return new WireUrl(scheme, host, p, "", enc, opts);
    }
}
