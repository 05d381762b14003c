# SPDX-License-Identifier: MIT
# The Python client publishing to NATS JetStream (recd_client/nats.py): its subjects are the ones
# librecd computes (recd_fleet_subject, called through ctypes, and pinned vectors); against a real
# `nats-server -js` and a one-instance recd fleet, sessions published through JetStream come out
# byte-identical to the same sessions sent over TCP; when the server dies mid-run close() reports
# every unconfirmed publish; and publishes kept while the server restarts are delivered. A scripted
# server checks PINGs in the middle of acks, JetStream's refusals and the in-flight bound.
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

from recd_client import Client, PublishError, fleet_partition, fleet_subject  # noqa: E402
from recd_client.nats import parse_nats_url  # noqa: E402
from recd_harness import SLOW, Recd  # noqa: E402
from test_python_client import RecordsAllFormats, onfoot  # noqa: E402

KEYS = ["a", "player-17", "match.42-a_b", "a.b.c-d_e", "lobby-3.alice", "Z", "0",
        "x" * 64, "mc.alex", "_-_", "rec-1", "gen-recap"]


# Run in a child process: a sanitizer-built librecd.so aborts the process that loads it.
_CALL_LIBRECD = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
fn = lib.recd_fleet_subject
fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
               ctypes.c_char_p, ctypes.c_size_t]
fn.restype = ctypes.c_int
part = lib.recd_fleet_partition
part.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32]
part.restype = ctypes.c_uint32
buf = ctypes.create_string_buffer(256)
out = []
for key, parts in json.loads(sys.argv[2]):
    n = fn(b"recd.eu", key.encode(), len(key), parts, buf, len(buf))
    p = part(key.encode(), len(key), parts)
    out.append([key, parts, buf.value.decode() if n >= 0 else n, p])
print(json.dumps(out))
"""


def c_subjects():
    """[(key, partitions, subject, partition)] from librecd's recd_fleet_subject and
    recd_fleet_partition (the subject per session is not exported), or None when the shared
    library cannot be loaded into a plain Python (unset, or a sanitizer build)."""
    path = os.environ.get("RECD_SHARED_LIB")
    if not path or not os.path.exists(path) or os.environ.get("ASAN_OPTIONS"):
        return None
    cases = [[k, p] for k in KEYS for p in (1, 2, 4, 7, 8, 1000, 1024)]
    r = subprocess.run([sys.executable, "-c", _CALL_LIBRECD, path, json.dumps(cases)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)


class Subjects(unittest.TestCase):
    def test_pinned_vectors(self):
        # FNV-1a 32: "" is the offset basis, "a" a published vector (as test_fleet_subject.c).
        self.assertEqual(fleet_partition("", 0xFFFFFFFF), 2166136261 % 0xFFFFFFFF)
        self.assertEqual(fleet_partition("a", 0xFFFFFFFF), 0xE40C292C % 0xFFFFFFFF)
        # One subject per partition by default, the key's in the old layout (subjects=session).
        self.assertEqual(fleet_subject("p", "a.b.c-d_e", 1), "p.0.~")
        self.assertEqual(fleet_subject("recd.eu", "a", 8), f"recd.eu.{0xE40C292C % 8}.~")
        self.assertEqual(fleet_subject("p", "a.b.c-d_e", 1, "session"), "p.0.a~b~c-d_e")
        self.assertEqual(fleet_subject("recd.eu", "a", 8, "session"), f"recd.eu.{0xE40C292C % 8}.a")
        self.assertEqual(fleet_subject("recd.eu", "match.42-a_b", 8, "session"),
                         f"recd.eu.{fleet_partition('match.42-a_b', 8)}.match~42-a_b")
        for bad in (0, 1025):
            with self.assertRaises(ValueError):
                fleet_subject("p", "k", bad)
        with self.assertRaises(ValueError):
            fleet_subject("p", "k", 8, "key")

    def test_same_as_librecd(self):
        want = c_subjects()
        if want is None:
            self.skipTest("librecd.so cannot be loaded here (RECD_SHARED_LIB unset or a "
                          "sanitizer build); the pinned vectors still run")
        self.assertEqual(len(want), len(KEYS) * 7)
        for key, parts, subject, partition in want:
            self.assertEqual(fleet_subject("recd.eu", key, parts), subject, (key, parts))
            self.assertEqual(fleet_subject("recd.eu", key, parts, "session"),
                             f"recd.eu.{partition}.{key.replace('.', '~')}", (key, parts))

    def test_urls(self):
        u = parse_nats_url("nats://127.0.0.1:4333/recd.eu")
        self.assertEqual((u.host, u.port, u.prefix), ("127.0.0.1", 4333, "recd.eu"))
        self.assertEqual(parse_nats_url("nats://nats.example.net/game").port, 4222)
        self.assertEqual(parse_nats_url("nats://[::1]:4222/a-b_c").host, "::1")
        self.assertIsNone(u.subjects)  # the client's default: "partition"
        self.assertEqual(parse_nats_url("nats://h/p?subjects=session").subjects, "session")
        self.assertEqual(parse_nats_url("nats://h/p?subjects=partition").subjects, "partition")
        with self.assertRaisesRegex(ValueError, "subjects=key: expected partition"):
            parse_nats_url("nats://h/p?subjects=key")
        # The URLs recd_fleet_url_parse refuses (test_fleet_subject.c), refused here too.
        for bad in ("tcp://127.0.0.1:1/x", "nats://127.0.0.1:1", "nats://127.0.0.1:1/",
                    "nats://:1/x", "nats://h:0/x", "nats://h:70000/x", "nats://h/a..b",
                    "nats://h/.a", "nats://h/a.", "nats://h/a.*", "nats://h/a>", "nats://[::1/x",
                    "nats://h:/x", "nats://h/a b", "nats://h/" + "a" * 129):
            with self.assertRaises(ValueError, msg=bad):
                parse_nats_url(bad)


class FakeNats:
    """A scripted NATS server on a loopback port, one client: answers the handshake, then for
    each PUB sends a PING first and an ack, or JetStream's error reply for every third publish."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.pongs = 0
        self.pubs = 0
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.listener.accept()
        self.listener.close()
        f = conn.makefile("rb")
        conn.sendall(b'INFO {"server_id":"fake","max_payload":1048576,"jetstream":true}\r\n')
        while True:
            line = f.readline()
            if not line:
                break
            if line.startswith(b"PING"):
                conn.sendall(b"PONG\r\n")
            elif line.startswith(b"PONG"):
                self.pongs += 1
            elif line.startswith(b"PUB "):
                _, subject, reply, size = line.split()
                f.read(int(size) + 2)
                self.pubs += 1
                if self.pubs % 3:
                    ack = b'{"stream":"S","seq":%d}' % self.pubs
                else:
                    ack = b'{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}'
                conn.sendall(b"PING\r\nMSG " + reply + b" 1 " + str(len(ack)).encode() +
                             b"\r\n" + ack + b"\r\n")
        f.close()
        conn.close()


