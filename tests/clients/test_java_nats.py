# SPDX-License-Identifier: MIT
# The Java client publishing to NATS JetStream (clients/java: NatsUrl, NatsPublisher): its
# subjects are librecd's (recd_fleet_subject through ctypes, the Python client's, pinned vectors)
# and its URL parsing refuses what recd_fleet_url_parse refuses (tests/clients/java/NatsChecks.java);
# against a real `nats-server -js` and a one-instance recd fleet, sessions published from Java,
# packed and one frame per message, come out byte-identical to the same sessions sent over TCP;
# a publish with no stream to ack it, JetStream's refusals (a scripted server that also PINGs
# between acks) and a server that dies are reported as losses, and what is published while the
# server restarts is kept and delivered; an nkey user
# (a seed file, signed with the JDK's Ed25519), a user with a password and TLS with client
# certificates get in, wrong ones are refused; a .creds file's JWT and nonce signature go into
# CONNECT (a scripted server: no operator-mode nats-server here).
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

from recd_client import Client, ed25519, fleet_subject  # noqa: E402
from recd_client.nkeys import generate_user_seed, load_nkey, public_of_seed  # noqa: E402
from recd_harness import SLOW, Recd  # noqa: E402
import test_java_client  # noqa: E402
from test_java_client import JavaSender, java  # noqa: E402
from test_python_client import RecordsAllFormats, onfoot  # noqa: E402
from test_python_nats import (KEYS, FakeNats, FixedStart, NatsServer, c_subjects,  # noqa: E402
                              start_fleet_recd)
from test_python_nats_secure import (PublishOverTls, ScriptedAuthServer, creds_text,  # noqa: E402
                                     js_request, raw_public, unb64url, write)

BUILT = False


def build():
    global BUILT
    if not BUILT:
        test_java_client.build()
        subprocess.run(["javac", "--release", "17", "-Xlint:all", "-Werror", "-cp",
                        os.path.join(test_java_client.BUILD, "recd-client.jar"), "-d",
                        os.path.join(test_java_client.BUILD, "test-classes"),
                        os.path.join(HERE, "java", "NatsChecks.java")], check=True)
        BUILT = True


def tearDownModule():
    shutil.rmtree(test_java_client.BUILD, ignore_errors=True)


