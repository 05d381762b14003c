# SPDX-License-Identifier: MIT
# Starts a real recd for the client tests: TCP, UDP and Unix listeners on free loopback ports
# (port 0, read back with --print-ports), a temporary output root, an optional auth token; stops
# it with SIGTERM so every file is finalized; reads the files back with rectool. Also what the
# clients' encoders are compared with: the frames the C library sends, and CARLA's edge values.
import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time

# Sanitizer builds start and stop slowly on a busy 2-core machine.
SLOW = 4 if os.environ.get("ASAN_OPTIONS") or "asan" in os.environ.get("RECD", "") else 1


class Recd:
    def __init__(self, token=None, extra_yaml="", extra_listen=()):
        self.recd = os.environ["RECD"]
        self.rectool = os.environ["RECTOOL"]
        self.tmp = tempfile.mkdtemp(prefix="recd_clients.")
        self.root = os.path.join(self.tmp, "recordings")
        os.mkdir(self.root)
        self.sock_path = os.path.join(self.tmp, "recd.sock")
        self.token, self.extra_yaml = token, extra_yaml
        self.extra_listen = list(extra_listen)  # more listen: URLs (nats://), not announced
        self.log = open(os.path.join(self.tmp, "recd.log"), "w+")
        self.urls = {}
        self.start("tcp://127.0.0.1:0", "udp://127.0.0.1:0")

    def start(self, tcp, udp):
        cfg = os.path.join(self.tmp, "recd.yaml")
        with open(cfg, "w") as f:
            f.write(f"listen:\n  - {tcp}\n  - {udp}\n  - unix://{self.sock_path}\n"
                    + "".join(f"  - {u}\n" for u in self.extra_listen) +
                    f"output:\n  root: {self.root}\nmetrics:\n  enabled: false\n")
            if self.token:
                f.write(f"auth:\n  token: {self.token}\n")
            f.write(self.extra_yaml)
        self.proc = subprocess.Popen([self.recd, "--config", cfg, "--print-ports"],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.urls = {}
        deadline = time.monotonic() + 60 * SLOW
        sockets = ("tcp", "udp", "unix")
        while sum(k in self.urls for k in sockets) < 3 and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("listen "):
                url = line.split()[1]
                self.urls[url.split(":", 1)[0]] = url
        if sum(k in self.urls for k in sockets) < 3:
            self.stop()
            raise RuntimeError("recd did not start:\n" + self.log_text())

    def restart(self):
        """Stops recd (every file is finalized) and starts it again on the same addresses."""
        tcp, udp = self.urls["tcp"], self.urls["udp"]
        self.stop()
        self.start(tcp, udp)

    def url(self, transport, encoding):
        return f"{self.urls[transport]}?encoding={encoding}"

    def log_text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def files(self, fmt, session, final_only=True):
        d = os.path.join(self.root, fmt, session)
        if not os.path.isdir(d):
            return []
        return sorted(os.path.join(d, n) for n in os.listdir(d)  # seek indexes (.idx) left out
                      if not n.endswith(".idx") and not (final_only and n.endswith(".part")))

    @staticmethod
    def wait_until(pred, timeout=30):
        """Polls pred() until it returns something true (returned) or timeout * SLOW passes (None)."""
        deadline = time.monotonic() + timeout * SLOW
        while time.monotonic() < deadline:
            got = pred()
            if got:
                return got
            time.sleep(0.05)
        return None

    def wait_for_files(self, wanted, timeout=30):
        """wanted: (format, session) pairs; waits until each has a finalized file."""
        return bool(self.wait_until(lambda: all(self.files(f, s) for f, s in wanted), timeout))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60 * SLOW)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode

    def cleanup(self):
        self.stop()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def export(self, path):
        """rectool verify, then the file's messages from rectool export --to jsonl."""
        v = subprocess.run([self.rectool, "verify", path], capture_output=True, text=True)
        if v.returncode != 0:
            raise AssertionError(f"rectool verify {path}: {v.stdout}{v.stderr}")
        e = subprocess.run([self.rectool, "export", path, "--to", "jsonl"],
                           capture_output=True, text=True)
        if e.returncode != 0:
            raise AssertionError(f"rectool export {path}: {e.stderr}")
        return [json.loads(line) for line in e.stdout.splitlines() if line.strip()]


def carla_edge_messages(key):
    """An f64 log of 0.9.13 and the numbers at the edges: NaN payloads as bits (f32 and f64,
    signalling ones too), -0.0, subnormals, f32's largest, the largest frame counter, an unparsed
    packet of a known kind and a raw one."""
    positions = struct.pack("<HI6d", 1, 5, 1.0, 2.0, 3.0, 0.0, 0.0, 45.0)
    return [
        {"type": "open", "session": key, "format": "carla",
         "carla": {"map": "Town01", "width": "f64", "ids": "0.9.13"}},
        {"type": "state", "session": key, "frame": 0, "elapsed": 0,
         "positions": [{"id": 4294967295, "location": [1e300, -0.0, "nan:0x7ff0000000000001"],
                        "rotation": ["nan:0xffc00000", 5, -2.5e-310]}],
         "traffic_lights": [],
         "raw": [{"id": 6, "data": base64.b64encode(positions).decode(), "parsed": False}, {"id": 255, "data": ""}],
         "walker_animations": [{"id": 1, "speed": "nan:0x7f800001"}], "frame_counter": 2**63 - 1},
        {"type": "event", "session": key, "kind": "collision", "id": 1, "actor1": 2, "actor2": 3, "hero1": 255,
         "hero2": 0},
        {"type": "state", "session": key, "frame": 1, "elapsed": 1e-9, "duration": -1.0,
         "scene_lights": [{"id": -2**31, "intensity": 3.4028234663852886e38, "r": -1.0e-45, "g": 1, "b": 0.1,
                           "a": "-inf", "on": 0, "type": 255}]},
        {"type": "flush", "session": key},
        {"type": "close", "session": key, "end_time": 5},
    ]


def c_library_frames(path, session):
    """The frames the C library's client sends for a JSON lines file (rectool send, binary), read
    from a socket of ours; each frame with its session key written out (the client sends key_len
    0 for "the same session") and without the seq rectool adds, as the Java encoder gives them."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(60)
    got = bytearray()

    def serve():
        conn, _ = srv.accept()
        with conn:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                got.extend(chunk)

    t = threading.Thread(target=serve)
    t.start()
    url = f"tcp://127.0.0.1:{srv.getsockname()[1]}?encoding=binary"
    r = subprocess.run([os.environ["RECTOOL"], "send", path, "--to", url, "--speed", "max", "--session", session],
                       capture_output=True, text=True, timeout=120)
    t.join(60)
    srv.close()
    if r.returncode != 0:
        raise AssertionError(f"rectool send: {r.stdout}{r.stderr}")
    frames, at, key = [], 0, b""
    while at < len(got):
        f = bytes(got[at:at + 8 + int.from_bytes(got[at + 4:at + 8], "little")])
        at += len(f)
        if f[8] == 0:
            f = f[:8] + bytes([len(key)]) + key + f[9:]
        key = f[9:9 + f[8]]
        flags, rest = f[3], f[9 + len(key):]
        if flags & 1:  # has_seq
            flags, rest = flags & ~1, rest[8:]
        body = bytes([len(key)]) + key + rest
        frames.append((f[:3] + bytes([flags]) + len(body).to_bytes(4, "little") + body).hex())
    return frames
