/* SPDX-License-Identifier: MIT */
/* Client URLs (docs/wire.md section 6): tcp://HOST:PORT, udp://HOST:PORT, unix:///path, each
 * with an optional ?encoding=binary|ndjson|auto (auto sends binary). */
package recd.client;

public final class WireUrl {
    public final String transport, host, path, encoding;
    public final int port;

    private WireUrl(String transport, String host, int port, String path, String encoding) {
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.path = path;
        this.encoding = encoding;
    }

    public static WireUrl parse(String url) {
        int sep = url.indexOf("://");
        if (sep < 0)
            throw new IllegalArgumentException("bad URL '" + url + "': expected SCHEME://...");
        String scheme = url.substring(0, sep), rest = url.substring(sep + 3), enc = "binary";
        if (!scheme.equals("tcp") && !scheme.equals("udp") && !scheme.equals("unix"))
            throw new IllegalArgumentException("bad URL '" + url + "': the scheme must be tcp, udp or unix");
        int q = rest.indexOf('?');
        if (q >= 0) {
            for (String kv : rest.substring(q + 1).split("&")) {
                if (!kv.startsWith("encoding="))
                    throw new IllegalArgumentException("bad URL '" + url + "': unknown query key in '" + kv + "'");
                enc = kv.substring(9);
            }
            rest = rest.substring(0, q);
        }
        if (!enc.equals("binary") && !enc.equals("ndjson") && !enc.equals("auto"))
            throw new IllegalArgumentException("bad URL '" + url + "': encoding must be binary, ndjson or auto");
        if (enc.equals("auto"))
            enc = "binary";
        if (scheme.equals("unix")) {
            if (rest.isEmpty())
                throw new IllegalArgumentException("bad URL '" + url + "': no socket path");
            return new WireUrl(scheme, "", 0, rest, enc);
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
        return new WireUrl(scheme, host, p, "", enc);
    }
}
