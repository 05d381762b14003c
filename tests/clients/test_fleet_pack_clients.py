# SPDX-License-Identifier: MIT
# Packed JetStream messages (docs/fleet.md, "Packed messages") are the same bytes from every
# publisher: librecd's (rectool send --to nats://) and the Python client publish the same sessions
# to a `nats-server -js` started here, the test reads both streams back raw through JetStream's API
# and compares them message by message, and the Java client's FleetPack (tests/clients/java/
# PackDump.java) must give the same messages too. Each session's packs are compared in order (the
# publishers interleave sessions differently), each on its partition's subject PREFIX.<p>.~.
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(REPO, "clients", "python"))
sys.path.insert(0, HERE)

from recd_client import Client, fleet_subject  # noqa: E402
from recd_client.fleet_pack import MAGIC  # noqa: E402
from test_python_client import onfoot, vehicle  # noqa: E402
from test_python_nats import NatsServer  # noqa: E402

PACK_BYTES = 1024
STATES = 150


def sessions():
    """{session: [messages]}: seq numbered from 0 like rectool send numbers them."""
    out = {
        "pka": [{"type": "open", "format": "samp-onfoot", "start_time": 1763213398000}] +
               [dict(onfoot(i), type="state") for i in range(STATES)] + [{"type": "close"}],
        "pkb": [{"type": "open", "format": "samp-vehicle", "start_time": 1763213399000}] +
               [dict(vehicle(i), type="state") for i in range(STATES)] + [{"type": "close"}],
    }
    for key, msgs in out.items():
        out[key] = [dict(m, session=key, seq=i) for i, m in enumerate(msgs)]
    return out


class JetStream:
    """Just enough of the NATS protocol to create a stream and read its messages back raw."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.rx = b""
        self.line()  # INFO
        self.s.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.t 1\r\n')

    def line(self):
        while b"\r\n" not in self.rx:
            chunk = self.s.recv(65536)
            if not chunk:
                raise RuntimeError("nats-server closed the connection")
            self.rx += chunk
        line, self.rx = self.rx.split(b"\r\n", 1)
        return line

    def request(self, subject, body):
        data = json.dumps(body).encode()
        self.s.sendall(b"PUB %s _INBOX.t %d\r\n%s\r\n" % (subject.encode(), len(data), data))
        while True:
            line = self.line()
            if line.startswith(b"PING"):
                self.s.sendall(b"PONG\r\n")
            elif line.startswith(b"MSG"):
                size = int(line.split()[-1])
                while len(self.rx) < size + 2:
                    self.rx += self.s.recv(65536)
                payload, self.rx = self.rx[:size], self.rx[size + 2:]
                return json.loads(payload)

    def add_stream(self, name, subject):
        r = self.request(f"$JS.API.STREAM.CREATE.{name}",
                         {"name": name, "subjects": [subject], "storage": "memory"})
        if "error" in r:
            raise RuntimeError(f"stream {name}: {r['error']}")

    def messages(self, name):
        """[(subject, data)] of the stream, in order."""
        count = self.request(f"$JS.API.STREAM.INFO.{name}", {})["state"]["messages"]
        out = []
        for seq in range(1, count + 1):
            m = self.request(f"$JS.API.STREAM.MSG.GET.{name}", {"seq": seq})["message"]
            out.append((m["subject"], base64.b64decode(m.get("data", ""))))
        return out


def by_session(test, prefix, msgs):
    """{session key: [data]} keeping each session's order, the key read from the pack header;
    checks that each message is on its partition's subject, PREFIX.<p>.~ (4 partitions)."""
    out = {}
    for subject, data in msgs:
        key = data[24:24 + data[3]].decode()
        test.assertEqual(subject, fleet_subject(prefix, key, 4), key)
        out.setdefault(key, []).append(data)
    return out


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class PackedMessagesAreTheSame(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="recd_fleet_pack.")
        self.nats = NatsServer(self.tmp)
        self.js = JetStream(self.nats.port)
        self.query = f"?partitions=4&pack_bytes={PACK_BYTES}&linger=10s"

    def tearDown(self):
        self.js.s.close()
        self.nats.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def publish_c(self):
        files = []
        for key, msgs in sessions().items():
            path = os.path.join(self.tmp, key + ".jsonl")
            with open(path, "w") as f:
                for m in msgs:
                    f.write(json.dumps({k: v for k, v in m.items() if k not in ("session", "seq")}) + "\n")
            files.append(path)
        url = f"nats://127.0.0.1:{self.nats.port}/cpk{self.query}"
        run = subprocess.run([os.environ["RECTOOL"], "send", *files, "--to", url,
                              "--speed", "max"], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def publish_python(self):
        all_msgs = sessions()
        with Client(f"nats://127.0.0.1:{self.nats.port}/ppk{self.query}") as c:
            for i in range(STATES + 2):
                for key in all_msgs:
                    c.send(all_msgs[key][i])
        self.assertEqual(c.messages_lost, 0)

    def java_messages(self):
        if not (shutil.which("javac") and shutil.which("java") and shutil.which("jar")):
            return None
        build = os.path.join(self.tmp, "java")
        subprocess.run(["bash", os.path.join(REPO, "clients", "java", "build.sh"), build],
                       check=True, stdout=subprocess.DEVNULL)
        classes = os.path.join(build, "test-classes")
        jar = os.path.join(build, "recd-client.jar")
        subprocess.run(["javac", "--release", "17", "-cp", jar, "-d", classes,
                        os.path.join(HERE, "java", "JsonLinesSender.java"),
                        os.path.join(HERE, "java", "PackDump.java")], check=True)
        lines = "".join(json.dumps(m) + "\n" for msgs in sessions().values() for m in msgs)
        run = subprocess.run(["java", "-cp", jar + os.pathsep + classes, "recd.client.PackDump",
                              str(PACK_BYTES)], input=lines, capture_output=True, text=True,
                             check=True)
        out = {}
        for line in run.stdout.split():
            data = bytes.fromhex(line)
            key = data[24:24 + data[3]].decode()
            out.setdefault(key, []).append(data)
        return out

    def test_c_python_and_java_pack_alike(self):
        self.js.add_stream("CPK", "cpk.>")
        self.js.add_stream("PPK", "ppk.>")
        self.publish_c()
        self.publish_python()
        c = by_session(self, "cpk", self.js.messages("CPK"))
        py = by_session(self, "ppk", self.js.messages("PPK"))
        self.assertEqual(sorted(c), sorted(py))
        frames = 0
        for key, packs in c.items():
            other = py[key]
            self.assertGreater(len(packs), 5, key)  # packed: several messages of many frames
            self.assertEqual(len(packs), len(other), key)
            for i, (a, b) in enumerate(zip(packs, other)):
                self.assertEqual(a[0], MAGIC, f"{key} message {i}: not packed")
                self.assertTrue(a == b, f"{key} message {i}: C {a[:40].hex()}... "
                                        f"Python {b[:40].hex()}...")
                frames += int.from_bytes(a[4:8], "little")
        self.assertEqual(frames, 2 * (STATES + 2))
        java = self.java_messages()
        if java is None:
            print("note: javac/java/jar not found: the Java client's packs are not compared")
            return
        for key, packs in c.items():
            self.assertEqual(len(java.get(key, [])), len(packs), key)
            for i, (a, b) in enumerate(zip(packs, java[key])):
                self.assertTrue(a == b, f"{key} message {i}: C {a[:40].hex()}... "
                                        f"Java {b[:40].hex()}...")


if __name__ == "__main__":
    unittest.main(verbosity=2)
