/* SPDX-License-Identifier: MIT */
/* Test driver for the Java client's NATS side without a server: with no argument, checks nats://
 * URL parsing (the URLs recd_fleet_url_parse refuses, refused here too), the pinned subject
 * vectors of test_fleet_subject.c and nkey seeds, and prints "ok"; with "subjects PREFIX LAYOUT",
 * reads "KEY PARTITIONS" lines on stdin and prints each subject in that layout (partition or
 * session; test_java_nats.py compares them with librecd's and the Python client's).
 * Usage: java -cp recd-client.jar:classes recd.client.NatsChecks [subjects PREFIX LAYOUT] */
package recd.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;

public final class NatsChecks {
    private static void check(boolean ok, String what) {
        if (!ok)
            throw new AssertionError(what);
    }

    private static void refused(String url) {
        try {
            NatsUrl.parse(url);
        } catch (IllegalArgumentException e) {
            check(e.getMessage().startsWith("bad URL"), url + ": " + e.getMessage());
            check(!e.getMessage().contains("secret"), url + ": the message shows the secret: " + e.getMessage());
            return;
        }
        throw new AssertionError(url + ": accepted");
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("subjects")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
            boolean session = args[2].equals("session");
            for (String line; (line = in.readLine()) != null;) {
                String[] kp = line.split(" ");
                int parts = Integer.parseInt(kp[1]);
                System.out.println(session ? NatsUrl.sessionSubject(args[1], kp[0], parts)
                                           : NatsUrl.subject(args[1], kp[0], parts));
            }
            return;
        }
        /* FNV-1a 32: "" is the offset basis, "a" a published vector (as test_fleet_subject.c). */
        check(NatsUrl.partition("", 0xFFFF) == (int) (2166136261L % 0xFFFF), "fnv of \"\"");
        check(NatsUrl.partition("a", 0xFFFF) == (int) (0xE40C292CL % 0xFFFF), "fnv of \"a\"");
        check(NatsUrl.subject("p", "a.b.c-d_e", 1).equals("p.0.~"), "subject of a partition");
        check(NatsUrl.subject("recd.eu", "a", 8).equals("recd.eu." + (0xE40C292CL % 8) + ".~"), "subject of a");
        check(NatsUrl.sessionSubject("p", "a.b.c-d_e", 1).equals("p.0.a~b~c-d_e"), "session subject with dots");
        check(NatsUrl.sessionSubject("recd.eu", "a", 8).equals("recd.eu." + (0xE40C292CL % 8) + ".a"),
              "session subject of a");
        check(!NatsUrl.parse("nats://h/p").sessionSubjects, "subjects=partition by default");
        check(NatsUrl.parse("nats://h/p?subjects=session").subject("a.b").equals(
              NatsUrl.sessionSubject("p", "a.b", 8)), "subjects=session");
        for (int bad : new int[] {0, 1025}) {
            try {
                NatsUrl.subject("p", "k", bad);
                throw new AssertionError("partitions " + bad + " accepted");
            } catch (IllegalArgumentException e) {
                /* refused */
            }
        }
        NatsUrl u = NatsUrl.parse("nats://127.0.0.1:4333/recd.eu");
        check(u.host.equals("127.0.0.1") && u.port == 4333 && u.prefix.equals("recd.eu"), "host, port, prefix");
        check(u.partitions == 8 && u.maxInFlight == 1024 && u.packBytes == 64 << 10 && u.lingerMs == 20
                && u.ackTimeoutMs == 10000 && u.bufferBytes == 8 << 20, "defaults");
        check(NatsUrl.parse("nats://nats.example.net/game").port == 4222, "default port");
        check(NatsUrl.parse("nats://[::1]:4222/a-b_c").host.equals("::1"), "IPv6");
        u = NatsUrl.parse("nats://h/p?partitions=16&max_in_flight=5&buffer=1MiB&ack_timeout=1m30s&pack_bytes=0"
                + "&linger=5ms&encoding=binary&tls_ca=/a%20b/ca.pem&tls_cert=c.pem&tls_key=k.pem&tls_name=n.example");
        check(u.partitions == 16 && u.maxInFlight == 5 && u.bufferBytes == 1 << 20 && u.ackTimeoutMs == 90000
                && u.packBytes == 0 && u.lingerMs == 5, "options");
        check(u.tlsCa.equals("/a b/ca.pem") && u.tlsCert.equals("c.pem") && u.tlsKey.equals("k.pem")
                && u.tlsName.equals("n.example"), "TLS options, percent-decoded");
        check(NatsUrl.parse("nats://h/p?pack_bytes=256").packBytes == 256, "pack_bytes 256");
        check(NatsUrl.parse("nats://h/p?pack_bytes=512KiB").packBytes == 512 << 10, "pack_bytes 512KiB");
        u = NatsUrl.parse("nats://al%40ice:p%3Aw@h:1/p");
        check(u.user.equals("al@ice") && u.password.equals("p:w") && u.token == null, "user and password");
        u = NatsUrl.parse("nats://secret@h:1/p");
        check(u.token.equals("secret") && u.user == null, "token");
        check(NatsUrl.parse("nats://u:@h/p").password.isEmpty(), "an empty password");
        for (String bad : List.of("tcp://127.0.0.1:1/x", "nats://127.0.0.1:1", "nats://127.0.0.1:1/",
                "nats://:1/x", "nats://h:0/x", "nats://h:70000/x", "nats://h/a..b", "nats://h/.a", "nats://h/a.",
                "nats://h/a.*", "nats://h/a>", "nats://[::1/x", "nats://h:/x", "nats://h/a b", "nats://h/" + "a".repeat(129),
                "nats://h/p#f", "nats://h/p?x=1", "nats://h/p?partitions=0", "nats://h/p?partitions=1025",
                "nats://h/p?partitions=8&partitions=8", "nats://h/p?pack_bytes=255", "nats://h/p?pack_bytes=513KiB",
                "nats://h/p?linger=0ms", "nats://h/p?linger=11s", "nats://h/p?ack_timeout=2h", "nats://h/p?ack_timeout=1s1m",
                "nats://h/p?buffer=1023", "nats://h/p?encoding=ndjson", "nats://h/p?subjects=key", "nats://h/p?tls_key=k.pem",
                "nats://h/p?tls_ca=", "nats://h/p?max_in_flight=0", "nats://@h/p", "nats://:secret@h/p",
                "nats://secret@h/p?nkey=seed", "nats://u:secret@h/p?creds=c.creds", "nats://h/p?creds=a&nkey=b"))
            refused(bad);
        /* nkeys: a seed's CRC and type are checked; its public key is the user's. */
        check(NatsCredentials.crc16("123456789".getBytes(StandardCharsets.US_ASCII), 9) == 0x31C3, "CRC-16/XMODEM");
        check(NatsCredentials.base32(new byte[] {'f', 'o', 'o', 'b', 'a'}).equals("MZXW6YTB"), "base32");
        String seed = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU";
        try {
            NatsCredentials.userKeys(seed.substring(0, seed.length() - 1) + "A", "seed");
            throw new AssertionError("a seed with a wrong checksum accepted");
        } catch (IOException e) {
            check(e.getMessage().contains("checksum") || e.getMessage().contains("bytes"), e.getMessage());
        }
        System.out.println("ok");
    }
}
