/* SPDX-License-Identifier: MIT */
/* TLS for tls:// URLs with the JDK's SSLSocket: TLS 1.2 or 1.3, trust from the URL's ca= (PEM)
 * or the JDK's default store, a client certificate from cert= and key= (PEM, PKCS#8 key), and
 * the server's name always checked (endpoint identification "HTTPS", SNI for DNS names). There is
 * no option that turns a check off (docs/wire.md, "TLS"). As a ByteChannel for RecdClient. */
package recd.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

final class TlsChannel implements ByteChannel {
    private final SSLSocket socket;
    private final InputStream in;
    private final OutputStream out;

    private TlsChannel(SSLSocket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /* Connects and completes the handshake within timeoutMs; a refused certificate throws
     * before any byte of ours is sent. */
    static TlsChannel connect(WireUrl url, int timeoutMs) throws IOException {
        SSLContext ctx = context(url);
        String name = url.tlsServerName != null ? url.tlsServerName : url.host;
        Socket raw = new Socket();
        try {
            raw.connect(new InetSocketAddress(url.host, url.port), timeoutMs);
        } catch (IOException e) {
            raw.close();
            throw new IOException("cannot connect to " + url.host + " port " + url.port + ": " + e.getMessage(), e);
        }
        raw.setTcpNoDelay(true); /* we batch ourselves */
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(raw, name, url.port, true);
        try {
            SSLParameters p = s.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS"); /* the certificate must name the server */
            if (!isAddress(name))
                p.setServerNames(List.of(new SNIHostName(name)));
            p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            s.setSSLParameters(p);
            s.setSoTimeout(timeoutMs);
            s.startHandshake();
            s.setSoTimeout(0);
            return new TlsChannel(s);
        } catch (IOException e) {
            s.close();
            throw new SSLException("TLS handshake with " + name + " port " + url.port + " failed: "
                    + e.getMessage(), e);
        }
    }

    /* The TLS handshake on a connected socket (NATS upgrades after its INFO line), with the same
     * checks as connect(): the certificate must chain to the trust and name the server. */
    static SSLSocket upgrade(SSLContext ctx, Socket raw, String name, int port, int timeoutMs) throws IOException {
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(raw, name, port, true);
        try {
            SSLParameters p = s.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            if (!isAddress(name))
                p.setServerNames(List.of(new SNIHostName(name)));
            p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            s.setSSLParameters(p);
            s.setSoTimeout(timeoutMs);
            s.startHandshake();
            return s;
        } catch (IOException e) {
            s.close();
            throw new SSLException("TLS handshake with " + name + " port " + port + " failed: " + e.getMessage(), e);
        }
    }

    private static boolean isAddress(String name) {
        return name.contains(":") || name.matches("[0-9.]+");
    }

    private static SSLContext context(WireUrl url) throws IOException {
        return context(url.tlsCa, url.tlsCert, url.tlsKey);
    }

    /* Trust from caFile (else the JDK's default store), a client certificate from certFile and
     * keyFile (else the key in certFile); each may be null. */
    static SSLContext context(String caFile, String certFile, String keyFile) throws IOException {
        try {
            TrustManagerFactory tmf = null;
            if (caFile != null) {
                KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
                trust.load(null, null);
                int i = 0;
                for (Certificate c : certificates(caFile))
                    trust.setCertificateEntry("ca" + i++, c);
                tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                tmf.init(trust);
            }
            KeyManagerFactory kmf = null;
            if (certFile != null) {
                KeyStore id = KeyStore.getInstance(KeyStore.getDefaultType());
                id.load(null, null);
                char[] none = new char[0];
                id.setKeyEntry("client", privateKey(keyFile != null ? keyFile : certFile), none,
                        certificates(certFile).toArray(new Certificate[0]));
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(id, none);
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf != null ? kmf.getKeyManagers() : null, tmf != null ? tmf.getTrustManagers() : null, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("TLS set-up: " + e.getMessage(), e);
        }
    }

    private static List<Certificate> certificates(String file) throws IOException, GeneralSecurityException {
        try (InputStream f = Files.newInputStream(Path.of(file))) {
            List<Certificate> got = new ArrayList<>(CertificateFactory.getInstance("X.509").generateCertificates(f));
            if (got.isEmpty())
                throw new IOException(file + ": no PEM certificate in it");
            return got;
        }
    }

    /* A PEM "PRIVATE KEY" (PKCS#8, what openssl 3 writes), RSA, EC or Ed25519. */
    private static PrivateKey privateKey(String file) throws IOException, GeneralSecurityException {
        String pem = Files.readString(Path.of(file), StandardCharsets.US_ASCII);
        int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----"), end = pem.indexOf("-----END PRIVATE KEY-----");
        if (begin < 0 || end < begin)
            throw new IOException(file + ": no PKCS#8 \"BEGIN PRIVATE KEY\" block (convert the key with "
                    + "openssl pkcs8 -topk8 -nocrypt)");
        byte[] der = Base64.getMimeDecoder().decode(pem.substring(begin + 27, end));
        GeneralSecurityException last = null;
        for (String alg : new String[] {"EC", "RSA", "Ed25519", "RSASSA-PSS"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new IOException(file + ": not an RSA, EC or Ed25519 key", last);
    }

    @Override
    public int write(ByteBuffer b) throws IOException {
        int n = b.remaining();
        if (b.hasArray()) {
            out.write(b.array(), b.arrayOffset() + b.position(), n);
            b.position(b.limit());
        } else {
            byte[] copy = new byte[n];
            b.get(copy);
            out.write(copy);
        }
        out.flush();
        return n;
    }

    @Override
    public int read(ByteBuffer b) throws IOException {
        byte[] chunk = new byte[Math.min(b.remaining(), 16384)];
        int r = in.read(chunk);
        if (r > 0)
            b.put(chunk, 0, r);
        return r;
    }

    /* Up to buf.length - off bytes within timeoutMs: the count, -1 when the server closed, 0 on
     * timeout; a TLS alert or a reset throws. */
    int readWithin(byte[] buf, int off, long timeoutMs) throws IOException {
        socket.setSoTimeout((int) Math.max(1, Math.min(timeoutMs, Integer.MAX_VALUE)));
        try {
            return in.read(buf, off, Math.max(1, buf.length - off));
        } catch (SocketTimeoutException e) {
            return 0;
        } finally {
            if (!socket.isClosed())
                socket.setSoTimeout(0);
        }
    }

    /* close_notify: nothing more is written, the server's reply can still be read (TLS 1.3).
     * A server already gone makes it fail: the reply read next says why (its alert). */
    void shutdownOutput() {
        try {
            socket.shutdownOutput();
        } catch (IOException e) {
            /* see above */
        }
    }

    void shutdownInput() throws IOException { socket.getInputStream().close(); }

    @Override
    public boolean isOpen() { return !socket.isClosed(); }

    @Override
    public void close() throws IOException { socket.close(); }
}
