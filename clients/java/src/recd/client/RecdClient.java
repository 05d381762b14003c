/* SPDX-License-Identifier: MIT */
/* The blocking recd client: connects by URL (TCP, UDP, Unix; tls:// is TCP with TLS through
 * TlsChannel), batches encoded messages, passes the auth token, reconnects a broken stream and
 * takes its sessions back with resume opens (docs/wire.md section 5.3), and on close reads the
 * server's error reply, if any. nats:// URLs publish to NATS JetStream instead (NatsPublisher),
 * a session's frames packed into one message (FleetPack, docs/fleet.md). */
package recd.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.SSLException;

/**
 * One connection (or one connected UDP socket) to recd; use it from one thread at a time.
 * Messages are maps of the JSON model of docs/protocol.md. Queued bytes leave when a batch
 * fills, on flush() or on close(): flush whenever samples must be on the wire (every server
 * tick). With reconnect on, a stream that breaks is connected again and every session this
 * client opened (and did not close) is opened again with "resume": its file goes on. The batch
 * being written when the connection broke is sent again when none of it had left; otherwise its
 * messages are counted in messagesLost() (part of it may have arrived).
 * A tls://HOST:PORT?ca=FILE&cert=FILE&key=FILE&servername=NAME URL is TCP with TLS 1.2 or 1.3
 * (docs/wire.md, "TLS"); a server certificate that is refused throws SSLException from
 * connect(), before anything is sent.
 * A nats://HOST:PORT/PREFIX URL publishes to NATS JetStream (docs/fleet.md, "Publishing"): a
 * session's messages are packed into one JetStream message until it holds pack_bytes (64 KiB; 0:
 * one frame per message) or its first is linger (20 ms) old, checked at each send and flush, on
 * the subject PREFIX.&lt;partition&gt;.~ (subjects=session: PREFIX.&lt;partition&gt;.&lt;key token&gt;;
 * partitions must match recd's nats.partitions),
 * with at most max_in_flight publishes waiting for their ack. flush() sends and reports the
 * losses known so far, close() waits for every ack; both throw PublishException when JetStream
 * did not confirm messages (they are counted in messagesLost()); while the server is away,
 * messages are kept up to the URL's buffer and published after a reconnect. The options are the URL's
 * query (NatsUrl): partitions, max_in_flight, ack_timeout, pack_bytes, linger, subjects, tls_ca, tls_cert,
 * tls_key, tls_name, creds, nkey, and USER:PASSWORD@ or TOKEN@.
 */
public final class RecdClient implements AutoCloseable {
    public static final class Options {
        public String auth; /* added to every open without its own token */
        public int batchBytes = 64 * 1024;
        public int datagramBytes = 1400;
        public int maxFrame = Wire.DEFAULT_MAX_FRAME;
        public long closeTimeoutMs = 5000;
        public long connectTimeoutMs = 5000; /* tls://: the connect and the TLS handshake */
        public boolean reconnect = true;
        public int reconnectAttempts = 8;
        public long reconnectDelayMs = 100;
        public boolean autoSeq; /* number each session's messages 0, 1, ... (recd counts UDP gaps) */
    }

    private static final int MAX_DATAGRAM = 65507;
    private static final int REPLY_MAX = 8192;

    private final WireUrl url;
    private final Options opt;
    private ByteChannel channel;
    private final NatsUrl natsUrl; /* nats:// only, else null */
    private NatsPublisher publisher; /* nats:// until close() */
    private NatsPublisher lastPublisher; /* after close(), for its counts */
    private final Map<String, PendingPack> packs = new LinkedHashMap<>(); /* nats: oldest first */
    private long packedBytes;
    private final Map<String, String> formats = new HashMap<>();
    private final Map<String, Map<String, Object>> opens = new LinkedHashMap<>();
    private final Map<String, byte[]> udpOpens = new HashMap<>();
    private final Map<String, Long> seqs = new HashMap<>();
    private final ByteWriter queue = new ByteWriter(64 * 1024);
    private int queued;
    private String lastSession; /* null at a batch start: every batch stands alone */
    private String datagramOpen; /* the session of the datagram's latest open */
    private IOException broken;
    private String replyEnd = ""; /* how the last readReply ended: closed, reset or timeout */
    private IOException resetError; /* why the last readReply saw a reset (a TLS alert...) */
    private long bytesSent, messagesSent, messagesLost, reconnects;

    /* A session's frames waiting to be published in one message, and when its first came. */
    private static final class PendingPack {
        final FleetPack pack;
        final long openedNanos;

