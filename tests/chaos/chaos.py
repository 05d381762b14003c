# SPDX-License-Identifier: MIT
# Chaos harness (docs/reliability.md, "Round 3: chaos harness"): runs recd on free loopback ports
# in a scratch folder, with honest senders of every format over TCP, UDP and Unix next to a seeded
# random mix of hostile peers, then checks that every honest file holds exactly what was sent, the
# loop lag p99 and RSS stayed within bounds, every refusal was counted (and replied to on streams)
# and nothing accepted was lost. Standard library only. Exit 0 pass, 1 fail, 2 usage, 77 skip.
#
# usage: python3 chaos.py --recd PATH --rectool PATH [--seconds N] [--seed S] [--classes LIST]
#        LIST: comma-separated hostile classes, "default" (DEFAULT_CLASSES), "all", "none", and
#        "-class" to leave one out, e.g. "all,-hog" (see CLASSES below).
#        Environment: RECD_TEST_TIME_SCALE stretches deadlines and bounds (not the run length),
#        CHAOS_KEEP=1 keeps the scratch folder; CHAOS_CLASSES and CHAOS_SEED are defaults for
#        --classes and --seed.
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SCALE = max(1, min(100, int(os.environ.get("RECD_TEST_TIME_SCALE", "1") or 1)))

# Each hostile class: what it does and, in parentheses, the issue-35 row whose fix it needs.
CLASSES = {
    "garbage": "random bytes on TCP, Unix and UDP (framing refusals, error replies)",
    "huge": "an NDJSON line and a binary frame over limits.max_frame, an oversized datagram",
    "idle": "bursts of stream connections that never send a byte (closed at limits.idle_timeout)",
    "half": "stream connections that stop inside a frame (closed at limits.frame_timeout)",
    "flood": "valid samples into its own sessions, up to 7 MB/s over TCP, 30,000 samples/s over UDP",
    "reload": "SIGHUP with a changed valid config",
    "disk": "the output root's tmpfs filled for a moment (root only; skipped otherwise)",
    "churn": "samp-player on foot/vehicle flips every sample, a new part each (row 2)",
    "hog": "one connection opens every session limits.max_sessions allows and holds them (row 7)",
    "seq": "a datagram with seq 2^63-1 into a live UDP session (row 4)",
    "seq-restart": "a UDP sender resumes and counts seq from 0 again (row 5)",
    "udp-pause": "a UDP sender pauses past rotation.idle_timeout, then goes on (row 11)",
    "reload-torn": "SIGHUP with an empty config file (row 12)",
    "slow-http": "metrics clients that send half a request and hang (/healthz must answer)",
    "recap-jump": "Recap ticks jump by 2^32: all states on disk, or an error reply (row 6)",
    "recap-early": "a Recap event before the first state: on disk, or an error reply (row 10)",
    "reload-limits": "a reload lowers limits.max_frame; an older connection then sends more (row 13)",
    "actors": "a CARLA session adds thousands of actors with 20 KB blueprints, deletes none (row 3)",
    "foreign": "an operator's old files under the root with retention.max_age set (row 8)",
}

# What `make test` and `make soak` run: every class (disk only as root; skipped otherwise).
DEFAULT_CLASSES = "garbage,huge,idle,half,flood,reload,slow-http,disk,churn,hog,seq,seq-restart," \
    "udp-pause,reload-torn,recap-jump,recap-early,reload-limits,actors,foreign"

# Where each peer's TCP and UDP sockets come from. recd shares its limits out per address
# (limits.max_sessions_per_peer, limits.peer_buffer, held state): the honest senders are one peer
# (127.0.0.1, as rectool send connects), the hostile classes another, and the unlucky-but-honest
# victims of rows 4-6, 10 and 11 a third, as they would be on a real network. Unix clients are
# all one peer (one uid).
HOSTILE_ADDR = "127.0.0.2"
VICTIM_ADDR = "127.0.0.3"
VICTIM_CLASSES = {"seq", "seq-restart", "udp-pause", "recap-jump", "recap-early", "reload-limits"}
peer_addr = threading.local()


def source_address():
    addr = getattr(peer_addr, "value", None)
    return (addr, 0) if addr else None


def udp_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if source_address():
        s.bind(source_address())
    return s

MAX_FRAME = 32 * 1024
PROCESS_BUFFER_MIB = 16
# Timeouts in recd's config, in seconds; each times SCALE (a slow build must not trip them).
ROTATION_IDLE_S = 5
CONN_IDLE_S = 2
FRAME_TIMEOUT_S = 2
MAX_SESSIONS = 600
HONEST_FORMATS = ("samp-onfoot", "samp-vehicle", "recap", "carla")
TRANSPORTS = ("tcp", "udp", "unix")


