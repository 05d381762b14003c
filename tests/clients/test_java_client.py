# SPDX-License-Identifier: MIT
# The Java client against a real recd: builds it with javac and jar (clients/java/build.sh),
# then replays the Python client's test sessions (test_python_client.py) through it, as JSON
# lines fed to tests/clients/java/JsonLinesSender.java, over TCP, UDP and Unix in both encodings,
# checks the files recd wrote, and that binary frames and NDJSON give byte-identical carla and
# samp-player files; compares the Java encoder's carla and samp-player frames byte for byte
# with the C library's (rectool send into a socket of the test, tests/clients/java/FrameDump.java);
# plus the auth refusal, reconnect with resume, the encoder checks of
# tests/clients/java/EncoderChecks.java, and reconnect across a recd restart.
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)

from recd_harness import Recd, c_library_frames, carla_edge_messages  # noqa: E402
from test_python_client import (TOKEN, CARLA_EVENTS, CARLA_FRAMES, PLAYER_STATES, RecordsAllFormats,  # noqa: E402
                                carla_open, carla_state, onfoot, player_state, vehicle)

BUILD = tempfile.mkdtemp(prefix="recd_java_client.")


def build():
    subprocess.run(["bash", os.path.join(REPO, "clients", "java", "build.sh"), BUILD], check=True,
                   stdout=subprocess.DEVNULL)
    os.mkdir(os.path.join(BUILD, "test-classes"))
    subprocess.run(["javac", "--release", "17", "-Xlint:all", "-Werror", "-cp",
                    os.path.join(BUILD, "recd-client.jar"), "-d", os.path.join(BUILD, "test-classes"),
                    os.path.join(HERE, "java", "JsonLinesSender.java"),
                    os.path.join(HERE, "java", "EncoderChecks.java"),
                    os.path.join(HERE, "java", "FrameDump.java")], check=True)


def java(main, *args):
    cp = os.path.join(BUILD, "recd-client.jar") + os.pathsep + os.path.join(BUILD, "test-classes")
    return ["java", "-cp", cp, main, *args]


def carla_messages(key):
    out = [dict(carla_open(), type="open", session=key, format="carla")]
    for i in range(CARLA_FRAMES):
        out.append(dict(carla_state(i), type="state", session=key))
        out += [dict(ev, type="event", session=key) for frame, ev in CARLA_EVENTS if frame == i]
    return out + [{"type": "close", "session": key}]


def player_messages(key):
    out = [{"type": "open", "session": key, "format": "samp-player", "start_time": 1763213398000}]
    out += [dict(player_state(i), type="state", session=key) for i in range(PLAYER_STATES)]
    out.append(dict(vehicle(3), type="state", session=key, t=5000, vehicle_model=611, seat=3))
    out.append(dict(vehicle(4), type="state", session=key, t=5040, seat=2))  # model not given
    out.append(dict(vehicle(5), type="state", session=key, t=5080, vehicle_model=400))  # seat not given
    return out + [{"type": "close", "session": key}]