        PendingPack(String session, long openedNanos) {
            this.pack = new FleetPack(session);
            this.openedNanos = openedNanos;
        }
    }

    private RecdClient(WireUrl url, NatsUrl natsUrl, Options opt) throws IOException {
        this.url = url;
        this.opt = opt;
        this.natsUrl = natsUrl;
        if (natsUrl != null)
            this.publisher = new NatsPublisher(natsUrl, (int) Math.min(opt.connectTimeoutMs, Integer.MAX_VALUE),
                    opt.batchBytes, opt.reconnect ? opt.reconnectAttempts : 0, opt.reconnectDelayMs);
        else
            this.channel = connect();
    }

    public static RecdClient connect(String url, Options opt) throws IOException {
        Options o = opt != null ? opt : new Options();
        o.datagramBytes = Math.min(o.datagramBytes, MAX_DATAGRAM);
        if (url.startsWith("nats://"))
            return new RecdClient(WireUrl.nats(), NatsUrl.parse(url), o);
        return new RecdClient(WireUrl.parse(url), null, o);
    }

    public static RecdClient connect(String url) throws IOException { return connect(url, null); }

    public String encoding() { return url.encoding; }

    public String transport() { return url.transport; }

    public long bytesSent() { return bytesSent; }

    public long messagesSent() { return messagesSent; }

    public long messagesLost() { return messagesLost; }

    public long reconnects() { return reconnects; }

    /* Tests: waits for every JetStream ack (nats://), as close() does, without closing. */
    void natsWaitForAcks() throws IOException {
        publishPacks(true);
        try {
            publisher.flush(true);
        } finally {
            messagesLost = publisher.lost;
            reconnects = publisher.reconnects;
        }
    }

    /* Tests: JetStream messages published (nats://), and those JetStream confirmed. */
    long natsPublished() { return natsStats(0); }

    long natsAcked() { return natsStats(1); }

    private long natsStats(int which) {
        NatsPublisher p = publisher != null ? publisher : lastPublisher;
        return p == null ? 0 : which == 0 ? p.published : p.acked;
    }

    /** Queues one message (its "session" is required); sends when a batch is full. */
    public void send(Map<String, Object> msg) throws IOException {
        if (broken != null)
            throw broken;
        String session = Wire.checkSessionKey(msg.get("session"));
        Object type = msg.get("type");
        if (opt.autoSeq && msg.get("seq") == null) {
            msg = new LinkedHashMap<>(msg);
            msg.put("seq", seqs.getOrDefault(session, 0L));
        }
        String fmt;
        if ("open".equals(type)) {
            if (opt.auth != null && msg.get("auth") == null) {
                msg = new LinkedHashMap<>(msg);
                msg.put("auth", opt.auth);
            }
            if (!(msg.get("format") instanceof String))
                throw new EncodeException("open.format: required (a format name)");
            Object recap = msg.get("recap");
            if ("recap".equals(msg.get("format")) && msg.get("start_time") == null
                    && !(recap instanceof Map && ((Map<?, ?>) recap).get("start_time") != null)) {
                /* Otherwise the Recap header (and the file name) would say 1970. */
                msg = new LinkedHashMap<>(msg);
                msg.put("start_time", System.currentTimeMillis());
            }
            fmt = (String) msg.get("format");
        } else {
            fmt = formats.get(session);
            if (fmt == null && url.encoding.equals("binary"))
                throw new EncodeException(type + " for session '" + session + "': no open seen for it");
        }
        if (publisher != null) {
            publish(msg, fmt, session);
        } else if (url.transport.equals("udp")) {
            queueDatagram(msg, fmt, session);
        } else {
            queue.bytes(encode(msg, fmt, session.equals(lastSession)));
            queued++;
            lastSession = session;
        }
        if (opt.autoSeq)
            seqs.put(session, ((Number) msg.get("seq")).longValue() + 1);
        if ("open".equals(type)) {
            formats.put(session, fmt);
            opens.put(session, new LinkedHashMap<>(msg)); /* the caller may reuse its map */
        } else if ("close".equals(type)) {
            opens.remove(session);
            udpOpens.remove(session);
            seqs.remove(session);
        }
        if (!url.transport.equals("udp") && queue.length() >= opt.batchBytes)
            flush();
    }

    public void open(String session, String format, Map<String, Object> fields) throws IOException {
        send(with(fields, "open", session, "format", format));
    }

    public void state(String session, Map<String, Object> fields) throws IOException {
        send(with(fields, "state", session, null, null));
    }

    public void event(String session, Map<String, Object> fields) throws IOException {
        send(with(fields, "event", session, null, null));
    }

