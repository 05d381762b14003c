/* SPDX-License-Identifier: MIT */
/* nats:// URLs of the JetStream publisher (docs/fleet.md, "Publishing"), by the rules of librecd's
 * recd_fleet_url_parse() and the Python client's parse_nats_url(), and the subject of a session
 * as recd/fleet.h computes it: PREFIX.<partition>.~, or with subjects=session the earlier
 * PREFIX.<partition>.<key with '.' as '~'>. */
package recd.client;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class NatsUrl {
    public static final int DEFAULT_PORT = 4222;
    public static final int DEFAULT_PARTITIONS = 8;
    public static final int PARTITIONS_MAX = 1024;
    public static final int PREFIX_MAX = 128;
    public static final int PACK_BYTES_MIN = 256;
    public static final int PACK_BYTES_MAX = 512 << 10;
    public static final int LINGER_MAX_MS = 10000;

    public final String host, prefix;
    public final int port;
    /* nats://USER:PASSWORD@HOST or nats://TOKEN@HOST (percent-decoded), null when absent */
    public final String user, password, token;
    /* the query options, with their defaults when absent */
    public final int partitions, maxInFlight;
    public final long bufferBytes, ackTimeoutMs, lingerMs;
    public final int packBytes; /* 0: one frame per message */
    public final boolean sessionSubjects; /* subjects=session: PREFIX.<p>.<key>, not PREFIX.<p>.~ */
    /* TLS and credentials files, named like recd's nats.* options; null when absent */
    public final String tlsCa, tlsCert, tlsKey, tlsName, creds, nkey;

    private static final List<String> OPTIONS = List.of("partitions", "max_in_flight", "buffer", "ack_timeout",
            "pack_bytes", "linger", "encoding", "subjects", "tls_ca", "tls_cert", "tls_key", "tls_name", "creds",
            "nkey");
    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*");
    private static final Pattern SIZE = Pattern.compile("(\\d{1,19}) ?(B|KiB|MiB|GiB|TiB)?");
    private static final Pattern DURATION = Pattern.compile("(\\d{1,12})(ms|d|h|m|s)");
    private static final List<String> DURATION_UNITS = List.of("d", "h", "m", "s", "ms");
    private static final long[] DURATION_MS = {86400000L, 3600000L, 60000L, 1000L, 1L};

    private NatsUrl(String host, int port, String prefix, String user, String password, String token,
                    Map<String, Object> o) {
        this.host = host;
        this.port = port;
        this.prefix = prefix;
        this.user = user;
        this.password = password;
        this.token = token;
        this.partitions = (Integer) o.getOrDefault("partitions", DEFAULT_PARTITIONS);
        this.maxInFlight = (Integer) o.getOrDefault("max_in_flight", 1024);
        this.bufferBytes = (Long) o.getOrDefault("buffer", 8L << 20);
        this.ackTimeoutMs = (Long) o.getOrDefault("ack_timeout", 10000L);
        this.packBytes = (int) (long) (Long) o.getOrDefault("pack_bytes", (long) FleetPack.DEFAULT_PACK_BYTES);
        this.lingerMs = (Long) o.getOrDefault("linger", (long) FleetPack.DEFAULT_LINGER_MS);
        this.sessionSubjects = "session".equals(o.get("subjects"));
        this.tlsCa = (String) o.get("tls_ca");
        this.tlsCert = (String) o.get("tls_cert");
        this.tlsKey = (String) o.get("tls_key");
        this.tlsName = (String) o.get("tls_name");
        this.creds = (String) o.get("creds");
        this.nkey = (String) o.get("nkey");
    }

    /** FNV-1a (32 bit) of the key's bytes modulo partitions: recd_fleet_partition(). */
    public static int partition(String key, int partitions) {
        int h = 0x811C9DC5;
        for (byte b : key.getBytes(StandardCharsets.US_ASCII))
            h = (h ^ (b & 0xFF)) * 16777619;
        return partitions == 0 ? 0 : Integer.remainderUnsigned(h, partitions);
    }

    /** PREFIX.<partition>.~: recd_fleet_subject(), one subject per partition (the key travels in
     *  the frames). The key must already be a valid session key (Wire.checkSessionKey). */
    public static String subject(String prefix, String key, int partitions) {
        return partitionPrefix(prefix, key, partitions) + "~";
    }

    /** The earlier layout (subjects=session): PREFIX.<partition>.<key with '.' as '~'>. */
    public static String sessionSubject(String prefix, String key, int partitions) {
        return partitionPrefix(prefix, key, partitions) + key.replace('.', '~');
    }

    private static String partitionPrefix(String prefix, String key, int partitions) {
        if (partitions < 1 || partitions > PARTITIONS_MAX)
            throw new IllegalArgumentException("partitions: " + partitions + " is not 1.." + PARTITIONS_MAX);
        return prefix + "." + partition(key, partitions) + ".";
    }

    /** The subject of a session for this URL's prefix, partitions and subjects layout. */
    public String subject(String key) {
        return sessionSubjects ? sessionSubject(prefix, key, partitions) : subject(prefix, key, partitions);
    }

    /** The URL without the user part, for messages (never the password or token). */
    public String where() {
        return "nats://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    static long parseSize(String v) {
        Matcher m = SIZE.matcher(v);
        if (!m.matches())
            throw new NumberFormatException(v);
        String unit = m.group(2);
        int shift = unit == null || unit.equals("B") ? 0 : unit.equals("KiB") ? 10 : unit.equals("MiB") ? 20
                : unit.equals("GiB") ? 30 : 40;
        long n = Long.parseLong(m.group(1));
        if (n > (Long.MAX_VALUE >> shift))
            throw new NumberFormatException(v);
        return n << shift;
    }

    /* recd's durations: numbers with units from d down to ms, each unit once (1m30s). */
    static long parseDurationMs(String v) {
        if (v.isEmpty())
            throw new NumberFormatException(v);
        long total = 0;
        int at = 0, order = -1;
        Matcher m = DURATION.matcher(v);
        while (at < v.length()) {
            if (!m.find(at) || m.start() != at)
                throw new NumberFormatException(v);
            int unit = DURATION_UNITS.indexOf(m.group(2));
            if (unit <= order)
                throw new NumberFormatException(v);
            order = unit;
            total += Long.parseLong(m.group(1)) * DURATION_MS[unit];
            at = m.end();
        }
        return total;
    }

    private static final Map<String, String> RANGES = Map.of("partitions", "a number from 1 to 1024",
            "max_in_flight", "a number from 1 to 1000000", "buffer", "a size from 1KiB to 1GiB (e.g. 8MiB)",
            "ack_timeout", "a duration from 1ms to 1h (e.g. 10s)",
            "pack_bytes", "0 (one frame per message) or a size from 256 to 512KiB (e.g. 64KiB)",
            "linger", "a duration from 1ms to 10s (e.g. 20ms)", "encoding", "binary",
            "subjects", "partition (PREFIX.<p>.~) or session (PREFIX.<p>.<key>)");

    private static Object option(String url, String name, String v) {
        try {
            switch (name) {
            case "partitions":
            case "max_in_flight": {
                int max = name.equals("partitions") ? PARTITIONS_MAX : 1000000;
                if (v.matches("[0-9]{1,7}") && Integer.parseInt(v) >= 1 && Integer.parseInt(v) <= max)
                    return Integer.parseInt(v);
                break;
            }
            case "buffer": {
                long n = parseSize(v);
                if (n >= 1 << 10 && n <= 1 << 30)
                    return n;
                break;
            }
            case "ack_timeout": {
                long n = parseDurationMs(v);
                if (n >= 1 && n <= 3600000)
                    return n;
                break;
            }
            case "pack_bytes": {
                long n = parseSize(v);
                if (n == 0 || (n >= PACK_BYTES_MIN && n <= PACK_BYTES_MAX))
                    return n;
                break;
            }
            case "linger": {
                long n = parseDurationMs(v);
                if (n >= 1 && n <= LINGER_MAX_MS)
                    return n;
                break;
            }
            case "encoding":
                if (v.equals("binary"))
                    return v;
                break;
            case "subjects":
                if (v.equals("partition") || v.equals("session"))
                    return v;
                break;
            default: /* file paths and tls_name */
                if (!v.isEmpty() && v.indexOf('\0') < 0)
                    return v;
            }
        } catch (NumberFormatException e) {
            /* refused below */
        }
        throw new IllegalArgumentException("bad URL '" + redacted(url) + "': " + name + "=" + v + ": expected "
                + RANGES.getOrDefault(name, name.equals("tls_name") ? "a host name" : "a file path"));
    }

    /* The URL with its user part as ***, for error messages. */
    static String redacted(String url) {
        int at = url.indexOf('@'), slash = url.indexOf('/', Math.min(url.length(), url.indexOf("://") + 3));
        if (url.startsWith("nats://") && at > 0 && (slash < 0 || at < slash))
            return "nats://***" + url.substring(at);
        return url;
    }

    /** nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT]/PREFIX[?OPTION=VALUE&...] (IPv6 as [::1]). */
    public static NatsUrl parse(String url) {
        String shown = redacted(url);
        if (!url.startsWith("nats://"))
            throw new IllegalArgumentException("bad URL '" + shown + "': not a nats:// URL");
        if (url.indexOf('#') >= 0)
            throw new IllegalArgumentException("bad URL '" + shown + "': a nats:// URL takes no #fragment");
        String rest = url.substring(7), query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String prefix = slash < 0 ? "" : rest.substring(slash + 1);
        String user = null, password = null, token = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userinfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userinfo.indexOf(':');
            if (colon < 0) {
                token = WireUrl.percentDecode(userinfo);
            } else {
                user = WireUrl.percentDecode(userinfo.substring(0, colon));
                password = WireUrl.percentDecode(userinfo.substring(colon + 1));
            }
            if (userinfo.isEmpty() || (user != null && user.isEmpty()))
                throw new IllegalArgumentException("bad URL '" + shown + "': the user (or token) before '@' is empty");
        }
        String host, portText = null;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0)
                throw new IllegalArgumentException("bad URL '" + shown + "': expected [IPv6]:PORT");
            host = authority.substring(1, close);
            String after = authority.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":"))
                    throw new IllegalArgumentException("bad URL '" + shown + "': expected [IPv6]:PORT");
                portText = after.substring(1);
            }
        } else {
            int colon = authority.indexOf(':');
            host = colon < 0 ? authority : authority.substring(0, colon);
            portText = colon < 0 ? null : authority.substring(colon + 1);
        }
        if (host.isEmpty())
            throw new IllegalArgumentException("bad URL '" + shown + "': the host is empty");
        int port = DEFAULT_PORT;
        if (portText != null) {
            port = portText.matches("[0-9]{1,5}") ? Integer.parseInt(portText) : -1;
            if (port < 1 || port > 65535)
                throw new IllegalArgumentException("bad URL '" + shown + "': the port must be 1..65535");
        }
        if (prefix.isEmpty())
            throw new IllegalArgumentException("bad URL '" + shown + "': a subject prefix is needed: nats://HOST:PORT/PREFIX");
        if (prefix.length() > PREFIX_MAX)
            throw new IllegalArgumentException("bad URL '" + shown + "': the subject prefix is longer than " + PREFIX_MAX + " bytes");
        if (!PREFIX.matcher(prefix).matches())
            throw new IllegalArgumentException("bad URL '" + shown + "': the subject prefix must be tokens of [A-Za-z0-9_-] joined by '.' (e.g. recd.eu)");
        Map<String, Object> opts = new HashMap<>();
        if (query != null && !query.isEmpty()) {
            for (String item : query.split("&", -1)) {
                int eq = item.indexOf('=');
                String name = eq < 0 ? item : item.substring(0, eq);
                if (!OPTIONS.contains(name))
                    throw new IllegalArgumentException("bad URL '" + shown + "': unknown option '"
                            + name.substring(0, Math.min(40, name.length())) + "' (" + String.join(", ", OPTIONS) + ")");
                if (opts.containsKey(name))
                    throw new IllegalArgumentException("bad URL '" + shown + "': " + name + " is given twice");
                opts.put(name, option(url, name, eq < 0 ? "" : WireUrl.percentDecode(item.substring(eq + 1))));
            }
        }
        if (opts.containsKey("tls_key") && !opts.containsKey("tls_cert"))
            throw new IllegalArgumentException("bad URL '" + shown + "': tls_key needs tls_cert (the client certificate it belongs to)");
        int sources = (opts.containsKey("creds") ? 1 : 0) + (opts.containsKey("nkey") ? 1 : 0)
                + (user != null ? 1 : 0) + (token != null ? 1 : 0);
        if (sources > 1)
            throw new IllegalArgumentException("bad URL '" + shown + "': credentials: give one of creds, nkey, USER:PASSWORD@ and TOKEN@, not several");
        return new NatsUrl(host, port, prefix, user, password, token, opts);
    }
}
