/* SPDX-License-Identifier: MIT */
/* NATS credentials for the JetStream publisher: a .creds file (user JWT and nkey seed), a user's
 * nkey seed file, USER:PASSWORD@ or TOKEN@; and the CONNECT fields that answer the server's
 * nonce. nkeys are Ed25519 keys written as base32 with a type prefix and a CRC-16/XMODEM
 * trailer; the JDK signs with Ed25519 (java.security, Java 15 and later). */
package recd.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.NamedParameterSpec;
import java.util.Arrays;
import java.util.Base64;

final class NatsCredentials {
    static final int FILE_MAX = 64 * 1024;
    static final int PREFIX_SEED = 18 << 3; /* 'S' */
    static final int PREFIX_USER = 20 << 3; /* 'U' */
    private static final String B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    private final String jwt, user, password, token;
    private final KeyPair keys; /* the user's nkey, null without one */

    private NatsCredentials(String jwt, KeyPair keys, String user, String password, String token) {
        this.jwt = jwt;
        this.keys = keys;
        this.user = user;
        this.password = password;
        this.token = token;
    }

    /* What the URL gives (NatsUrl.parse allows one source at most); null for none. */
    static NatsCredentials of(NatsUrl url) throws IOException {
        if (url.creds != null) {
            String text = read(url.creds, "creds file");
            String jwt = block(text, "JWT"), seed = block(text, "SEED");
            if (jwt == null || jwt.chars().filter(c -> c == '.').count() != 2)
                throw new IOException("creds file " + url.creds + ": no user JWT (a '-----BEGIN NATS USER JWT-----' line followed by the JWT)");
            if (seed == null)
                throw new IOException("creds file " + url.creds + ": no seed (a '-----BEGIN USER NKEY SEED-----' line followed by SU...)");
            return new NatsCredentials(jwt, userKeys(seed, "creds file " + url.creds), null, null, null);
        }
        if (url.nkey != null) {
            String text = read(url.nkey, "nkey seed file");
            String seed = block(text, "SEED");
            return new NatsCredentials(null, userKeys(seed != null ? seed : text.strip(), "nkey seed file " + url.nkey),
                    null, null, null);
        }
        if (url.user != null)
            return new NatsCredentials(null, null, url.user, url.password, null);
        if (url.token != null)
            return new NatsCredentials(null, null, null, null, url.token);
        return null;
    }

    /* Appends ,"jwt"/"nkey","sig" or ,"user","pass" or ,"auth_token" to a CONNECT object. */
    void connectFields(StringBuilder c, String nonce) throws IOException {
        if (keys != null) {
            if (jwt != null)
                Json.string(c.append(",\"jwt\":"), jwt);
            else
                Json.string(c.append(",\"nkey\":"), publicKey());
            if (nonce != null && !nonce.isEmpty()) {
                try {
                    Signature s = Signature.getInstance("Ed25519");
                    s.initSign(keys.getPrivate());
                    s.update(nonce.getBytes(StandardCharsets.UTF_8));
                    Json.string(c.append(",\"sig\":"), Base64.getUrlEncoder().withoutPadding().encodeToString(s.sign()));
                } catch (GeneralSecurityException e) {
                    throw new IOException("signing the server's nonce with Ed25519: " + e.getMessage(), e);
                }
            }
        }
        if (user != null) {
            Json.string(c.append(",\"user\":"), user);
            Json.string(c.append(",\"pass\":"), password != null ? password : "");
        }
        if (token != null)
            Json.string(c.append(",\"auth_token\":"), token);
    }

    /* For messages: never the password, token or seed. */
    String who() {
        if (jwt != null)
            return "the credentials of user nkey " + publicKey();
        if (keys != null)
            return "user nkey " + publicKey();
        if (user != null)
            return "user '" + user + "' with its password";
        return "the token";
    }

    /** The public nkey (U...) of the user's key. */
    String publicKey() {
        byte[] x509 = keys.getPublic().getEncoded(); /* the raw 32-byte key ends the encoding */
        byte[] raw = new byte[33];
        raw[0] = (byte) PREFIX_USER;
        System.arraycopy(x509, x509.length - 32, raw, 1, 32);
        return base32(withCrc(raw));
    }

    // ---- nkeys ----