    /** The flush message (Recap: the gzip member ends); endTick may be null. */
    public void endMember(String session, Long endTick) throws IOException {
        send(with(Map.of(), "flush", session, "end_tick", endTick));
    }

    /** The close message of one session; endTime (Recap header end, epoch ms) may be null. */
    public void closeSession(String session, Long endTime) throws IOException {
        send(with(Map.of(), "close", session, "end_time", endTime));
    }

    private static Map<String, Object> with(Map<String, Object> fields, String type, String session,
                                            String key, Object value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type); /* first in NDJSON lines, for people reading them */
        m.putAll(fields);
        m.put("type", type); /* the arguments win over same-named fields */
        m.put("session", session);
        if (key != null && value != null)
            m.put(key, value);
        return m;
    }

    /** Sends everything queued. */
    public void flush() throws IOException {
        if (broken != null)
            throw broken;
        if (natsUrl != null) {
            if (publisher == null)
                throw new IOException("flush on a closed client");
            try {
                publishPacks(true);
                publisher.flush(false);
            } finally {
                messagesLost = publisher.lost;
                reconnects = publisher.reconnects;
            }
            return;
        }
        if (queue.length() == 0)
            return;
        byte[] data = queue.toBytes();
        int count = queued;
        queue.clear();
        queued = 0;
        lastSession = null;
        datagramOpen = null;
        if (url.transport.equals("udp"))
            sendDatagram(data, count);
        else
            sendBatch(data, count);
    }

    /**
     * Flushes, ends the connection and waits for the server to close it; throws
     * ServerErrorException when the server sent an error reply.
     */
    @Override
    public void close() throws IOException {
        if (publisher != null) { /* nats: every ack, or PublishException naming what was lost */
            NatsPublisher p = publisher;
            publisher = null;
            lastPublisher = p;
            try {
                try {
                    publishPacksWith(p, true);
                } finally { /* the connection ends even when a pack could not be published */
                    p.close();
                }
            } finally {
                messagesLost = p.lost;
                reconnects = p.reconnects;
            }
            return;
        }
        if (channel == null)
            return;
        try {
            if (broken == null)
                flush();
            if (!url.transport.equals("udp")) {
                if (channel instanceof TlsChannel)
                    ((TlsChannel) channel).shutdownOutput();
                else
                    ((SocketChannel) channel).shutdownOutput();
                byte[] reply = new byte[REPLY_MAX];
                int n = readReply(reply, opt.closeTimeoutMs);
                String text = Wire.decodeErrorReply(reply, n);
                if (text != null)
                    throw new ServerErrorException(text);
                if (replyEnd.equals("timeout"))
                    throw new IOException("recd did not close the connection within " + opt.closeTimeoutMs + " ms");
                if (replyEnd.equals("reset") && resetError instanceof SSLException)
                    throw resetError; /* the server's alert, e.g. certificate required */
                if (replyEnd.equals("reset") && broken == null)
                    throw new IOException("the connection ended abnormally (reset): recd may not have read everything");
            }
            if (broken != null)
                throw broken;
        } finally {
            channel.close();
            channel = null;
        }
    }

    /* Tests: break the connection as a dying peer would (the next write fails). */
    void breakConnectionForTest() throws IOException {
        if (channel instanceof TlsChannel) {
            channel.close();
            return;
        }
        ((SocketChannel) channel).shutdownOutput();
        ((SocketChannel) channel).shutdownInput();
    }

    // ---- encoding and batching ----

    /* nats: the frame alone (pack_bytes=0, it names its session) or into the session's pack,
     * published once it holds pack_bytes; packs whose first frame is linger old go at this send
     * or the next flush (no timer thread: the client is used from one thread at a time), the
     * oldest too while all of them hold more than the URL's buffer. */
    private void publish(Map<String, Object> msg, String fmt, String session) throws IOException {
        if (publisher == null)
            throw new IOException("send on a closed client");
        try {
            if (natsUrl.packBytes == 0) {
                byte[] frame = encode(msg, fmt, false);
                publisher.publish(natsUrl.subject(session), frame);
                messagesSent++;
                bytesSent += frame.length;
                return;
            }
            PendingPack p = packs.get(session);
            byte[] frame = encode(msg, fmt, p != null); /* only a pack's first frame names the session */
            if (p == null) {
                p = new PendingPack(session, System.nanoTime());
                packs.put(session, p);
                packedBytes += p.pack.size();
            }
            Object seq = msg.get("seq");
            int before = p.pack.size();
            p.pack.add(frame, seq instanceof Number ? ((Number) seq).longValue() : null);
            packedBytes += p.pack.size() - before;
            if (p.pack.size() >= natsUrl.packBytes)
                publishPack(publisher, session);
            publishPacks(false);
        } finally {
            messagesLost = publisher.lost;
            reconnects = publisher.reconnects;
        }
    }

    /* Publishes the packs, oldest first: all of them, or those linger old (and the oldest while
     * the packs hold more than the buffer). */
    private void publishPacks(boolean all) throws IOException { publishPacksWith(publisher, all); }

    private void publishPacksWith(NatsPublisher p, boolean all) throws IOException {
        long now = System.nanoTime();
        while (!packs.isEmpty()) {
            Map.Entry<String, PendingPack> oldest = packs.entrySet().iterator().next();
            if (!all && now - oldest.getValue().openedNanos < natsUrl.lingerMs * 1_000_000L
                    && packedBytes <= natsUrl.bufferBytes)
                return;
            publishPack(p, oldest.getKey());
        }
    }

    private void publishPack(NatsPublisher p, String session) throws IOException {
        FleetPack pack = packs.remove(session).pack;
        packedBytes -= pack.size();
        byte[] data = pack.message();
        messagesSent += pack.count();
        bytesSent += data.length;
        p.publish(natsUrl.subject(session), data);
    }

    private byte[] encode(Map<String, Object> m, String fmt, boolean omitSession) {
        return url.encoding.equals("ndjson") ? Wire.encodeNdjson(m, omitSession, opt.maxFrame, fmt)
                                             : Wire.encodeBinary(m, fmt, omitSession, opt.maxFrame);
    }

    private byte[] resumeOf(Map<String, Object> open) {
        Map<String, Object> r = new LinkedHashMap<>(open);
        r.remove("seq");
        r.put("resume", true);
        return encode(r, (String) r.get("format"), false);
    }

    private void queueDatagram(Map<String, Object> msg, String fmt, String session) throws IOException {
        byte[] frame = encode(msg, fmt, false);
        if (frame.length > MAX_DATAGRAM)
            throw new EncodeException(msg.get("type") + ": " + frame.length + " bytes do not fit a datagram");
        boolean isOpen = "open".equals(msg.get("type"));
        if (isOpen) {
            /* With a token, every datagram of the session starts with its open as a resume. */
            if (msg.get("auth") != null)
                udpOpens.put(session, resumeOf(msg));
            else
                udpOpens.remove(session);
        }
        byte[] prefix = udpPrefix(isOpen, session);
        if (queue.length() > 0 && queue.length() + prefix.length + frame.length > opt.datagramBytes) {
            flush();
            prefix = udpPrefix(isOpen, session);
        }
        queue.bytes(prefix).bytes(frame);
        queued++;
        if (prefix.length > 0 || isOpen)
            datagramOpen = session;
        if (queue.length() >= opt.datagramBytes)
            flush();
    }

    /* recd lets a datagram's frames of a protected session follow the datagram's latest open
     * only, so the open is repeated whenever frames of another session came between. */
    private byte[] udpPrefix(boolean isOpen, String session) {
        if (isOpen || session.equals(datagramOpen))
            return new byte[0];
        return udpOpens.getOrDefault(session, new byte[0]);
    }

    // ---- sockets ----

    private ByteChannel connect() throws IOException {
        switch (url.transport) {
        case "unix": {
            SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.connect(UnixDomainSocketAddress.of(url.path));
            } catch (IOException e) {
                ch.close();
                throw new IOException("cannot connect to " + url.path + ": " + e.getMessage(), e);
            }
            return ch;
        }
        case "tls":
            return TlsChannel.connect(url, (int) Math.min(opt.connectTimeoutMs, Integer.MAX_VALUE));
        case "udp": {
            DatagramChannel ch = DatagramChannel.open();
            ch.connect(new InetSocketAddress(url.host, url.port));
            return ch;
        }
        default: {
            SocketChannel ch = SocketChannel.open();
            try {
                ch.connect(new InetSocketAddress(url.host, url.port));
            } catch (IOException e) {
                ch.close();
                throw new IOException("cannot connect to " + url.host + " port " + url.port + ": "
                        + e.getMessage(), e);
            }
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true); /* we batch ourselves */
            return ch;
        }
        }
    }

    /* Writes all of data; returns -1 when done, else how many bytes had left before the error. */
    private long write(byte[] data, IOException[] error) {
        ByteBuffer b = ByteBuffer.wrap(data);
        try {
            while (b.hasRemaining())
                channel.write(b);
            bytesSent += data.length;
            return -1;
        } catch (IOException e) {
            error[0] = e;
            bytesSent += b.position();
            return b.position();
        }
    }

    private void sendBatch(byte[] data, int count) throws IOException {
        IOException[] err = new IOException[1];
        long written = write(data, err);
        if (written < 0) {
            messagesSent += count;
            return;
        }
        if (channel instanceof TlsChannel) { /* a TLS alert (certificate required...) says why */
            readReply(new byte[REPLY_MAX], 50);
            if (resetError instanceof SSLException) {
                broken = resetError;
                throw broken;
            }
        }
        if (!opt.reconnect) {
            broken = err[0];
            throw broken;
        }
        /* The connection broke. Did the server say why? Then it refused us: do not retry. */
        byte[] reply = new byte[REPLY_MAX];
        int n;
        try {
            n = readReply(reply, 50);
        } catch (IOException e) {
            n = 0;
        }
        String text = Wire.decodeErrorReply(reply, n);
        if (text != null) {
            broken = new ServerErrorException(text);
            throw broken;
        }
        reconnectAndResume(written == 0 ? data : new byte[0], written == 0 ? count : 0);
        if (written > 0)
            messagesLost += count;
    }

    private void reconnectAndResume(byte[] pending, int pendingCount) throws IOException {
        long delay = opt.reconnectDelayMs;
        IOException last = null;
        for (int attempt = 0; attempt < opt.reconnectAttempts; attempt++) {
            try {
                channel.close();
                channel = connect();
                ByteWriter w = new ByteWriter();
                for (Map<String, Object> o : opens.values())
                    w.bytes(resumeOf(o));
                w.bytes(pending);
                IOException[] err = new IOException[1];
                if (write(w.toBytes(), err) >= 0)
                    throw err[0];
                messagesSent += pendingCount;
                reconnects++;
                return;
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
                delay = Math.min(delay * 2, 2000);
            }
        }
        broken = new IOException("reconnecting to recd failed: " + (last != null ? last.getMessage() : "interrupted"), last);
        throw broken;
    }

    private void sendDatagram(byte[] data, int count) throws IOException {
        try {
            channel.write(ByteBuffer.wrap(data));
            bytesSent += data.length;
            messagesSent += count;
        } catch (PortUnreachableException e) {
            /* An earlier datagram was refused (ICMP); UDP promises no delivery, so with
             * reconnect on the datagram counts as lost. */
            if (!opt.reconnect) {
                broken = e;
                throw e;
            }
            messagesLost += count;
        }
    }

    /* Reads until the server closes, resets or the timeout passes (replyEnd says which); keeps
     * the first buf.length bytes. */
    private int readReply(byte[] buf, long timeoutMs) throws IOException {
        resetError = null;
        if (channel instanceof TlsChannel)
            return readTlsReply((TlsChannel) channel, buf, timeoutMs);
        SocketChannel ch = (SocketChannel) channel;
        int n = 0;
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        ch.configureBlocking(false);
        try (Selector sel = Selector.open()) {
            ch.register(sel, SelectionKey.OP_READ);
            ByteBuffer chunk = ByteBuffer.allocate(4096);
            for (;;) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    replyEnd = "timeout";
                    return n;
                }
                sel.select(left);
                sel.selectedKeys().clear();
                chunk.clear();
                int r;
                try {
                    r = ch.read(chunk);
                } catch (IOException e) {
                    replyEnd = "reset"; /* the server did not read all we sent */
                    resetError = e;
                    return n;
                }
                if (r < 0) {
                    replyEnd = "closed";
                    return n;
                }
                int keep = Math.min(r, buf.length - n);
                System.arraycopy(chunk.array(), 0, buf, n, keep);
                n += keep;
            }
        } finally {
            if (ch.isOpen()) /* the selector is closed by now, which deregistered the channel */
                ch.configureBlocking(true);
        }
    }

    private int readTlsReply(TlsChannel ch, byte[] buf, long timeoutMs) {
        int n = 0;
        byte[] chunk = new byte[4096];
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        for (;;) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                replyEnd = "timeout";
                return n;
            }
            int r;
            try {
                r = ch.readWithin(chunk, 0, left);
            } catch (IOException e) {
                replyEnd = "reset";
                resetError = e;
                return n;
            }
            if (r < 0) {
                replyEnd = "closed";
                return n;
            }
            int keep = Math.min(r, buf.length - n);
            System.arraycopy(chunk, 0, buf, n, keep);
            n += keep;
        }
    }
}