def java_subjects(prefix, cases, layout="partition"):
    r = subprocess.run(java("recd.client.NatsChecks", "subjects", prefix, layout),
                       input="".join(f"{k} {p}\n" for k, p in cases), capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return r.stdout.split("\n")[:-1]


def send_one(url, key, states=5, **sender):
    """One samp-onfoot session through the Java client; its result line."""
    j = JavaSender(url, auth=None, **sender)
    j.open(key, "samp-onfoot", start_time=1763213398000)
    for i in range(states):
        j.state(key, **onfoot(i))
    j.close_session(key)
    return j.finish()


class Subjects(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build()

    def test_url_parsing_and_pinned_vectors(self):
        r = subprocess.run(java("recd.client.NatsChecks"), capture_output=True, text=True,
                           timeout=120)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), r.stderr)

    def test_same_as_python_and_librecd(self):
        cases = [(k, p) for k in KEYS for p in (1, 2, 4, 7, 8, 1000, 1024)]
        got = java_subjects("recd.eu", cases)
        self.assertEqual(got, [fleet_subject("recd.eu", k, p) for k, p in cases])
        old = java_subjects("recd.eu", cases, "session")
        self.assertEqual(old, [fleet_subject("recd.eu", k, p, "session") for k, p in cases])
        want = c_subjects()
        if want is None:
            self.skipTest("librecd.so cannot be loaded here (RECD_SHARED_LIB unset or a "
                          "sanitizer build); the Python client's subjects were compared")
        self.assertEqual(got, [s for _, _, s, _ in want])
        self.assertEqual(old, [f"recd.eu.{p}.{k.replace('.', '~')}" for k, _, _, p in want])


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class PublishToFleet(RecordsAllFormats, unittest.TestCase):
    PREFIX = "javafleet"

    @classmethod
    def setUpClass(cls):
        build()
        cls.tmp = tempfile.mkdtemp(prefix="recd_java_nats.")
        cls.nats = NatsServer(cls.tmp)
        cls.url = f"nats://127.0.0.1:{cls.nats.port}/{cls.PREFIX}"
        cls.recd = start_fleet_recd(cls.url, "flush:\n  interval: 1h\n", cls.stop_nats)

    @classmethod
    def stop_nats(cls):
        cls.nats.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        cls.recd.cleanup()
        cls.stop_nats()

    def ensure_nats(self):
        if self.nats.proc.poll() is not None:
            type(self).nats = NatsServer(self.tmp, self.nats.port)

    def same_as_tcp(self, name, url):
        with Client(self.recd.url("tcp", "binary")) as c:
            tcp = self.send_all_formats(FixedStart(c), f"{name}-tcp")
        j = JavaSender(url, auth=None)
        via = self.send_all_formats(FixedStart(j), f"{name}-nats")
        res = j.finish()
        self.assertEqual((res["error"], res["lost"]), (None, 0))
        self.assertEqual(res["acked"], res["published"])
        self.check_files(tcp)
        self.check_files(via)
        self.assert_same_recordings(tcp, via, formats=tcp)
        return res

    def test_a_packed_sessions_match_tcp_byte_for_byte(self):
        self.ensure_nats()
        res = self.same_as_tcp("jpacked", self.url + "?max_in_flight=16")
        self.assertLess(res["published"] * 3, res["sent"])  # packed: many frames a message

    def test_b_one_frame_messages_match_tcp_byte_for_byte(self):
        self.ensure_nats()
        res = self.same_as_tcp("jsingle", self.url + "?pack_bytes=0&max_in_flight=4")
        self.assertEqual(res["published"], res["sent"])

    def test_c_small_packs_and_options(self):
        self.ensure_nats()
        res = send_one(self.url + "?pack_bytes=256&linger=1ms&partitions=8", "jsmall", states=40)
        self.assertEqual((res["error"], res["lost"], res["sent"]), (None, 0, 42))
        self.assertGreater(res["published"], 5)
        self.assertTrue(self.recd.wait_for_files([("samp-onfoot", "jsmall")], 30),
                        self.recd.log_text())
        states = [m for m in self.recd.export(self.recd.files("samp-onfoot", "jsmall")[0])
                  if m["type"] == "state"]
        self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(40)])

    def test_c2_no_stream_is_reported(self):
        self.ensure_nats()
        res = send_one(f"nats://127.0.0.1:{self.nats.port}/nostream?ack_timeout={int(500 * SLOW)}ms",
                       "nobody", states=0)
        self.assertRegex(res["error"] or "", r"^PublishException: 1 messages were not confirmed "
                         r"by JetStream \(first: no ack within")
        self.assertEqual(res["lost"], 1)

    def test_d_restart_delivers_what_was_kept(self):
        self.ensure_nats()
        # The server restarts between two flushes: what is published meanwhile is kept and
        # published after the reconnect; nothing is lost and recd records every state.
        key = "jkept-over-restart"
        j = JavaSender(self.url + "?pack_bytes=0", auth=None)
        j.open(key, "samp-onfoot", start_time=1763213398000)
        for i in range(10):
            j.state(key, **onfoot(i))
        j.line({"cmd": "acks"})  # every ack in: nothing is in flight when the server dies
        self.assertEqual(j.sync(), "synced")
        self.nats.kill()
        for i in range(10, 20):  # a server tick each
            j.state(key, **onfoot(i))
            j.flush()
        self.assertEqual(j.sync(), "synced")
        type(self).nats = NatsServer(self.tmp, self.nats.port)
        j.close_session(key)
        res = j.finish()
        self.assertEqual((res["error"], res["lost"]), (None, 0))
        self.assertGreaterEqual(res["reconnects"], 1)
        self.assertEqual(res["acked"], 22)
        self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)], 60), self.recd.log_text())
        states = [m for m in self.recd.export(self.recd.files("samp-onfoot", key)[0])
                  if m["type"] == "state"]
        self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(20)])

    def test_e_server_dies_close_reports(self):
        self.ensure_nats()
        key = "jdies"
        # The server dies and stays down: what comes after is kept until the reconnect attempts
        # of close() run out, then lost and reported; with a small buffer the first message that
        # does not fit is thrown at once; without waiting for the acks before the kill, what was
        # in flight may be lost first (it is reported either way).
        for buffer, acks in (("8MiB", True), ("1KiB", True), ("8MiB", False)):
            self.ensure_nats()
            j = JavaSender(self.url + f"?pack_bytes=0&ack_timeout={int(2000 * SLOW)}ms"
                           f"&buffer={buffer}", auth=None)
            j.open(key, "samp-onfoot")
            for i in range(10):
                j.state(key, **onfoot(i))
            if acks:
                j.line({"cmd": "acks"})  # nothing in flight when the server dies
            self.assertEqual(j.sync(), "synced")
            self.nats.kill()
            for i in range(10, 40):
                j.state(key, **onfoot(i))
                j.flush()
            res = j.finish()
            if not acks:
                self.assertRegex(res["error"] or "", r"PublishException: \d+ messages were not "
                                 r"confirmed by JetStream \(first: ")
                self.assertGreaterEqual(res["lost"], 1)
                continue
            if buffer == "1KiB":
                self.assertRegex(res["error"] or "", r"PublishException: 1 messages were not "
                                 r"confirmed .*the 1024-byte buffer is full")
                continue
            self.assertRegex(res["error"] or "", r"PublishException: \d+ messages were not "
                             r"confirmed .*reconnecting to nats://127\.0\.0\.1:\d+ failed")
            self.assertEqual(res["lost"], 30)
            self.assertEqual(res["lost"] + res["acked"], res["sent"])

    def test_f_connect_refused_names_the_server(self):
        j = subprocess.run(java("recd.client.JsonLinesSender", "nats://127.0.0.1:1/p", "-"),
                           input="", capture_output=True, text=True, timeout=120)
        self.assertNotEqual(j.returncode, 0)
        self.assertIn("nats://127.0.0.1:1", j.stderr)