    static int crc16(byte[] data, int len) {
        int crc = 0;
        for (int i = 0; i < len; i++) {
            crc ^= (data[i] & 0xFF) << 8;
            for (int b = 0; b < 8; b++)
                crc = ((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xFFFF;
        }
        return crc;
    }

    private static byte[] withCrc(byte[] raw) {
        byte[] out = Arrays.copyOf(raw, raw.length + 2);
        int crc = crc16(raw, raw.length);
        out[raw.length] = (byte) crc;
        out[raw.length + 1] = (byte) (crc >> 8);
        return out;
    }

    static String base32(byte[] data) {
        StringBuilder sb = new StringBuilder();
        int buf = 0, bits = 0;
        for (byte b : data) {
            buf = (buf << 8) | (b & 0xFF);
            bits += 8;
            while (bits >= 5) {
                sb.append(B32.charAt((buf >> (bits - 5)) & 31));
                bits -= 5;
            }
        }
        if (bits > 0)
            sb.append(B32.charAt((buf << (5 - bits)) & 31));
        return sb.toString();
    }

    static byte[] unbase32(String text, String what) throws IOException {
        byte[] out = new byte[text.length() * 5 / 8];
        int buf = 0, bits = 0, n = 0;
        for (char ch : text.toCharArray()) {
            int v = B32.indexOf(ch);
            if (v < 0)
                throw new IOException(what + ": not base32 (A-Z, 2-7)");
            buf = (buf << 5) | v;
            bits += 5;
            if (bits >= 8) {
                out[n++] = (byte) (buf >> (bits - 8));
                bits -= 8;
            }
        }
        return out;
    }

    /* The Ed25519 key pair of a user seed (SU...); IOException naming what is wrong. */
    static KeyPair userKeys(String text, String what) throws IOException {
        text = text.strip();
        if (!text.startsWith("S"))
            throw new IOException(what + ": a seed starts with 'S' (like SU... for a user), not '"
                    + text.substring(0, Math.min(2, text.length())) + "'");
        byte[] raw = unbase32(text, what);
        if (raw.length != 36)
            throw new IOException(what + ": " + raw.length + " bytes after base32, a seed has 36");
        if (crc16(raw, 34) != ((raw[34] & 0xFF) | (raw[35] & 0xFF) << 8))
            throw new IOException(what + ": the checksum does not match (a mistyped or truncated seed)");
        if ((raw[0] & 0xF8) != PREFIX_SEED)
            throw new IOException(what + ": not a seed");
        int prefix = ((raw[0] & 7) << 5) | ((raw[1] & 0xFF) >> 3);
        if (prefix != PREFIX_USER)
            throw new IOException(what + ": not a user seed (SU...)");
        byte[] seed = Arrays.copyOfRange(raw, 2, 34);
        try {
            /* The JDK derives a key pair from 32 random bytes: give it the seed as those bytes. */
            KeyPairGenerator g = KeyPairGenerator.getInstance("Ed25519");
            g.initialize(NamedParameterSpec.ED25519, new SeedRandom(seed));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IOException(what + ": Ed25519 is not available: " + e.getMessage(), e);
        }
    }

    /* A "random" source that yields one fixed seed, for KeyPairGenerator. */
    private static final class SeedRandom extends SecureRandom {
        private static final long serialVersionUID = 1L;
        private final byte[] seed;

        SeedRandom(byte[] seed) { this.seed = seed; }

        @Override
        public void nextBytes(byte[] bytes) {
            if (bytes.length != seed.length)
                throw new IllegalStateException("Ed25519 asked for " + bytes.length + " bytes");
            System.arraycopy(seed, 0, bytes, 0, bytes.length);
        }
    }

    private static String read(String path, String what) throws IOException {
        byte[] data;
        try (InputStream f = Files.newInputStream(Path.of(path))) {
            data = f.readNBytes(FILE_MAX + 1);
        } catch (IOException e) {
            throw new IOException(what + " " + path + ": " + e.getMessage(), e);
        }
        if (data.length > FILE_MAX)
            throw new IOException(what + " " + path + ": larger than " + FILE_MAX + " bytes");
        return new String(data, StandardCharsets.US_ASCII);
    }

    /* The first non-empty line after a '---...BEGIN ...word...---' line. */
    private static String block(String text, String word) {
        String[] lines = text.split("\r?\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith("---") && lines[i].contains("BEGIN") && lines[i].contains(word)) {
                for (int j = i + 1; j < lines.length; j++) {
                    if (!lines[j].isBlank())
                        return lines[j].startsWith("---") ? null : lines[j].strip();
                }
            }
        }
        return null;
    }
}