class JavaSender:
    """The Python client's interface, carried out by the Java client in a child process."""

    def __init__(self, url, auth=TOKEN, batch=65536, datagram=1400):
        self.proc = subprocess.Popen(java("recd.client.JsonLinesSender", url, auth or "-", str(batch),
                                          str(datagram)),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.result = None

    def line(self, obj):
        self.proc.stdin.write(json.dumps(obj, separators=(",", ":")) + "\n")

    def send(self, msg):
        self.line(msg)

    def open(self, session, format, **fields):
        self.line(dict(fields, type="open", session=session, format=format))

    def state(self, session, **fields):
        self.line(dict(fields, type="state", session=session))

    def event(self, session, **fields):
        self.line(dict(fields, type="event", session=session))

    def end_member(self, session):
        self.line({"type": "flush", "session": session})

    def close_session(self, session):
        self.line({"type": "close", "session": session})

    def flush(self):
        self.line({"cmd": "flush"})

    def break_connection(self):
        self.line({"cmd": "break"})

    def sync(self):
        self.line({"cmd": "sync"})
        return self.proc.stdout.readline().strip()

    def finish(self):
        out, _ = self.proc.communicate(timeout=120)
        self.result = json.loads(out.strip().splitlines()[-1])
        return self.result


class JavaClientAgainstRecd(RecordsAllFormats, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build()
        cls.recd = Recd(token=TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.recd.cleanup()
        subprocess.run(["rm", "-rf", BUILD])

    def run_transport(self, transport, encoding, **opts):
        j = JavaSender(self.recd.url(transport, encoding), **opts)
        ses = self.send_all_formats(j, f"java-{transport}-{encoding}-{opts.get('batch', 0)}")
        res = j.finish()
        self.assertIsNone(res["error"])
        self.assertEqual(res["lost"], 0)
        self.check_files(ses)
        return ses

    def test_binary_frames_equal_the_c_librarys(self):
        # Byte for byte, for carla and samp-player: each message's frame from the Java encoder
        # against the one the C library's client sends for the same JSON line.
        for name, msgs in (("java-frames-carla", carla_messages("java-frames-carla")),
                           ("java-frames-carla-edges", carla_edge_messages("java-frames-carla-edges")),
                           ("java-frames-player", player_messages("java-frames-player"))):
            with self.subTest(name):
                path = os.path.join(BUILD, name + ".jsonl")
                with open(path, "w") as f:
                    f.writelines(json.dumps(m) + "\n" for m in msgs)
                with open(path) as f:
                    dump = subprocess.run(java("recd.client.FrameDump"), stdin=f, capture_output=True, text=True)
                self.assertEqual(dump.returncode, 0, dump.stderr)
                java_frames = dump.stdout.split("\n")[:-1]
                c_frames = c_library_frames(path, name)
                self.assertEqual(len(java_frames), len(msgs))
                self.assertEqual(len(c_frames), len(msgs))
                for i, (j, c) in enumerate(zip(java_frames, c_frames)):
                    self.assertEqual(j, c, f"message {i}: {json.dumps(msgs[i])[:200]}")

    def test_encoders_without_a_server(self):
        r = subprocess.run(java("recd.client.EncoderChecks"), capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), r.stderr)

    def test_every_transport_and_encoding(self):
        for transport in ("tcp", "udp", "unix"):
            ses = {}
            for encoding in ("binary", "ndjson"):
                with self.subTest(transport=transport, encoding=encoding):
                    ses[encoding] = self.run_transport(transport, encoding)
            if len(ses) == 2:
                with self.subTest(transport=transport, same_files="binary and ndjson"):
                    self.assert_same_recordings(ses["binary"], ses["ndjson"])

    def test_small_batches(self):
        self.run_transport("tcp", "binary", batch=100, datagram=200)
        self.run_transport("udp", "binary", batch=100, datagram=200)

    def test_without_token_refused(self):
        j = JavaSender(self.recd.url("unix", "binary"), auth=None)
        j.open("java-no-token", "samp-onfoot")
        res = j.finish()
        self.assertIn("ServerErrorException", res["error"] or "")
        self.assertIn("auth", res["error"])

    def test_reconnect_resumes_session(self):
        for transport in ("tcp", "unix"):
            for encoding in ("binary", "ndjson"):
                key = f"java-reconnect-{transport}-{encoding}"
                j = JavaSender(self.recd.url(transport, encoding))
                j.open(key, "samp-onfoot")
                for i in range(30):
                    j.state(key, **onfoot(i))
                    if i == 9:
                        j.flush()
                        j.break_connection()
                    if i == 19:
                        j.flush()  # fails, reconnects, resumes, sends the batch again
                j.close_session(key)
                res = j.finish()
                self.assertEqual((res["error"], res["reconnects"], res["lost"]), (None, 1, 0))
                self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)]), self.recd.log_text())
                files = self.recd.files("samp-onfoot", key)
                self.assertEqual(len(files), 1, files)
                states = [m for m in self.recd.export(files[0]) if m["type"] == "state"]
                self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(30)])

    def test_reconnect_after_recd_restarts(self):
        def finish(j):
            res = j.finish()
            self.assertIsNone(res["error"])
            return res["reconnects"]

        self.reconnect_after_restart(
            "java-restart", lambda r: JavaSender(r.url("tcp", "ndjson")),
            lambda j: self.assertEqual(j.sync(), "synced"), finish)


if __name__ == "__main__":
    unittest.main(verbosity=2)