class Protocol(unittest.TestCase):
    def test_pings_and_refusals(self):
        # The Python client's scripted server: a PING before every ack, and JetStream's refusal
        # of every third publish.
        build()
        fake = FakeNats()
        res = send_one(f"nats://127.0.0.1:{fake.port}/p?max_in_flight=2&pack_bytes=0"
                       f"&ack_timeout={int(5000 * SLOW)}ms", "k", states=7)
        # 9 publishes: the 3rd, 6th and 9th refused, each PING answered.
        self.assertEqual((res["sent"], res["published"], res["acked"], res["lost"]), (9, 9, 6, 3))
        self.assertRegex(res["error"] or "", r"^PublishException: 3 messages were not confirmed "
                         r"by JetStream \(first: maximum messages exceeded \(code 503\)\)")
        fake.thread.join(10)
        self.assertEqual(fake.pongs, 9)


class CredsOnTheWire(unittest.TestCase):
    """What a .creds file puts in CONNECT: the JWT, and the nonce signed by the JDK's Ed25519
    (checked with the Python client's RFC 8032 code), against a scripted server."""

    def test_connect_carries_jwt_and_nonce_signature(self):
        build()
        seed = generate_user_seed()
        with tempfile.TemporaryDirectory() as tmp:
            creds = write(os.path.join(tmp, "u.creds"), creds_text("eyJh.eyJi.c2ln", seed))
            fake = ScriptedAuthServer()
            j = subprocess.run(java("recd.client.JsonLinesSender",
                                    f"nats://127.0.0.1:{fake.port}/p?creds={creds}", "-"),
                               input="", capture_output=True, text=True, timeout=120)
            fake.thread.join(10)
            got = fake.connect
            self.assertIsNotNone(got, j.stderr)
            self.assertEqual(got["jwt"], "eyJh.eyJi.c2ln")
            self.assertNotIn("nkey", got)
            self.assertEqual(got["lang"], "java")
            pub = raw_public(public_of_seed(seed))
            self.assertTrue(ed25519.verify(pub, b"N0nce-xyz", unb64url(got["sig"])))
            fake = ScriptedAuthServer(refuse=True)
            j = subprocess.run(java("recd.client.JsonLinesSender",
                                    f"nats://127.0.0.1:{fake.port}/p?creds={creds}", "-"),
                               input="", capture_output=True, text=True, timeout=120)
            self.assertRegex(j.stderr, r"refused the credentials of user nkey "
                             r"U[A-Z2-7]+: -ERR 'Authorization Violation'")
            self.assertNotIn(seed, j.stderr)


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class NkeyAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build()
        cls.tmp = tempfile.mkdtemp(prefix="recd_java_nkey.")
        cls.seed = generate_user_seed()
        cls.seed_file = write(os.path.join(cls.tmp, "user.nk"), cls.seed + "\n")
        conf = write(os.path.join(cls.tmp, "nats.conf"),
                     "authorization {\n  users = [\n"
                     f"    {{ nkey: \"{public_of_seed(cls.seed)}\" }},\n"
                     "    { user: alice, password: \"p@ss\" }\n  ]\n}\n")
        cls.nats = NatsServer(cls.tmp, config=conf)
        created = js_request(cls.nats.port, load_nkey(cls.seed_file),
                             "$JS.API.STREAM.CREATE.JNKEY",
                             json.dumps({"name": "JNKEY", "subjects": ["jnkey.>"],
                                         "storage": "memory"}))
        if "error" in created:
            cls.tearDownClass()
            raise RuntimeError(f"stream create: {created}")

    @classmethod
    def tearDownClass(cls):
        cls.nats.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_publish_with_seed_file(self):
        res = send_one(f"nats://127.0.0.1:{self.nats.port}/jnkey?nkey={self.seed_file}", "nk-1",
                       states=20)
        self.assertEqual((res["error"], res["lost"], res["sent"]), (None, 0, 22))
        self.assertEqual(res["acked"], res["published"])
        info = js_request(self.nats.port, load_nkey(self.seed_file), "$JS.API.STREAM.INFO.JNKEY",
                          "")
        self.assertEqual(info["state"]["messages"], res["published"])

    def test_user_and_password(self):
        res = send_one(f"nats://alice:p%40ss@127.0.0.1:{self.nats.port}/jnkey", "pw-1")
        self.assertEqual((res["error"], res["lost"], res["sent"]), (None, 0, 7))

    def test_wrong_credentials_are_refused(self):
        other = write(os.path.join(self.tmp, "other.nk"), generate_user_seed())
        for url, why in ((f"nats://127.0.0.1:{self.nats.port}/jnkey?nkey={other}",
                          r"refused user nkey U[A-Z2-7]{55}: -ERR 'Authorization Violation'"),
                         (f"nats://alice:wrong@127.0.0.1:{self.nats.port}/jnkey",
                          r"refused user 'alice' with its password"),
                         (f"nats://127.0.0.1:{self.nats.port}/jnkey", "requires authentication")):
            j = subprocess.run(java("recd.client.JsonLinesSender", url, "-"), input="",
                               capture_output=True, text=True, timeout=120)
            self.assertNotEqual(j.returncode, 0)
            self.assertRegex(j.stderr, why)
            self.assertNotIn("wrong", j.stderr)


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
@unittest.skipUnless(shutil.which("openssl"), "openssl is not installed: no certificates")
class PublishOverTls(RecordsAllFormats, unittest.TestCase):
    """The TLS nats-server (client certificates verified) and TLS-consuming recd of
    test_python_nats_secure.py, published to from Java."""
    PREFIX = "javatls"
    setUpClass = PublishOverTls.__dict__["setUpClass"]
    tearDownClass = PublishOverTls.__dict__["tearDownClass"]

    def setUp(self):
        build()

    def test_a_sessions_match_tcp_byte_for_byte(self):
        with Client(self.recd.url("tcp", "binary")) as c:
            tcp = self.send_all_formats(FixedStart(c), "jsame")
        j = JavaSender(f"{self.url}?tls_ca={self.ca}&tls_cert={self.cert}&tls_key={self.key}",
                       auth=None)
        via = self.send_all_formats(FixedStart(j), "jtls")
        res = j.finish()
        self.assertEqual((res["error"], res["lost"]), (None, 0))
        self.assertEqual(res["acked"], res["published"])
        self.check_files(tcp)
        self.check_files(via)
        self.assert_same_recordings(tcp, via, formats=tcp)

    def test_b_refusals(self):
        for url, why in ((f"{self.url}?tls_ca={self.other_ca}", "TLS handshake with 127.0.0.1"),
                         (f"nats://localhost:{self.nats.port}/{self.PREFIX}?tls_ca={self.ca}",
                          "TLS handshake with localhost"),
                         (f"{self.url}?tls_ca={self.ca}",
                          "(does the server want a client certificate? tls_cert, tls_key)")):
            j = subprocess.run(java("recd.client.JsonLinesSender", url, "-"), input="",
                               capture_output=True, text=True, timeout=120)
            self.assertNotEqual(j.returncode, 0, url)
            self.assertIn(why, j.stderr, url)
        plain = NatsServer(tempfile.mkdtemp(dir=self.tmp))
        try:
            j = subprocess.run(java("recd.client.JsonLinesSender",
                                    f"nats://127.0.0.1:{plain.port}/p?tls_ca={self.ca}", "-"),
                               input="", capture_output=True, text=True, timeout=120)
            self.assertIn("does not offer it; not connecting in clear text", j.stderr)
        finally:
            plain.kill()


if __name__ == "__main__":
    unittest.main(verbosity=2)