def log(msg):
    print("[%6.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


T0 = time.monotonic()

# ---------------------------------------------------------------------------------------------
# Binary frames (docs/wire.md section 2)

F_SEQ, F_TIME, F_RESUME = 1, 2, 4
FMT_ONFOOT, FMT_VEHICLE, FMT_PLAYER = 1, 2, 5


def frame(ftype, flags, body):
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body


def keyed(key, body):
    return bytes([len(key)]) + key.encode() + body


def open_frame(key, fmt, resume=False, seq=None):
    flags = (F_RESUME if resume else 0) | (F_SEQ if seq is not None else 0)
    extra = struct.pack("<Q", seq) if seq is not None else b""
    return frame(1, flags, keyed(key, extra + struct.pack("<BqB", fmt, 0, 0)))


def close_frame(key, seq=None):
    if seq is None:
        return frame(5, 0, keyed(key, b""))
    return frame(5, F_SEQ, keyed(key, struct.pack("<Q", seq)))


def state_frame(key, t, payload, seq=None):
    flags = F_TIME | (F_SEQ if seq is not None else 0)
    head = (struct.pack("<Q", seq) if seq is not None else b"") + struct.pack("<Q", t)
    return frame(2, flags, keyed(key, head + payload))


def onfoot_payload(index):
    """68 bytes: the on-foot block without its time; position x carries the sample's index."""
    p = struct.pack("<hhH", 0, -128, 8) + struct.pack("<3f", float(index), -1000.0, 13.5)
    p += struct.pack("<4f", 1.0, 0, 0, 0) + bytes([100, 0, 0, 0]) + struct.pack("<6f", 0, 0, 0, 0, 0, 0)
    return p + struct.pack("<HHH", 0, 1189, 0x8004)


def vehicle_payload(index):
    """63 bytes: the vehicle block without its time; position x carries the sample's index."""
    p = struct.pack("<HhhH", 7, 0, 0, 8) + struct.pack("<4f", 1.0, 0, 0, 0)
    p += struct.pack("<3f", float(index), -1000.0, 13.5) + struct.pack("<3f", 0.5, 0, 0)
    return p + struct.pack("<f", 1000.0) + bytes([100, 0, 0, 0, 0]) + struct.pack("<HI", 0, 0)


def player_payload(index, vehicle):
    if vehicle:
        return bytes([1]) + struct.pack("<HB", 411, 0) + vehicle_payload(index)
    return bytes([2]) + onfoot_payload(index)


def read_rec_blocks(path):
    """(type, [(time, index, body)]) of a .rec file, or raises ValueError."""
    data = open(path, "rb").read()
    if len(data) < 8:
        raise ValueError("%s: %d bytes, no header" % (path, len(data)))
    sig, rtype = struct.unpack_from("<II", data, 0)
    size = {1: 67, 2: 72}.get(rtype)
    if sig != 1000 or size is None or (len(data) - 8) % size:
        raise ValueError("%s: signature %d type %d, %d bytes" % (path, sig, rtype, len(data)))
    xoff = 4 + (28 - 4 if rtype == 1 else 6)
    blocks = []
    for off in range(8, len(data), size):
        t = struct.unpack_from("<I", data, off)[0]
        x = struct.unpack_from("<f", data, off + xoff)[0]
        blocks.append((t, int(x), data[off + 4:off + size]))
    return rtype, blocks


# ---------------------------------------------------------------------------------------------
# The run's shared state


class Run:
    def __init__(self, args):
        self.args = args
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.failures = []  # assertion failures, each one line
        self.notes = []
        self.expected = {}  # metric selector -> refusals the peers saw
        self.actions = {}  # class -> actions done
        self.honest = {}  # "fmt/transport" -> [ok, failed]
        self.children = set()

    def fail(self, what):
        with self.lock:
            self.failures.append(what)
        log("FAIL " + what)

    def verdict(self, ok, line):
        """One end-of-run check: printed whatever its result."""
        with self.lock:
            self.notes.append(("ok    " if ok else "FAIL  ") + line)
            if not ok:
                self.failures.append(line)

    def expect(self, selector, n=1):
        with self.lock:
            self.expected[selector] = self.expected.get(selector, 0) + n

    def did(self, cls):
        with self.lock:
            self.actions[cls] = self.actions.get(cls, 0) + 1

    def honest_result(self, label, ok, why=""):
        with self.lock:
            self.honest.setdefault(label, [0, 0])[0 if ok else 1] += 1
        if not ok:
            self.fail("honest %s: %s" % (label, why))
            self.stop.wait(0.5)  # no busy loop while recd refuses everything

    def sleep(self, seconds):
        """Sleeps; True when the run is over."""
        return self.stop.wait(seconds)


# ---------------------------------------------------------------------------------------------
# recd


class Recd:
    def __init__(self, run, recd, tmp, classes):
        self.run, self.recd, self.tmp, self.classes = run, recd, tmp, classes
        self.root = os.path.join(tmp, "disk", "out")
        self.config = os.path.join(tmp, "recd.yaml")
        self.sock = os.path.join(tmp, "recd.sock")
        self.variant = 0
        self.max_frame = MAX_FRAME
        self.reload_lock = threading.Lock()  # one reload class at a time owns the config file
        self.write_config()

    def config_text(self, variant):
        flush = ("200ms", "500ms")[variant % 2]
        idle = (CONN_IDLE_S * SCALE, CONN_IDLE_S * SCALE + 1)[variant % 2]
        text = (
            "# chaos harness, variant %d\n" % variant
            + "listen:\n  - tcp://127.0.0.1:%s\n  - udp://127.0.0.1:%s\n  - unix://%s\n"
            % (0, 0, self.sock)  # as at the start: a reload keeps listeners it finds unchanged
            + "output:\n  root: %s\n" % self.root
            + "flush:\n  interval: %s\n" % flush
            + "rotation:\n  max_size: 0\n  idle_timeout: %ds\n" % (ROTATION_IDLE_S * SCALE)
            + "limits:\n  max_frame: %dKiB\n  session_buffer: 1MiB\n  process_buffer: %dMiB\n"
            % (self.max_frame // 1024, PROCESS_BUFFER_MIB)
            + "  max_sessions: %d\n  idle_timeout: %ds\n  frame_timeout: %ds\n"
            % (MAX_SESSIONS, idle, FRAME_TIMEOUT_S * SCALE)
            + "metrics:\n  listen: 127.0.0.1:%s\n" % self.ports.get("metrics", 0)
            + "log:\n  level: warning\n"
        )
        if "foreign" in self.classes:
            text += "retention:\n  max_age: 1m\n"
        return text

    ports = {}

    def write_config(self, text=None):
        if text is None:
            text = self.config_text(self.variant)
        with open(self.config + ".new", "w") as f:
            f.write(text)
        os.replace(self.config + ".new", self.config)

    def start(self):
        self.log = open(os.path.join(self.tmp, "recd.log"), "w+")
        self.proc = subprocess.Popen([self.recd, "--config", self.config, "--print-ports"],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     cwd=self.tmp)
        self.urls, self.metrics = {}, None
        deadline = time.monotonic() + 60 * SCALE
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line or line.strip() == "ready":
                break
            if line.startswith("listen "):
                url = line.split()[1]
                self.urls[url.split(":", 1)[0]] = url
            elif line.startswith("metrics "):
                self.metrics = line.split()[1]
        if len(self.urls) < 3 or not self.metrics:
            raise RuntimeError("recd did not start:\n" + self.log_tail(20))
        # Reloads keep these ports: a valid reload must not move the listeners.
        self.ports = {k: self.urls[k].rsplit(":", 1)[1] for k in ("tcp", "udp")}
        self.ports["metrics"] = self.metrics.rsplit(":", 1)[1]
        self.tcp = ("127.0.0.1", int(self.ports["tcp"]))
        self.udp = ("127.0.0.1", int(self.ports["udp"]))

    def metrics_now(self):
        """The parsed /metrics; retried while the endpoint is busy (slow-http fills it: 503)."""
        deadline = time.monotonic() + 30 * SCALE
        while True:
            try:
                return parse_metrics(self.scrape())
            except OSError:
                if time.monotonic() > deadline or not self.alive():
                    raise
                time.sleep(0.2)

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, n):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-n:])

    def scrape(self, path="/metrics"):
        with urllib.request.urlopen("http://%s%s" % (self.metrics, path), timeout=5 * SCALE) as r:
            return r.read().decode()

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def stop(self):
        if not self.alive():
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60 * SCALE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed (no exit 60 s after SIGTERM)"


