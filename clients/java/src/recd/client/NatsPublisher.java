/* SPDX-License-Identifier: MIT */
/* Publishing to NATS JetStream on the plain NATS text protocol, with the JDK only (no jnats): each
 * PUB carries a reply inbox, so JetStream answers it with an ack; at most maxInFlight publishes
 * wait for theirs, and one never confirmed (refused, timed out, or written to a connection that
 * died) is counted and reported as a PublishException. While the server is away, publishes are
 * kept up to the URL's buffer and sent after a reconnect. TLS is the NATS upgrade after INFO. */
package recd.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;

final class NatsPublisher {
    private static final int LINE_MAX = 64 * 1024;
    private static final int ACK_MAX = 64 * 1024;
    private static final Pattern MAX_PAYLOAD = Pattern.compile("\"max_payload\"\\s*:\\s*(\\d+)");
    private static final Pattern NONCE = Pattern.compile("\"nonce\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern DESCRIPTION = Pattern.compile("\"description\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern CODE = Pattern.compile("\"code\"\\s*:\\s*(\\d+)");

    private final NatsUrl url;
    private final int connectTimeoutMs, batchBytes;
    private final NatsCredentials creds;
    private SSLContext tlsContext; /* made before connecting: nats-server allows 0.5 s for the handshake */
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private final String inbox;
    private long nextId;
    private final Map<Long, Integer> inflight = new LinkedHashMap<>(); /* ack token -> size, oldest first */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream(); /* PUBs not written yet */
    private final Map<Long, Kept> pendingKept = new LinkedHashMap<>(); /* the same, kept if none of it leaves */
    private boolean writing; /* a write of pending began: its messages may have left */
    private byte[] rx = new byte[65536];
    private int rxLen;
    private int pongs; /* PINGs read, answered after the data being written */
    private long maxPayload = 1 << 20;
    private String down; /* why the connection is gone, null while it is up */
    private boolean closed;
    private final int reconnectAttempts; /* 0: a lost connection loses every later publish */
    private final long reconnectDelayMs;
    private final ArrayDeque<Kept> backlog = new ArrayDeque<>(); /* kept while disconnected */
    private long backlogBytes;
    private long nextTry; /* backlog size at which publish() tries to reconnect once */
    long published, acked, lost, reported, reconnects;
    String firstError, lastError;

    private record Kept(String subject, byte[] payload) {}

    NatsPublisher(NatsUrl url, int connectTimeoutMs, int batchBytes, int reconnectAttempts, long reconnectDelayMs)
            throws IOException {
        this.url = url;
        this.connectTimeoutMs = connectTimeoutMs;
        this.batchBytes = batchBytes;
        this.reconnectAttempts = reconnectAttempts;
        this.reconnectDelayMs = reconnectDelayMs;
        this.creds = NatsCredentials.of(url);
        if (url.tlsCa != null || url.tlsCert != null)
            tlsContext = TlsChannel.context(url.tlsCa, url.tlsCert, url.tlsKey);
        byte[] r = new byte[11];
        new SecureRandom().nextBytes(r);
        this.inbox = "_INBOX." + HexFormat.of().formatHex(r);
        connect();
    }

    int inFlight() { return inflight.size(); }

    // ---- connection ----