class Protocol(unittest.TestCase):
    def test_pings_and_refusals(self):
        fake = FakeNats()
        c = Client(f"nats://127.0.0.1:{fake.port}/p", max_in_flight=2, ack_timeout=5 * SLOW,
                   pack_bytes=0)  # one frame per publish: the fake refuses every third
        c.open("k", "samp-onfoot")
        for i in range(8):
            c.state("k", **onfoot(i))
            self.assertLessEqual(c._nats.in_flight, 2)
        with self.assertRaises(PublishError) as cm:
            c.close()
        # 9 publishes: the 3rd, 6th and 9th refused by "JetStream", each PING answered.
        self.assertEqual(cm.exception.lost, 3)
        self.assertIn("maximum messages exceeded (code 503)", str(cm.exception))
        self.assertEqual(c._nats.acked, 6)
        fake.thread.join(10)
        self.assertEqual(fake.pongs, 9)


class FixedStart:
    """A client whose opens all carry the same start_time."""

    def __init__(self, client):
        self.client = client

    def open(self, session, format, **fields):
        fields.setdefault("start_time", 1763213398000)
        self.client.open(session, format, **fields)

    def __getattr__(self, name):
        return getattr(self.client, name)


class NatsServer:
    """`nats-server -js` on a free loopback port with a temporary store; config: a
    configuration file (TLS, users) read before the command line's options."""

    def __init__(self, tmp, port=-1, config=None):
        self.tmp = tmp
        self.log_path = os.path.join(tmp, "nats.log")
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(["nats-server"] + (["-c", config] if config else []) +
                                         ["-js", "-a", "127.0.0.1", "-p", str(port),
                                          "-sd", os.path.join(tmp, "js")],
                                         stdout=log, stderr=subprocess.STDOUT)
        found = Recd.wait_until(lambda: re.search(r"client connections on 127\.0\.0\.1:(\d+)",
                                                  self.log()), 20)
        if not found or "Server is ready" not in Recd.wait_until(
                lambda: "Server is ready" in self.log() and self.log(), 20):
            self.kill()
            raise RuntimeError("nats-server did not start:\n" + self.log())
        self.port = int(found.group(1))

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def start_fleet_recd(url, extra_yaml, cleanup, how=""):
    """A recd consuming url, once it has made its stream (publishing before that would find no
    stream to acknowledge). On failure cleanup() runs first; a recd without libnats skips."""
    try:
        recd = Recd(extra_listen=[url], extra_yaml=extra_yaml)
    except RuntimeError as e:
        cleanup()
        if "without NATS support" in str(e):
            raise unittest.SkipTest("recd was built without libnats")
        raise
    if not Recd.wait_until(lambda: "stream RECD_" in recd.log_text(), 30):
        log = recd.log_text()
        recd.cleanup()
        cleanup()
        if "without NATS support" in log:
            raise unittest.SkipTest("recd was built without libnats")
        raise RuntimeError(f"recd did not create its stream{how}:\n" + log)
    return recd


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class PublishToFleet(RecordsAllFormats, unittest.TestCase):
    PREFIX = "pyfleet"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="recd_py_nats.")
        cls.nats = NatsServer(cls.tmp)
        cls.url = f"nats://127.0.0.1:{cls.nats.port}/{cls.PREFIX}"
        # recd's defaults (8 partitions) match the client's: nothing else to configure.
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
        """The same server (port and store) again after a test killed it."""
        if self.nats.proc.poll() is not None:
            type(self).nats = NatsServer(self.tmp, self.nats.port)

    def test_a_sessions_match_tcp_byte_for_byte(self):
        # A fixed start time (the client stamps a Recap open without one with the clock) and
        # recd flushing only at the session's own flush points (flush.interval 1h): the files
        # are then a pure function of the messages.
        with Client(self.recd.url("tcp", "binary")) as c:
            tcp = self.send_all_formats(FixedStart(c), "same")
        with Client(self.url, max_in_flight=16) as c:
            via = self.send_all_formats(FixedStart(c), "fleet")
        self.assertEqual(c.messages_lost, 0)
        self.assertEqual(c._nats.acked, c._nats.published)
        self.assertLess(c._nats.published * 3, c.messages_sent)  # packed: many frames a message
        self.check_files(tcp)
        self.check_files(via)
        self.assert_same_recordings(tcp, via, formats=tcp)

    def test_b_restart_delivers_what_was_kept(self):
        self.ensure_nats()
        # The server restarts between two flushes: what is published meanwhile is kept and
        # published after the reconnect; nothing is lost and recd records every state.
        key = "kept-over-restart"
        c = Client(self.url, reconnect_attempts=10, reconnect_delay=0.1 * SLOW)
        c.open(key, "samp-onfoot", start_time=1763213398000)
        for i in range(10):
            c.state(key, **onfoot(i))
        c._nats.flush()  # every ack in: nothing is in flight when the server dies
        self.nats.kill()
        for i in range(10, 20):  # a server tick each
            c.state(key, **onfoot(i))
            c.flush()
        self.assertEqual(len(c._nats._backlog), 10)  # none of them left: all kept
        type(self).nats = NatsServer(self.tmp, self.nats.port)
        c.close_session(key)
        c.close()
        self.assertEqual(c.messages_lost, 0)
        self.assertGreaterEqual(c._nats.reconnects, 1)
        self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)], 60), self.recd.log_text())
        states = [m for m in self.recd.export(self.recd.files("samp-onfoot", key)[0])
                  if m["type"] == "state"]
        self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(20)])

    def test_c_server_dies_close_reports(self):
        # Dies with publishes in flight and stays down: close() names every unconfirmed one, and
        # a full buffer is reported at once.
        self.ensure_nats()
        key = "dies-mid-run"
        c = Client(self.url, reconnect_attempts=2, reconnect_delay=0.05, buffer_bytes=1500,
                   ack_timeout=2 * SLOW, pack_bytes=0)  # counts publishes: one frame each
        c.open(key, "samp-onfoot")
        for i in range(10):
            c.state(key, **onfoot(i))
        c.flush()  # written, acks not awaited
        self.nats.kill()
        refused, errors = 0, []
        for i in range(10, 40):  # a server tick each: state, flush
            try:
                c.state(key, **onfoot(i))
            except PublishError as e:  # the buffer is full: this message is lost, said at once
                errors.append(str(e))
                refused += 1
            try:
                c.flush()
            except PublishError as e:  # the losses known so far
                errors.append(str(e))
        self.assertGreater(refused, 0)
        self.assertTrue(any("buffer is full" in e for e in errors), errors)
        with self.assertRaises(PublishError) as cm:
            c.close()
        unconfirmed = c.messages_sent + refused - c._nats.acked
        self.assertGreater(unconfirmed, 0)
        self.assertEqual(cm.exception.lost, unconfirmed)
        self.assertEqual(c.messages_lost, unconfirmed)
        self.assertIn(f"{unconfirmed} messages were not confirmed by JetStream", str(cm.exception))
        c.close()  # a second close does not raise again

    def test_d_no_stream_is_reported(self):
        self.ensure_nats()
        c = Client(f"nats://127.0.0.1:{self.nats.port}/nostream", ack_timeout=0.5 * SLOW)
        c.open("nobody", "samp-onfoot")
        with self.assertRaisesRegex(PublishError, r"^1 messages were not confirmed.*no ack"):
            c.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