def parse_metrics(text):
    """{(name, labels-string): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return out


def metric_sum(metrics, name, match=""):
    return sum(v for (n, labels), v in metrics.items() if n == name and match in labels)


def loop_lag_p99(metrics):
    buckets = sorted((float(re.search(r'le="([^"]+)"', labels).group(1)), v)
                     for (n, labels), v in metrics.items() if n == "recd_loop_lag_seconds_bucket")
    total = metrics.get(("recd_loop_lag_seconds_count", ""), 0)
    for le, count in buckets:
        if count >= 0.99 * total:
            return le, total
    return float("inf"), total


# ---------------------------------------------------------------------------------------------
# Helpers for peers


def connect(recd, transport, timeout=10):
    if transport == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout * SCALE)
        s.connect(recd.sock)
    else:
        s = socket.create_connection(recd.tcp, timeout=timeout * SCALE, source_address=source_address())
    return s


def read_reply(s, timeout):
    """Everything the server sends until it closes (or the timeout): the error reply, if any."""
    s.settimeout(timeout)
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return got


def is_error_reply(data):
    return data[:3] == b"\xd7\x01\x7f" or data.startswith(b'{"type":"error"')


def names_a_limit(data):
    """An error reply that refuses at one of recd's limits (a share, a bound, limits.max_frame
    lowered by reload-limits under a peer's long lines), naming it."""
    return is_error_reply(data) and (b"limits." in data or b"longer than the limit" in data)


def send_until_refused(s, data):
    """sendall that stops quietly once recd has closed the connection after an error reply."""
    try:
        s.sendall(data)
        return True
    except OSError:
        return False


def finish(s, timeout):
    """Half-closes (if recd has not closed already) and reads what recd replies."""
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    return read_reply(s, timeout)


def find_files(root, key):
    """Finalized files and .part files of session KEY (any format folder)."""
    done, parts = [], []
    if not os.path.isdir(root):
        return done, parts
    for fmt in os.listdir(root):
        d = os.path.join(root, fmt, key)
        if os.path.isdir(d):
            for n in sorted(os.listdir(d)):
                if n.endswith(".part") or ".part." in n or n.startswith("."):  # in progress
                    parts.append(os.path.join(d, n))
                elif not n.endswith(".json") and not n.endswith(".idx"):  # manifests, seek indexes
                    done.append(os.path.join(d, n))
    return done, parts


def await_files(run, root, key, want_parts=1, at_least=False):
    """Polls until KEY has its finalized file(s) and no .part; returns the files or None."""
    deadline = time.monotonic() + 30 * SCALE
    while time.monotonic() < deadline:
        done, parts = find_files(root, key)
        if not parts and (len(done) >= want_parts if at_least else len(done) == want_parts):
            return done
        time.sleep(0.2)
    return None


def await_manifest_parts(root, key, n):
    """Polls until the samp-player manifest of KEY lists N complete parts. A session refused in
    the middle got no close: it goes dormant at rotation.idle_timeout (its last part finalized)
    and may go on, so its manifest rightly does not say the session is complete."""
    path = os.path.join(root, "samp-player", key, key + ".json")
    deadline = time.monotonic() + 30 * SCALE
    while time.monotonic() < deadline:
        try:
            parts = json.load(open(path)).get("parts", [])
            if len(parts) == n and all(p.get("complete") for p in parts):
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    return False


def manifest_complete(root, key):
    """Polls until the samp-player manifest KEY.json says complete."""
    path = os.path.join(root, "samp-player", key, key + ".json")
    deadline = time.monotonic() + 30 * SCALE
    while time.monotonic() < deadline:
        try:
            if json.load(open(path)).get("complete"):
                return True
        except (OSError, ValueError):
            pass
        time.sleep(0.2)
    return False


def check_rec_session(root, key, sent):
    """SENT: [(t, index, payload)] in send order. Every sample must be on disk exactly once, its
    bytes as sent, its time the sent time less its part's first (parts are rebased)."""
    done, parts = find_files(root, key)
    parts = [p for p in parts if not os.path.basename(p).startswith(".")]  # a manifest's temp
    if parts or not done:
        return "%d finalized files, %d .part" % (len(done), len(parts))
    want = {i: (t, p) for t, i, p in sent}
    seen = {}
    for path in done:
        try:
            _, blocks = read_rec_blocks(path)
        except ValueError as e:
            return str(e)
        if not blocks:
            continue
        i0 = blocks[0][1]
        if i0 not in want:
            return "%s starts with sample %d, never sent" % (os.path.basename(path), i0)
        for t, i, body in blocks:
            if i not in want:
                return "%s holds sample %d, never sent" % (os.path.basename(path), i)
            if i in seen:
                return "sample %d written twice" % i
            st, sp = want[i]
            if body != sp:
                return "sample %d differs from what was sent" % i
            if t - blocks[0][0] != st - want[i0][0]:
                return "sample %d at %d ms, sent at %d ms (part start %d)" % (i, t, st, want[i0][0])
            seen[i] = path
    missing = sorted(set(want) - set(seen))
    if missing:
        return "%d of %d samples missing (first %s) in %d file(s)" % (
            len(missing), len(want), missing[:5], len(done))
    return None


# ---------------------------------------------------------------------------------------------
# Honest senders