    private void connect() throws IOException {
        rxLen = 0;
        pongs = 0;
        Socket raw = SocketChannel.open().socket(); /* its channel reads without waiting (poll) */
        boolean tlsUp = false;
        try {
            raw.connect(new InetSocketAddress(url.host, url.port), connectTimeoutMs);
            raw.setTcpNoDelay(true); /* we batch ourselves */
            raw.setSoTimeout(connectTimeoutMs);
            socket = raw;
            in = raw.getInputStream();
            out = raw.getOutputStream();
            String info = readLine();
            if (!info.startsWith("INFO "))
                throw new IOException(url.where() + ": not a NATS server (it said '" + cut(info, 60) + "')");
            boolean wantTls = url.tlsCa != null || url.tlsCert != null;
            boolean tls = info.contains("\"tls_required\":true") || (wantTls && info.contains("\"tls_available\":true"));
            if (wantTls && !tls)
                throw new IOException(url.where() + ": TLS was asked for (tls_ca/tls_cert) but the server does not "
                        + "offer it; not connecting in clear text");
            if (tls) {
                if (rxLen > 0)
                    throw new IOException(url.where() + ": the server sent data before the TLS handshake");
                if (tlsContext == null) /* a server that requires TLS: the JDK's trust store */
                    tlsContext = TlsChannel.context(null, null, null);
                SSLSocket s = TlsChannel.upgrade(tlsContext, raw, url.tlsName != null ? url.tlsName : url.host, url.port,
                        connectTimeoutMs);
                socket = s;
                tlsUp = true;
                in = s.getInputStream();
                out = s.getOutputStream();
            }
            if (info.contains("\"auth_required\":true") && creds == null)
                throw new IOException(url.where() + ": the server requires authentication: give creds= (a .creds file), "
                        + "nkey= (a user's nkey seed file) or USER:PASSWORD@ / TOKEN@ in the URL");
            if (info.contains("\"jetstream\":false"))
                throw new IOException(url.where() + ": JetStream is off (nats-server -js)");
            Matcher m = MAX_PAYLOAD.matcher(info);
            if (m.find())
                maxPayload = Long.parseLong(m.group(1));
            StringBuilder c = new StringBuilder("CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":false,"
                    + "\"lang\":\"java\",\"version\":\"0.1.0\",\"name\":\"recd-client.jar\",\"protocol\":1,\"tls_required\":")
                    .append(tls);
            if (creds != null) {
                Matcher n = NONCE.matcher(info);
                creds.connectFields(c, n.find() ? n.group(1) : null);
            }
            c.append("}\r\nSUB ").append(inbox).append(".* 1\r\nPING\r\n");
            out.write(c.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            for (;;) { /* the PONG says CONNECT and SUB were taken */
                String line = readLine();
                if (line.equals("PONG"))
                    break;
                if (line.startsWith("-ERR")) {
                    String l = line.toLowerCase();
                    if (l.contains("authorization") || l.contains("authentication"))
                        throw new IOException(url.where() + ": the server refused " + (creds != null ? creds.who() : "us")
                                + ": " + line);
                    throw new IOException(url.where() + ": " + line);
                }
                if (line.equals("PING")) {
                    out.write("PONG\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            }
            socket.setSoTimeout(0);
        } catch (SocketTimeoutException e) {
            closeQuietly();
            raw.close(); /* when the connect itself failed, socket was not set yet */
            throw new IOException(url.where() + ": no answer within " + connectTimeoutMs + " ms", e);
        } catch (IOException e) {
            closeQuietly();
            raw.close();
            if (e.getMessage() != null && e.getMessage().startsWith("nats://"))
                throw e;
            if (tlsUp) { /* TLS 1.3 reports a refused client certificate after the handshake: an alert, or a closed socket */
                boolean certHint = url.tlsCert == null;
                throw new SSLException(url.where() + ": TLS: the server ended the session: " + e.getMessage()
                        + (certHint ? " (does the server want a client certificate? tls_cert, tls_key)" : ""), e);
            }
            throw new IOException(url.where() + ": " + e.getMessage(), e);
        }
    }

    private static String cut(String s, int n) { return s.length() <= n ? s : s.substring(0, n); }

    private void closeQuietly() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException e) {
                /* already gone */
            }
        }
        socket = null;
    }

    /* One protocol line from rx (reading more, with the socket's timeout); while connecting. */
    private String readLine() throws IOException {
        for (;;) {
            int end = lineEnd(0);
            if (end >= 0) {
                String line = new String(rx, 0, end, StandardCharsets.UTF_8);
                consume(end + 2);
                return line;
            }
            if (rxLen > LINE_MAX)
                throw new IOException(url.where() + ": a protocol line over " + LINE_MAX + " bytes");
            if (fill() < 0)
                throw new IOException(url.where() + ": the server closed the connection");
        }
    }

    private int lineEnd(int from) {
        for (int i = from; i + 1 < rxLen; i++)
            if (rx[i] == '\r' && rx[i + 1] == '\n')
                return i;
        return -1;
    }

    private void consume(int n) {
        System.arraycopy(rx, n, rx, 0, rxLen - n);
        rxLen -= n;
    }

    private int fill() throws IOException {
        if (rxLen == rx.length)
            rx = java.util.Arrays.copyOf(rx, rx.length * 2);
        int r = in.read(rx, rxLen, rx.length - rxLen);
        if (r > 0)
            rxLen += r;
        return r;
    }

    // ---- publishing ----

    /** Queues one publish; writes when a batch is full and waits while maxInFlight are unconfirmed.
     *  While disconnected it is kept; one that does not fit the buffer is lost and thrown at once. */
    void publish(String subject, byte[] payload) throws IOException {
        if (closed)
            throw new IOException("publish on a closed NATS publisher");
        if (payload.length > maxPayload)
            throw new EncodeException("a " + payload.length + "-byte message is over the server's max_payload " + maxPayload);
        if (socket == null) {
            keep(subject, payload);
            return;
        }
        queuePub(subject, payload);
        if (pending.size() >= batchBytes)
            writeOut();
        if (inflight.size() >= url.maxInFlight)
            waitAcks(url.maxInFlight - 1);
    }

    private void queuePub(String subject, byte[] payload) {
        long token = nextId++;
        pending.writeBytes(("PUB " + subject + " " + inbox + "." + token + " " + payload.length + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        pending.writeBytes(payload);
        pending.writeBytes(new byte[] {'\r', '\n'});
        inflight.put(token, payload.length);
        pendingKept.put(token, new Kept(subject, payload));
        published++;
    }

    private void keep(String subject, byte[] payload) throws PublishException {
        if (reconnectAttempts == 0 || backlogBytes + payload.length > url.bufferBytes) {
            lose(1, down + (reconnectAttempts == 0 ? "" : "; the " + url.bufferBytes + "-byte buffer is full"));
            report();
            return;
        }
        backlog.add(new Kept(subject, payload));
        backlogBytes += payload.length;
        if (backlogBytes >= nextTry)
            reconnect(1, false); /* one quick attempt now and then; flush(true) and close() try in full */
    }

    /* Connects again and publishes the kept messages; when every attempt fails and giveUp is set,
     * they are lost. Those written to a connection that fails again are lost with it. */
    private boolean reconnect(int attempts, boolean giveUp) {
        long delay = reconnectDelayMs;
        String last = down;
        for (int i = 0; i < attempts; i++) {
            if (i > 0) {
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                delay = Math.min(delay * 2, 2000);
            }
            try {
                connect();
            } catch (IOException e) {
                last = e.getMessage();
                continue;
            }
            reconnects++;
            down = null;
            while (socket != null && !backlog.isEmpty()) {
                Kept k = backlog.poll();
                backlogBytes -= k.payload.length;
                queuePub(k.subject, k.payload);
                if (pending.size() >= batchBytes)
                    writeOut();
                if (inflight.size() >= url.maxInFlight)
                    waitAcks(url.maxInFlight - 1);
            }
            writeOut();
            if (socket != null)
                return true;
            last = down;
        }
        nextTry = backlogBytes + batchBytes;
        if (giveUp) {
            lose(backlog.size(), "reconnecting to " + url.where() + " failed: " + last);
            backlog.clear();
            backlogBytes = 0;
        }
        return false;
    }

    /** Writes what is queued; with waitAcks, waits until every publish is confirmed or counted
     *  lost (ackTimeout). Throws PublishException for losses not reported before. */
    void flush(boolean waitAcks) throws IOException {
        writeOut();
        if (socket == null && !backlog.isEmpty() && waitAcks)
            reconnect(reconnectAttempts, true);
        if (waitAcks)
            waitAcks(0);
        else
            poll();
        report();
    }

    /** Waits for every ack and ends the connection; throws PublishException naming every publish
     *  never confirmed, including those reported before. */
    void close() throws IOException {
        closed = true;
        try {
            writeOut();
            if (socket == null && !backlog.isEmpty())
                reconnect(reconnectAttempts, true);
            waitAcks(0);
        } finally {
            closeQuietly();
            lose(inflight.size(), "the publisher closed before their ack");
            inflight.clear();
            lose(backlog.size(), url.where() + " was still unreachable at close");
            backlog.clear();
            backlogBytes = 0;
        }
        if (lost > 0) {
            reported = lost;
            throw new PublishException(lost, firstError, lastError);
        }
    }

    void abort() {
        closed = true;
        closeQuietly();
    }

    private void lose(long count, String why) {
        if (count <= 0)
            return;
        if (firstError == null)
            firstError = why;
        lastError = why;
        lost += count;
    }

    private void report() throws PublishException {
        if (lost > reported) {
            reported = lost;
            throw new PublishException(lost, firstError, lastError);
        }
    }

    /* The server went away: everything unconfirmed is lost (it may or may not be stored; what was
     * queued and not written counts too: a blocking write cannot tell how much left); later
     * publishes are kept for a reconnect. */
    private void connectionLost(String why) {
        closeQuietly();
        if (!writing) { /* none of the pending PUBs left: keep them, ahead of the backlog */
            ArrayDeque<Kept> first = new ArrayDeque<>(pendingKept.values());
            for (Long token : pendingKept.keySet())
                inflight.remove(token);
            for (Kept k : first)
                backlogBytes += k.payload.length;
            first.addAll(backlog);
            backlog.clear();
            backlog.addAll(first);
        }
        pendingKept.clear();
        pending.reset();
        down = url.where() + ": " + why;
        lose(inflight.size(), down);
        inflight.clear();
        nextTry = 0;
    }

    /* Writes the queued PUBs and the PONGs due; reading first notices a server that went away
     * (a plain socket), so what was never written is kept rather than lost. */
    private void writeOut() {
        if (socket == null || (pending.size() == 0 && pongs == 0))
            return;
        readWaiting();
        if (socket == null)
            return;
        try {
            for (; pongs > 0; pongs--)
                pending.writeBytes("PONG\r\n".getBytes(StandardCharsets.US_ASCII));
            writing = true;
            pending.writeTo(out);
            out.flush();
            pending.reset();
            pendingKept.clear();
        } catch (IOException e) {
            connectionLost("writing failed: " + e.getMessage());
        } finally {
            writing = false;
        }
    }

    /* A plain socket: reads what already arrived without waiting (its channel, non-blocking for
     * the moment), noticing a server that closed. TLS: nothing (see poll). */
    private void readWaiting() {
        if (socket == null || socket instanceof SSLSocket)
            return;
        SocketChannel ch = socket.getChannel();
        try {
            ch.configureBlocking(false);
            for (;;) {
                if (rxLen == rx.length)
                    rx = java.util.Arrays.copyOf(rx, rx.length * 2);
                int r = ch.read(ByteBuffer.wrap(rx, rxLen, rx.length - rxLen));
                if (r < 0) {
                    connectionLost("the server closed the connection");
                    return;
                }
                if (r == 0)
                    break;
                rxLen += r;
                parse();
                if (socket == null)
                    return;
            }
            ch.configureBlocking(true);
        } catch (IOException e) {
            connectionLost("reading failed: " + e.getMessage());
        }
    }

    /* Reads the acks (and PINGs) that already arrived: a plain socket without waiting; a TLS one
     * knows only its decrypted bytes, so it reads with a 1 ms timeout. */
    private void poll() {
        if (socket == null)
            return;
        if (!(socket instanceof SSLSocket)) {
            readWaiting();
            answerPings();
            return;
        }
        try {
            socket.setSoTimeout(1);
            while (socket != null && readSome())
                ;
        } catch (SocketTimeoutException e) {
            /* nothing more now */
        } catch (IOException e) {
            connectionLost("reading failed: " + e.getMessage());
        }
        answerPings();
    }

    private void answerPings() {
        if (pongs > 0)
            writeOut();
    }

    /* Writes what is queued and reads until at most `most` publishes wait for their ack; those
     * still unconfirmed after ack_timeout are counted lost, oldest first. */
    private void waitAcks(int most) {
        writeOut();
        long deadline = System.nanoTime() + url.ackTimeoutMs * 1_000_000L;
        while (socket != null && inflight.size() > most) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                int stale = inflight.size() - most;
                var it = inflight.keySet().iterator();
                for (int i = 0; i < stale; i++) {
                    it.next();
                    it.remove();
                }
                lose(stale, "no ack within " + url.ackTimeoutMs + " ms (is there a stream on these subjects?)");
                return;
            }
            try {
                socket.setSoTimeout((int) Math.min(left, Integer.MAX_VALUE));
                readSome();
            } catch (SocketTimeoutException e) {
                /* the deadline check above */
            } catch (IOException e) {
                connectionLost("reading failed: " + e.getMessage());
            }
            answerPings();
        }
    }

    /* One read and the messages it completes; false when the server closed. */
    private boolean readSome() throws IOException {
        if (fill() < 0) {
            connectionLost("the server closed the connection");
            return false;
        }
        parse();
        return socket != null;
    }

    private void parse() {
        while (socket != null) {
            int end = lineEnd(0);
            if (end < 0) {
                if (rxLen > LINE_MAX)
                    connectionLost("a protocol line over " + LINE_MAX + " bytes");
                return;
            }
            String line = new String(rx, 0, end, StandardCharsets.UTF_8);
            if (line.startsWith("MSG ")) {
                String[] head = line.split(" ");
                String last = head[head.length - 1];
                if ((head.length != 4 && head.length != 5) || !last.matches("[0-9]{1,9}") || Integer.parseInt(last) > ACK_MAX) {
                    connectionLost("a malformed MSG line: " + cut(line, 80));
                    return;
                }
                int size = Integer.parseInt(last);
                if (rxLen < end + 2 + size + 2)
                    return; /* the payload is not all here yet */
                String payload = new String(rx, end + 2, size, StandardCharsets.UTF_8);
                consume(end + 2 + size + 2);
                onAck(head[1], payload);
                continue;
            }
            consume(end + 2);
            if (line.equals("PING")) {
                pongs++;
            } else if (line.startsWith("-ERR")) {
                if (firstError == null)
                    firstError = line; /* the server closes the connection after most errors */
            } else if (!(line.equals("PONG") || line.equals("+OK") || line.startsWith("INFO "))) {
                connectionLost("an unexpected protocol line: " + cut(line, 80));
                return;
            }
        }
    }

    private void onAck(String subject, String payload) {
        String token = subject.substring(subject.lastIndexOf('.') + 1);
        if (!token.matches("[0-9]{1,18}") || inflight.remove(Long.parseLong(token)) == null)
            return; /* an ack already counted as lost after a timeout */
        if (payload.contains("\"seq\"") && !payload.contains("\"error\"")) {
            acked++;
            return;
        }
        Matcher d = DESCRIPTION.matcher(payload), c = CODE.matcher(payload);
        if (payload.contains("\"error\"") && d.find())
            lose(1, d.group(1) + " (code " + (c.find() ? c.group(1) : "?") + ")");
        else
            lose(1, "an unexpected reply: " + cut(payload, 80));
    }
}
