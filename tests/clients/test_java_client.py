# SPDX-License-Identifier: MIT
# The Java client against a real recd: builds it with javac and jar (clients/java/build.sh),
# then replays the Python client's test sessions (test_python_client.py) through it, as JSON
# lines fed to tests/clients/java/JsonLinesSender.java, over TCP, UDP and Unix in both encodings,
# and checks the files recd wrote; plus the auth refusal, reconnect with resume, and the encoder
# checks of tests/clients/java/EncoderChecks.java; and reconnect across a recd restart.
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)

from recd_harness import Recd  # noqa: E402
from test_python_client import TOKEN, RecordsAllFormats, onfoot  # noqa: E402

BUILD = tempfile.mkdtemp(prefix="recd_java_client.")


def build():
    subprocess.run(["bash", os.path.join(REPO, "clients", "java", "build.sh"), BUILD], check=True,
                   stdout=subprocess.DEVNULL)
    os.mkdir(os.path.join(BUILD, "test-classes"))
    subprocess.run(["javac", "--release", "17", "-Xlint:all", "-Werror", "-cp",
                    os.path.join(BUILD, "recd-client.jar"), "-d", os.path.join(BUILD, "test-classes"),
                    os.path.join(HERE, "java", "JsonLinesSender.java"),
                    os.path.join(HERE, "java", "EncoderChecks.java")], check=True)


def java(main, *args):
    cp = os.path.join(BUILD, "recd-client.jar") + os.pathsep + os.path.join(BUILD, "test-classes")
    return ["java", "-cp", cp, main, *args]


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

    def test_encoders_without_a_server(self):
        r = subprocess.run(java("recd.client.EncoderChecks"), capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "ok"), r.stderr)

    def test_every_transport_and_encoding(self):
        for transport in ("tcp", "udp", "unix"):
            for encoding in ("binary", "ndjson"):
                with self.subTest(transport=transport, encoding=encoding):
                    self.run_transport(transport, encoding)

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
