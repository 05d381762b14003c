/* SPDX-License-Identifier: MIT */
/* Unit tests of the JetStream publisher's pure parts: nats:// URL parsing (the URLs
 * recd_fleet_url_parse refuses, refused here too) and the subject of a session, pinned to the
 * vectors of tests/lib/test_fleet_subject.c. tests/clients/java_nats.sh compares the subjects
 * with librecd's and publishes through a real nats-server. */
package recd.client;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.List;
import org.junit.Test;

public class NatsUrlTest {
    @Test
    public void subjectsAreLibrecds() {
        /* FNV-1a 32: "" is the offset basis, "a" a published vector. */
        assertEquals((int) (2166136261L % 0xFFFF), NatsUrl.partition("", 0xFFFF));
        assertEquals((int) (0xE40C292CL % 0xFFFF), NatsUrl.partition("a", 0xFFFF));
        assertEquals("p.0.~", NatsUrl.subject("p", "a.b.c-d_e", 1));
        assertEquals("recd.eu." + (0xE40C292CL % 8) + ".~", NatsUrl.subject("recd.eu", "a", 8));
        /* subjects=session: the earlier layout, a subject per session */
        assertEquals("p.0.a~b~c-d_e", NatsUrl.sessionSubject("p", "a.b.c-d_e", 1));
        assertEquals("recd.eu." + (0xE40C292CL % 8) + ".a", NatsUrl.sessionSubject("recd.eu", "a", 8));
        assertFalse(NatsUrl.parse("nats://h/p").sessionSubjects);
        assertTrue(NatsUrl.parse("nats://h/p?subjects=session").sessionSubjects);
        assertEquals(NatsUrl.sessionSubject("p", "a.b", 8),
                     NatsUrl.parse("nats://h/p?subjects=session").subject("a.b"));
        assertEquals("p." + NatsUrl.partition("a.b", 8) + ".~", NatsUrl.parse("nats://h/p").subject("a.b"));
        assertThrows(IllegalArgumentException.class, () -> NatsUrl.subject("p", "k", 0));
        assertThrows(IllegalArgumentException.class, () -> NatsUrl.subject("p", "k", 1025));
    }

    @Test
    public void parsesUrlsAndDefaults() {
        NatsUrl u = NatsUrl.parse("nats://127.0.0.1:4333/recd.eu");
        assertEquals("127.0.0.1", u.host);
        assertEquals(4333, u.port);
        assertEquals("recd.eu", u.prefix);
        assertEquals(8, u.partitions);
        assertEquals(1024, u.maxInFlight);
        assertEquals(64 << 10, u.packBytes);
        assertEquals(20, u.lingerMs);
        assertEquals(10000, u.ackTimeoutMs);
        assertEquals(4222, NatsUrl.parse("nats://nats.example.net/game").port);
        assertEquals("::1", NatsUrl.parse("nats://[::1]:4222/a-b_c").host);
        u = NatsUrl.parse("nats://h/p?partitions=16&ack_timeout=1m30s&pack_bytes=0&linger=5ms&tls_ca=/a%20b/ca.pem");
        assertEquals(16, u.partitions);
        assertEquals(90000, u.ackTimeoutMs);
        assertEquals(0, u.packBytes);
        assertEquals(5, u.lingerMs);
        assertEquals("/a b/ca.pem", u.tlsCa);
        u = NatsUrl.parse("nats://al%40ice:p%3Aw@h:1/p");
        assertEquals("al@ice", u.user);
        assertEquals("p:w", u.password);
        assertNull(u.token);
        assertEquals("secret", NatsUrl.parse("nats://secret@h/p").token);
    }

    @Test
    public void refusesWhatLibrecdRefuses() {
        for (String bad : List.of("tcp://127.0.0.1:1/x", "nats://127.0.0.1:1", "nats://127.0.0.1:1/", "nats://:1/x",
                "nats://h:0/x", "nats://h:70000/x", "nats://h/a..b", "nats://h/.a", "nats://h/a.", "nats://h/a.*",
                "nats://h/a>", "nats://[::1/x", "nats://h:/x", "nats://h/a b", "nats://h/" + "a".repeat(129),
                "nats://h/p?x=1", "nats://h/p?partitions=0", "nats://h/p?pack_bytes=255", "nats://h/p?linger=11s", "nats://h/p?subjects=key",
                "nats://h/p?tls_key=k.pem", "nats://secret@h/p?nkey=seed")) {
            IllegalArgumentException e = assertThrows(bad, IllegalArgumentException.class, () -> NatsUrl.parse(bad));
            assertTrue(e.getMessage(), e.getMessage().startsWith("bad URL"));
            assertFalse(e.getMessage(), e.getMessage().contains("secret"));
        }
    }
}