def honest_rectool(run, recd, rectool, files, fmt, transport, seed):
    rng = random.Random(seed)
    n = 0
    while not run.stop.is_set():
        n += 1
        key = "honest-%s-%s-%d" % (fmt, transport, n)
        url = recd.urls[transport]
        if transport == "tcp" and fmt != "carla" and rng.random() < 0.5:
            url += "?encoding=ndjson"
        cmd = [rectool, "send", files[fmt], "--to", url, "--session", key, "--speed", "2"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        with run.lock:
            run.children.add(p)
        try:
            out, _ = p.communicate(timeout=120 * SCALE)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out = "timed out after 120 s: " + out
        with run.lock:
            run.children.discard(p)
        label = "%s/%s" % (fmt, transport)
        if p.returncode != 0:
            run.honest_result(label, False, "%s: rectool send exit %s: %s" % (
                key, p.returncode, out.strip().splitlines()[-1:] if out else ""))
            continue
        got = await_files(run, recd.root, key)
        if got is None:
            done, parts = find_files(recd.root, key)
            run.honest_result(label, False, "%s: %d finalized files, %d .part after 30 s" % (
                key, len(done), len(parts)))
            continue
        if fmt == "recap":
            r = subprocess.run([rectool, "diff", files[fmt], got[0]], capture_output=True, text=True)
            same, why = r.returncode == 0, (r.stdout + r.stderr).strip()[:300]
        else:
            same = open(files[fmt], "rb").read() == open(got[0], "rb").read()
            why = "output differs from the file sent"
        run.honest_result(label, same, "%s: %s" % (key, why))


def honest_player(run, recd, transport, seed):
    """samp-player over TCP or Unix binary frames: walk, drive, walk; every part checked."""
    n = 0
    while not run.stop.is_set():
        n += 1
        key = "honest-player-%s-%d" % (transport, n)
        sent, t = [], 0
        try:
            s = connect(recd, transport)
            s.sendall(open_frame(key, FMT_PLAYER))
            for i in range(60):
                vehicle = 15 <= i < 40
                p = player_payload(i, vehicle)
                s.sendall(state_frame(key, t, p))
                sent.append((t, i, p[4:] if vehicle else p[1:]))
                t += 50
                time.sleep(0.02)
            s.sendall(close_frame(key))
            s.shutdown(socket.SHUT_WR)
            reply = read_reply(s, 30 * SCALE)
            s.close()
        except OSError as e:
            run.honest_result("samp-player/" + transport, False, "%s: %s" % (key, e))
            continue
        if reply:
            run.honest_result("samp-player/" + transport, False, "%s: refused: %r" % (key, reply[:200]))
            continue
        if await_files(run, recd.root, key, 3, at_least=True) is None:
            done, parts = find_files(recd.root, key)
            run.honest_result("samp-player/" + transport, False, "%s: parts not finalized: %s" % (
                key, [os.path.basename(p) for p in done + parts]))
            continue
        why = check_rec_session(recd.root, key, sent)
        if why is None and not manifest_complete(recd.root, key):
            why = "its parts are right, but its manifest %s.json is missing or not complete" % key
        run.honest_result("samp-player/" + transport, why is None, "%s: %s" % (key, why))


# ---------------------------------------------------------------------------------------------
# Hostile peers: one function per class, each does one action and returns.


def garbage(run, recd, rng):
    kind = rng.choice(("tcp", "unix", "udp"))
    junk = bytes([rng.choice((0x00, 0x01, 0x7A, 0xFF))]) + rng.randbytes(rng.randint(1, 2000))
    if kind == "udp":
        with udp_socket() as s:
            s.sendto(junk, recd.udp)
        run.expect("decode:framing")
        return
    with connect(recd, kind) as s:
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        reply = read_reply(s, 20 * SCALE)
    if not is_error_reply(reply):
        run.fail("garbage over %s: no error reply (got %r)" % (kind, reply[:80]))
    run.expect("decode:framing")


def huge(run, recd, rng):
    kind = rng.choice(("ndjson", "binary", "udp"))
    if kind == "udp":
        body = b"{" + b"x" * (MAX_FRAME + rng.randint(1, 20000))
        with udp_socket() as s:
            s.sendto(body[:65000], recd.udp)
        # Not expected in the counts: under the flood the kernel may drop it before recd sees it
        # (recd counts those in recd_udp_kernel_drops_total, without knowing what they were).
        return
    if kind == "ndjson":
        data = (b'{"type":"open","session":"huge","format":"recap","recap":{"name":"'
                + b"A" * (MAX_FRAME + rng.randint(1, 100000)) + b'"}}\n')
    else:
        data = struct.pack("<BBBBI", 0xD7, 1, 1, 0, rng.randint(MAX_FRAME + 1, 2**31)) + b"\0" * 64
    with connect(recd, rng.choice(("tcp", "unix"))) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # refused before everything was written
        reply = read_reply(s, 20 * SCALE)
    if not is_error_reply(reply):
        run.fail("huge %s: no error reply (got %r)" % (kind, reply[:80]))
    run.expect("decode:too_large")


def idle(run, recd, rng):
    """A burst of 1 to 50 connections that never send a byte: each must be closed with a reply."""
    conns = [connect(recd, rng.choice(("tcp", "unix"))) for _ in range(rng.randint(1, 50))]
    deadline = time.monotonic() + (CONN_IDLE_S + 1) * SCALE * 4 + 10
    for s in conns:
        with s:
            reply = read_reply(s, max(1, deadline - time.monotonic()))
        if not is_error_reply(reply):
            run.fail("idle connection: not closed with an error reply (got %r)" % reply[:80])
        run.expect("drop:idle")


def half(run, recd, rng):
    whole = open_frame("half-%d" % rng.randint(0, 10**9), FMT_ONFOOT)
    with connect(recd, rng.choice(("tcp", "unix"))) as s:
        s.sendall(whole[:rng.randint(1, len(whole) - 1)])
        reply = read_reply(s, FRAME_TIMEOUT_S * SCALE * 4 + 10)
    if not is_error_reply(reply):
        run.fail("half frame: not closed with an error reply (got %r)" % reply[:80])
    run.expect("drop:frame_timeout")


def flood(run, recd, rng):
    key = "flood-%d" % rng.randint(0, 10**9)
    until = time.monotonic() + rng.uniform(2, 5)
    if rng.random() < 0.5:
        with connect(recd, "tcp") as s:
            sending = send_until_refused(s, open_frame(key, FMT_ONFOOT))
            # Built once: resent, its times go back, and recd clamps them (rec.time_policy).
            chunk = b"".join(state_frame(key, j, onfoot_payload(j)) for j in range(2000))
            while sending and time.monotonic() < until and not run.stop.is_set():
                # about 7 MB/s: a flood, kept to what a shared CI box can take
                sending = send_until_refused(s, chunk)
                time.sleep(0.025)
            if sending:
                send_until_refused(s, close_frame(key))
            reply = finish(s, 30 * SCALE)
        if names_a_limit(reply):
            run.expect("decode:any")  # its peer's share of sessions: refused, and counted
        elif reply:
            run.fail("flood over TCP: refused: %r" % reply[:120])
        return
    # UDP: paced, at most 2,000 datagrams/s of 15 samples each, with seq numbers.
    with udp_socket() as s:
        s.sendto(open_frame(key, FMT_ONFOOT, seq=0), recd.udp)
        seq, t = 1, 0
        while time.monotonic() < until and not run.stop.is_set():
            for _ in range(20):
                dgram = b"".join(state_frame(key, t + j, onfoot_payload(j), seq + j) for j in range(15))
                s.sendto(dgram, recd.udp)
                seq += 15
                t += 15
            time.sleep(0.01)
        s.sendto(close_frame(key, seq), recd.udp)


def churn(run, recd, rng):
    """A part per sample; every sample must reach its part, then the parts are removed (as an
    operator would) so that a long soak does not fill the disk with them."""
    key = "churn-%d" % rng.randint(0, 10**9)
    flips = rng.randint(1000, 3000)
    sent = []
    with connect(recd, "tcp", timeout=60) as s:
        data = [open_frame(key, FMT_PLAYER)]
        for i in range(flips):
            p = player_payload(i, i % 2 == 1)
            data.append(state_frame(key, i * 10, p))
            sent.append((i * 10, i, p[4:] if i % 2 else p[1:]))
        send_until_refused(s, b"".join(data) + close_frame(key))
        reply = finish(s, 120 * SCALE)
    taken = flips
    if reply:
        # limits.part_rate (or its peer's share of sessions, at the open): the sender is told
        # which frame was refused (frame 1 is the open); every state before it is in its part.
        m = re.search(rb"frame (\d+) at byte \d+: ", reply)
        if not names_a_limit(reply) or not m:
            run.fail("churn: %d flips refused without naming a limit: %r" % (flips, reply[:160]))
            return
        run.expect("decode:any")
        taken = max(0, int(m.group(1)) - 2)
        sent = sent[:taken]
        if taken == 0:
            return
    listed = manifest_complete(recd.root, key) if taken == flips else \
        await_manifest_parts(recd.root, key, taken)
    if await_files(run, recd.root, key, taken) is None or not listed:
        done, parts = find_files(recd.root, key)
        run.fail("churn (%s): %d of %d parts finalized, %d in progress" % (key, len(done), taken, len(parts)))
    else:
        why = check_rec_session(recd.root, key, sent)
        if why:
            run.fail("churn (%s): %s" % (key, why))
    shutil.rmtree(os.path.join(recd.root, "samp-player", key), ignore_errors=True)


def hog(run, recd, rng):
    """Opens sessions until refused; holds them a while. The honest senders must go on."""
    base = "hog-%d" % rng.randint(0, 10**9)
    with connect(recd, "tcp", timeout=60) as s:
        lines = "".join('{"type":"open","session":"%s-%d","format":"samp-onfoot"}\n' % (base, i)
                        for i in range(MAX_SESSIONS))
        try:
            s.sendall(lines.encode())
        except OSError:
            pass
        reply = read_reply(s, 8)
    if reply and not is_error_reply(reply):
        run.fail("hog: odd reply %r" % reply[:120])
    if reply:
        run.expect("decode:any")


def actors(run, recd, rng):
    """A CARLA session adds actors with 20 KB blueprints and never deletes them, then waits:
    recd's live-actor table must count toward its limits (RSS is checked at the end)."""
    key = "actors-%d" % rng.randint(0, 10**9)
    n = 4000 if run.args.seconds < 300 else 6000
    blueprint = "vehicle." + "x" * 20000
    with connect(recd, "tcp", timeout=60) as s:
        head = ('{"type":"open","session":"%s","format":"carla","carla":{"map":"Town01"}}\n'
                '{"type":"state","frame":1,"elapsed":0.0}\n' % key)
        sending = send_until_refused(s, head.encode())
        for i in range(n):
            if not sending:
                break
            line = ('{"type":"event","kind":"add","id":%d,"actor_type":1,"location":[0,0,0],'
                    '"rotation":[0,0,0],"uid":%d,"blueprint":"%s-%d","attributes":[]}\n'
                    % (i + 2, i + 2, blueprint, i))
            if i % 100 == 99:
                line += '{"type":"state","frame":%d,"elapsed":%g}\n' % (i // 100 + 2, (i // 100 + 1) * 0.05)
            sending = send_until_refused(s, line.encode())
        if sending:
            run.sleep(5)
            send_until_refused(s, b'{"type":"close"}\n')
        reply = finish(s, 60 * SCALE)
    if reply and not names_a_limit(reply):
        run.fail("actors: odd reply %r" % reply[:120])
    elif reply:
        run.expect("decode:any")  # refused at a bound (held state, or its peer's sessions): counted
        if b"open of session" in reply:
            return  # refused at the open: nothing was taken
    # Removed once finalized (removing a .part is a loss recd must count, not this class's point).
    if await_files(run, recd.root, key, 1, at_least=True) is None:
        run.fail("actors (%s): not finalized 30 s after its close" % key)
    else:
        shutil.rmtree(os.path.join(recd.root, "carla", key), ignore_errors=True)


RECAP_STATE = ('{"type":"state","tick":%d,"pos":[%d.5,69.0,-1816.5],"rot":[0.0,0.0,0.0],'
               '"vel":[0.0,0.0,0.0],"flags":512,"pose":0,"game_mode":0,"hand_state":0,'
               '"health":20.0,"absorption":0.0}\n')


def recap_victim(run, recd, key, lines, what, check):
    """Sends LINES of a recap session over TCP NDJSON. What was accepted must be on disk, or the
    sender must hear why: CHECK(exported lines, replied) says whether the file is right."""
    head = '{"type":"open","session":"%s","format":"recap","recap":{"name":"chaos"}}\n' % key
    with connect(recd, "tcp") as s:
        s.sendall((head + "".join(lines) + '{"type":"close"}\n').encode())
        s.shutdown(socket.SHUT_WR)
        reply = read_reply(s, 30 * SCALE)
    replied = is_error_reply(reply)
    got = await_files(run, recd.root, key, 1)
    if got is None:
        if replied and not find_files(recd.root, key)[1]:
            return  # refused before any state was taken: the sender heard why, nothing is held
        run.fail("%s (%s): no single finalized file" % (what, key))
        return
    r = subprocess.run([run.args.rectool, "export", got[0], "--to", "jsonl"], capture_output=True, text=True)
    if r.returncode != 0:
        run.fail("%s (%s): the file does not export: %s" % (what, key, r.stderr.strip()[:200]))
        return
    why = check(r.stdout.splitlines(), is_error_reply(reply))
    if why:
        run.fail("%s (%s): %s" % (what, key, why))


def recap_jump(run, recd, rng):
    """Ticks that jump by 2^32 after 20 states (row 6)."""
    jump = 2**32
    lines = [RECAP_STATE % (t, t) for t in range(20)] + [RECAP_STATE % (jump + t, t) for t in range(20, 40)]

    def check(exported, replied):
        states = sum('"type":"state"' in x for x in exported)
        if states == 40 or (replied and states >= 20):
            return None
        return "%d of 40 states on disk, %s error reply" % (states, "an" if replied else "no")
    recap_victim(run, recd, "jump-%d" % rng.randint(0, 10**9), lines, "recap tick jump", check)


def recap_early(run, recd, rng):
    """A chat event at a tick before the session's first state (row 10)."""
    lines = ['{"type":"event","tick":0,"action":"CHAT_MESSAGE","message":"early"}\n']
    lines += [RECAP_STATE % (t, t) for t in range(5, 25)]

    def check(exported, replied):
        if replied or any('"early"' in x for x in exported):
            return None
        return "the event before the first state is not on disk, and no error reply said so"
    recap_victim(run, recd, "early-%d" % rng.randint(0, 10**9), lines, "recap event before a state", check)


def slow_http(run, recd, rng):
    """Metrics clients that send half a request and hang; /healthz must still answer."""
    host, port = recd.metrics.rsplit(":", 1)
    hung = []
    for _ in range(24):
        try:
            c = socket.create_connection((host, int(port)), timeout=5)
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            hung.append(c)
        except OSError:
            pass
    run.sleep(rng.uniform(3, 8))
    for c in hung:
        c.close()


def reload_limits(run, recd, rng):
    """A reload lowers limits.max_frame; a connection opened before it sends a line over the new
    limit: it must be refused as too_large, with an error reply (row 13)."""
    with recd.reload_lock:
        with connect(recd, "tcp") as s:
            s.sendall(b'{"type":"open","session":"rl-%d","format":"samp-onfoot"}\n' % rng.randint(0, 10**9))
            before = metric_sum(recd.metrics_now(), "recd_config_reloads_total", 'result="ok"')
            recd.max_frame = 8 * 1024
            recd.write_config()
            recd.proc.send_signal(signal.SIGHUP)
            ok = await_metric(recd, "recd_config_reloads_total", 'result="ok"', before + 1)
            # Valid JSON, padded with white space past the new limit.
            s.sendall(b'{"type":"open","session":"rl-big-%d","format":"samp-onfoot"' % rng.randint(0, 10**9)
                      + b" " * 12000 + b'}\n')
            s.shutdown(socket.SHUT_WR)
            reply = read_reply(s, 20 * SCALE)
        before = metric_sum(recd.metrics_now(), "recd_config_reloads_total", 'result="ok"')
        recd.max_frame = MAX_FRAME
        recd.write_config()
        recd.proc.send_signal(signal.SIGHUP)
        await_metric(recd, "recd_config_reloads_total", 'result="ok"', before + 1)
        if not ok:
            run.fail("reload-limits: the reload lowering limits.max_frame was not counted as ok")
        elif not is_error_reply(reply):
            run.fail("reload-limits: a 12 KB line after max_frame went to 8 KiB was taken on a connection "
                     "opened before the reload")
        else:
            run.expect("decode:too_large")


def victim_udp(recd, key, n, t0=0, seq0=0, i0=0, pause=0, restart=False, poison=False):
    """Sends N on-foot samples of KEY over UDP, one datagram each; returns [(t, index, payload)]."""
    sent = []
    with udp_socket() as s:
        s.sendto(open_frame(key, FMT_ONFOOT, seq=seq0), recd.udp)
        seq, t = seq0 + 1, t0
        for i in range(i0, i0 + n):
            if pause and i == i0 + n // 2:
                time.sleep(pause)
            if restart and i == i0 + n // 2:
                s.sendto(open_frame(key, FMT_ONFOOT, resume=True, seq=0), recd.udp)
                seq = 1
            if poison and i == i0 + n // 4:
                p = onfoot_payload(100000 + i)
                s.sendto(state_frame(key, t, p, seq=2**63 - 1), recd.udp)
                sent.append((t, 100000 + i, p))
                t += 20
            p = onfoot_payload(i)
            s.sendto(state_frame(key, t, p, seq=seq), recd.udp)
            sent.append((t, i, p))
            seq += 1
            t += 20
            time.sleep(0.01)
        s.sendto(close_frame(key, seq), recd.udp)
    return sent


def victim_check(run, recd, key, sent, what, parts=1):
    """PARTS: how many files the session makes (a pause past rotation.idle_timeout makes two; the
    second is written a flush interval after the first is final, so waiting for one is a race)."""
    got = await_files(run, recd.root, key, parts, at_least=True)
    why = check_rec_session(recd.root, key, sent) if got else "no finalized file after 30 s"
    if why:
        run.fail("%s (%s): %s" % (what, key, why))


def seq(run, recd, rng):
    key = "seq-%d" % rng.randint(0, 10**9)
    victim_check(run, recd, key, victim_udp(recd, key, 80, poison=True), "seq 2^63-1 poisoned session")


def seq_restart(run, recd, rng):
    key = "seqr-%d" % rng.randint(0, 10**9)
    victim_check(run, recd, key, victim_udp(recd, key, 100, restart=True), "resume with seq from 0")


def udp_pause(run, recd, rng):
    key = "pause-%d" % rng.randint(0, 10**9)
    sent = victim_udp(recd, key, 40, pause=ROTATION_IDLE_S * SCALE * 2 + 1)
    victim_check(run, recd, key, sent, "UDP pause past rotation.idle_timeout", parts=2)


def reload_valid(run, recd, rng):
    with recd.reload_lock:
        before = metric_sum(recd.metrics_now(), "recd_config_reloads_total", 'result="ok"')
        recd.variant += 1
        recd.write_config()
        recd.proc.send_signal(signal.SIGHUP)
        if not await_metric(recd, "recd_config_reloads_total", 'result="ok"', before + 1):
            run.fail("valid reload %d not counted as ok: %s" % (recd.variant, recd.log_tail(3)))


def reload_torn(run, recd, rng):
    with recd.reload_lock:
        before = metric_sum(recd.metrics_now(), "recd_config_reloads_total", 'result="refused"')
        recd.write_config("")
        recd.proc.send_signal(signal.SIGHUP)
        ok = await_metric(recd, "recd_config_reloads_total", 'result="refused"', before + 1)
        recd.write_config()
        if not ok:
            run.fail("an empty config file was not refused on SIGHUP (reload not counted as refused)")
        try:
            with connect(recd, "tcp", timeout=5):
                pass
        except OSError as e:
            run.fail("after an empty-file reload the TCP listener is gone: %s" % e)
            recd.proc.send_signal(signal.SIGHUP)  # put the valid config back
            time.sleep(2)


def await_metric(recd, name, match, at_least):
    deadline = time.monotonic() + 10 * SCALE
    while time.monotonic() < deadline:
        try:
            if metric_sum(recd.metrics_now(), name, match) >= at_least:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def disk(run, recd, rng):
    """Fills the tmpfs under the root for about a second, then frees it."""
    path = os.path.join(recd.tmp, "disk", "filler")
    try:
        with open(path, "wb") as f:
            block = b"\0" * (1 << 20)
            while True:
                f.write(block)
                f.flush()
    except OSError:
        pass
    time.sleep(rng.uniform(0.5, 1.5))
    os.unlink(path)


def foreign(run, recd, rng):
    pass  # files are placed before the start and checked at the end


# Each class's action, and the mean gap in seconds between two of its actions.
HOSTILE = {
    "garbage": (garbage, 0.3),
    "huge": (huge, 1.0),
    "idle": (idle, 1.0),
    "half": (half, 1.0),
    "flood": (flood, 3.0),
    "reload": (reload_valid, 6.0),
    "slow-http": (slow_http, 5.0),
    "disk": (disk, 12.0),
    "churn": (churn, 10.0),
    "actors": (actors, 20.0),
    "recap-jump": (recap_jump, 3.0),
    "seq": (seq, 3.0),
    "seq-restart": (seq_restart, 3.0),
    "hog": (hog, 20.0),
    "foreign": (foreign, 1e9),
    "recap-early": (recap_early, 3.0),
    "udp-pause": (udp_pause, 3.0),
    "reload-torn": (reload_torn, 15.0),
    "reload-limits": (reload_limits, 15.0),
}
assert set(HOSTILE) == set(CLASSES), "every class has a description and an action"


# A process of its own, so that the harness's threads (and Python's lock) do not add to the time.
PROBE = r"""
import sys, time, urllib.error, urllib.request
url = sys.argv[1]
while True:
    began = time.monotonic()
    try:
        urllib.request.urlopen(url, timeout=float(sys.argv[2])).read()
        print("%.3f" % (time.monotonic() - began), flush=True)
    except urllib.error.HTTPError:
        print("%.3f" % (time.monotonic() - began), flush=True)  # 503 is an answer too
    except OSError as e:
        print("error %s" % e, flush=True)
    time.sleep(max(0, 1 - (time.monotonic() - began)))
"""


def probe_health(run, recd, latencies):
    """/healthz once a second: its answer time is what a stalled loop costs everyone."""
    p = subprocess.Popen([sys.executable, "-c", PROBE, "http://%s/healthz" % recd.metrics, str(20 * SCALE)],
                         stdout=subprocess.PIPE, text=True)
    with run.lock:
        run.children.add(p)
    for line in p.stdout:
        if run.stop.is_set() or not recd.alive():
            break
        if line.startswith("error"):
            run.fail("/healthz: %s" % line.strip())
        else:
            latencies.append(float(line))
    p.kill()
    p.wait()


def guarded(fn):
    """A thread target whose unexpected exception fails the run instead of ending in silence."""
    def target(run, *args):
        try:
            fn(run, *args)
        except Exception as e:
            run.fail("%s: harness error %r" % (fn.__name__, e))
    return target


def hostile_loop(run, recd, cls, seed):
    fn, gap = HOSTILE[cls]
    peer_addr.value = VICTIM_ADDR if cls in VICTIM_CLASSES else HOSTILE_ADDR
    rng = random.Random(seed)
    if run.sleep(rng.uniform(0, min(gap, 5))):
        return
    while not run.stop.is_set():
        try:
            fn(run, recd, rng)
            run.did(cls)
        except OSError as e:
            # A peer that cannot even connect is a finding only while recd lives.
            if recd.alive():
                run.fail("%s: %s" % (cls, e))
        except Exception as e:  # a bug of the harness: say so rather than lose the thread
            run.fail("%s: harness error %r" % (cls, e))
        if run.sleep(rng.expovariate(1 / gap)):
            return


# ---------------------------------------------------------------------------------------------
# Main


def parse_classes(text):
    chosen = set()
    for item in filter(None, (x.strip() for x in text.split(","))):
        if item == "all":
            chosen |= set(CLASSES)
        elif item == "default":
            chosen |= parse_classes(DEFAULT_CLASSES)
        elif item.startswith("-") and item[1:] in CLASSES:
            chosen.discard(item[1:])
        elif item in CLASSES:
            chosen.add(item)
        elif item != "none":
            sys.exit("chaos: unknown class '%s' (known: %s)" % (item, ", ".join(CLASSES)))
    return chosen


def place_foreign(root):
    """An operator's files: must survive retention (they are old, and recd did not write them)."""
    paths = [os.path.join(root, "ops", "notes.log"), os.path.join(root, "README.rec"),
             os.path.join(root, "recap", "honest-recap-tcp-9999", "20200101T000000Z.recap"),
             os.path.join(root, "samp-onfoot", "mine", "20200101T000000Z.rec")]
    for p in paths:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("kept by the operator\n")
        os.utime(p, (time.time() - 86400 * 30,) * 2)
    return paths


def main():
    ap = argparse.ArgumentParser(description="recd chaos harness")
    ap.add_argument("--recd", default=os.environ.get("RECD"))
    ap.add_argument("--rectool", default=os.environ.get("RECTOOL"))
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("CHAOS_SEED") or -1))
    ap.add_argument("--classes", default=os.environ.get("CHAOS_CLASSES") or "default")
    ap.add_argument("--lag-p99", type=float, default=0.05, help="loop lag p99 bound, seconds")
    ap.add_argument("--rss-overhead-mib", type=int, default=48)
    ap.add_argument("--list", action="store_true", help="list the hostile classes and exit")
    args = ap.parse_args()
    if args.list:
        default = parse_classes(DEFAULT_CLASSES)
        for name, what in CLASSES.items():
            print("%-14s %s %s" % (name, "default" if name in default else "       ", what))
        return 0
    if not args.recd or not os.access(args.recd, os.X_OK) or not args.rectool:
        print("SKIP: --recd/--rectool (or RECD/RECTOOL) do not name built binaries")
        return 77
    args.recd, args.rectool = os.path.abspath(args.recd), os.path.abspath(args.rectool)
    global SCALE
    with open(args.recd, "rb") as f:
        sanitized = b"__asan_init" in f.read()
    if sanitized:
        # AddressSanitizer: slower, and its shadow memory and redzones are in recd's RSS; a small
        # quarantine keeps freed memory from counting as held (as rectool_send_stream does).
        SCALE *= 4
        args.rss_overhead_mib *= 4
        os.environ["ASAN_OPTIONS"] = os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4"
        print("chaos: sanitizer build: deadlines and latency bounds x4, RSS overhead %d MiB"
              % args.rss_overhead_mib)
    seed = args.seed if args.seed >= 0 else random.SystemRandom().randrange(2**32)
    classes = parse_classes(args.classes)
    is_root = os.geteuid() == 0
    if "disk" in classes and not is_root:
        print("chaos: SKIP class disk (needs root to mount a tmpfs)")
        classes.discard("disk")
    print("chaos: seed %d, %d s, classes %s (rerun: --seed %d --classes %s)" % (
        seed, args.seconds, ",".join(sorted(classes)) or "none", seed, ",".join(sorted(classes)) or "none"),
        flush=True)
    run = Run(args)
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="recd-chaos."))
    os.makedirs(os.path.join(tmp, "disk"))
    mounted = False
    if "disk" in classes:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "recd-chaos",
                                  os.path.join(tmp, "disk")]).returncode == 0
        if not mounted:
            print("chaos: SKIP class disk (mount failed)")
            classes.discard("disk")
    recd = Recd(run, args.recd, tmp, classes)
    os.makedirs(recd.root)
    foreign_files = place_foreign(recd.root) if "foreign" in classes else []
    threads = []
    try:
        return drive(run, recd, args, seed, classes, tmp, foreign_files, threads)
    finally:
        run.stop.set()
        with run.lock:
            for p in list(run.children):
                p.kill()
        for th in threads:
            th.join(timeout=5)
        if getattr(recd, "proc", None) and recd.alive():
            recd.proc.kill()
            recd.proc.wait()
        if mounted:
            subprocess.run(["umount", "-l", os.path.join(tmp, "disk")])
        if os.environ.get("CHAOS_KEEP") == "1":
            print("chaos: kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def generate(rectool, tmp):
    files = {}
    for fmt in HONEST_FORMATS:
        ext = {"recap": "recap", "carla": "log"}.get(fmt, "rec")
        files[fmt] = os.path.join(tmp, "honest.%s.%s" % (fmt, ext))
        cmd = [rectool, "generate", "--format", fmt, "--duration", "8s", "--seed", "7", "-o", files[fmt]]
        if fmt == "carla":
            cmd += ["--actors", "20"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return files


def drive(run, recd, args, seed, classes, tmp, foreign_files, threads):
    files = generate(args.rectool, tmp)
    recd.start()
    log("recd pid %d: %s, metrics %s" % (recd.proc.pid, " ".join(recd.urls.values()), recd.metrics))
    start_metrics = recd.metrics_now()
    rss = []
    for i, fmt in enumerate(HONEST_FORMATS):
        for j, transport in enumerate(TRANSPORTS):
            threads.append(threading.Thread(target=guarded(honest_rectool), daemon=True, args=(
                run, recd, args.rectool, files, fmt, transport, seed + 10 * i + j)))
    for transport in ("tcp", "unix"):
        threads.append(threading.Thread(target=guarded(honest_player), daemon=True,
                                        args=(run, recd, transport, seed)))
    for k, cls in enumerate(sorted(classes)):
        threads.append(threading.Thread(target=hostile_loop, daemon=True,
                                        args=(run, recd, cls, seed + 1000 + k)))
    health = []
    threads.append(threading.Thread(target=guarded(probe_health), daemon=True, args=(run, recd, health)))
    for th in threads:
        th.start()
    end = time.monotonic() + args.seconds
    next_report = time.monotonic() + 10
    while time.monotonic() < end and recd.alive():
        rss.append(recd.rss_kib())
        time.sleep(0.5)
        if time.monotonic() >= next_report:
            next_report += 10
            log("RSS %d MiB; %d honest sessions checked; actions %s" % (
                rss[-1] // 1024, sum(sum(v) for v in run.honest.values()), dict(sorted(run.actions.items()))))
    run.stop.set()
    log("load over; waiting for the peers to finish")
    deadline = time.monotonic() + 180 * SCALE
    for th in threads:
        th.join(timeout=max(1, deadline - time.monotonic()))
    stuck = [th for th in threads if th.is_alive()]
    if stuck:
        run.verdict(False, "%d sender threads still running 180 s after the end" % len(stuck))
    return verdicts(run, recd, args, start_metrics, rss, health, foreign_files)


def verdicts(run, recd, args, start_metrics, rss, health, foreign_files):
    if not recd.alive():
        run.verdict(False, "recd died (exit %s): %s" % (recd.proc.returncode, recd.log_tail(5)))
        return report(run)
    m = recd.metrics_now()
    # Honest senders: every format over every transport, each send checked.
    for fmt in HONEST_FORMATS + ("samp-player",):
        for transport in TRANSPORTS:
            if fmt == "samp-player" and transport == "udp":
                continue
            ok, bad = run.honest.get("%s/%s" % (fmt, transport), [0, 0])
            if ok == 0 and bad == 0:
                run.verdict(False, "honest %s/%s: no session completed during the run" % (fmt, transport))
    # Loop lag.
    p99, iterations = loop_lag_p99(m)
    bound = args.lag_p99 * SCALE
    line = "loop lag p99 <= %gs over %d iterations (bound %gs)" % (p99, iterations, bound)
    run.verdict(p99 <= bound, line)
    within_1s = m.get(("recd_loop_lag_seconds_bucket", '{le="1"}'), 0)
    stalls = metric_sum(m, "recd_loop_lag_seconds_count") - within_1s
    line = "%d loop iterations busy over 1 s" % stalls
    run.verdict(stalls == 0, line)
    worst = max(health) if health else float("inf")
    line = "/healthz answered %d probes, the slowest in %.2f s (bound %d s)" % (len(health), worst, 3 * SCALE)
    run.verdict(worst <= 3 * SCALE, line)
    # RSS.
    top = max(rss) if rss else 0
    limit = (PROCESS_BUFFER_MIB + args.rss_overhead_mib) * 1024
    line = "RSS peak %d MiB (limit: process_buffer %d MiB + %d MiB overhead)" % (
        top // 1024, PROCESS_BUFFER_MIB, args.rss_overhead_mib)
    run.verdict(top <= limit, line)
    # Refusals: each one a peer saw is counted.
    delta = {}
    for (name, labels), v in m.items():
        delta[(name, labels)] = v - start_metrics.get((name, labels), 0)
    counted = {
        "decode:any": sum(v for (n, _), v in delta.items() if n == "recd_decode_errors_total"),
    }
    for sel, n in sorted(run.expected.items()):
        kind, reason = sel.split(":")
        if reason == "any":
            got = counted["decode:any"]
        else:
            name = "recd_decode_errors_total" if kind == "decode" else "recd_connections_dropped_total"
            label = 'reason="%s"' % reason
            got = sum(v for (nm, labels), v in delta.items() if nm == name and label in labels)
        line = "%s refusals: peers saw %d, recd counted %d" % (sel, n, got)
        run.verdict(got >= n, line)
    lost = metric_sum(m, "recd_lost_bytes_total")
    line = "recd_lost_bytes_total %d" % lost
    run.verdict(lost == 0, line)
    for f in foreign_files:
        if not os.path.exists(f):
            run.verdict(False, "retention deleted the operator's %s" % os.path.relpath(f, recd.root))
    code = recd.stop()
    run.verdict(code == 0, "recd exited %s after SIGTERM" % code)
    return report(run)


def report(run):
    for n in run.notes:
        print(n)
    for label, (ok, bad) in sorted(run.honest.items()):
        print("%s  honest %-22s %d sessions identical, %d not"
              % ("ok  " if not bad else "FAIL", label, ok, bad))
    print("      hostile actions: %s" % dict(sorted(run.actions.items())))
    if run.failures:
        kinds = {}
        for f in run.failures:
            kinds.setdefault(re.split(r" \(|:", f)[0], []).append(f)
        print("chaos: FAIL: %d failures; the first of each kind:" % len(run.failures))
        for kind, items in sorted(kinds.items()):
            print("  (%dx) %s" % (len(items), " ".join(items[0].split())[:400]))
        return 1
    print("chaos: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
