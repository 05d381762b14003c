# SPDX-License-Identifier: MIT
# console_hostile.sh's checks. console_hostile.py HOST:PORT TMPDIR
import json, math, os, socket, sys, threading, time

addr, tmp = sys.argv[1], sys.argv[2]
host, port = addr.rsplit(":", 1)
port = int(port)
scale = float(os.environ.get("RECD_TEST_TIME_SCALE", "1"))
fails = []

def fail(msg):
    print("FAIL:", msg)
    fails.append(msg)

def raw(path, timeout=10 * scale):
    """GET path exactly as given (no client-side normalisation): (status, headers, body)."""
    s = socket.create_connection((host, port), timeout=timeout)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    return int(lines[0].split()[1]), lines[1:], body

def get_json(path):
    code, _, body = raw(path)
    return code, json.loads(body) if body else None

def wait_for(what, cond, seconds):
    deadline = time.monotonic() + seconds * scale
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    fail("timed out waiting for " + what)
    return None

# A live session shows up with its format and latest samples.
def ride_latest():
    code, o = get_json("/api/sessions/ride/latest")
    return o if code == 200 and o["samples"] and o["events"] else None
latest = wait_for("the session's latest samples", ride_latest, 10)
if latest:
    p = latest["samples"][0]
    if not (math.isfinite(p["x"]) and math.isfinite(p["y"]) and p["health"] is not None):
        fail("latest sample without a position or health: %r" % p)
code, o = get_json("/api/sessions")
rows = [r for r in o["sessions"] if r["key"] == "ride"] if code == 200 else []
if not rows or rows[0]["format"] != "recap" or rows[0]["peer"] != "127.0.0.1":
    fail("/api/sessions: %r" % (rows,))

# Paths that try to leave the root.
for path, want in [
    ("/api/recordings/../../../etc/passwd/window", 400),
    ("/api/recordings/rec/../../outside/secret.rec/window", 400),
    ("/api/recordings/%2e%2e/outside/secret.rec/window", 400),
    ("/api/recordings/rec/%2E%2E/%2E%2E/outside/secret.rec/window", 400),
    ("/api/recordings/%2Fetc%2Fpasswd/window", 400),
    ("/api/recordings//etc/passwd/window", 400),
    ("/api/recordings/rec/walk.rec%00/window", 400),
    ("/api/recordings/rec/link.rec/window", 404),
    ("/api/recordings/rec/linkdir/secret.rec/window", 404),
    ("/api/recordings/rec/./walk.rec/window", 400),
    ("/api/recordings/rec/walk.rec/window?points=0", 400),
    ("/api/recordings/rec/walk.rec/window?points=1000000000", 400),
    ("/api/recordings/rec/walk.rec/window?from=1e400", 400),
    ("/api/recordings/rec/walk.rec/window?from=9&to=1", 400),
    ("/api/recordings/rec/walk.rec/window?from=%zz", 400),
    ("/api/recordings/rec/missing.rec/window", 404),
    ("/api/sessions/%2e%2e/latest", 404),
    ("/api/nothing", 404),
]:
    code, _, body = raw(path)
    if code != want:
        fail("%s answered %d, not %d: %r" % (path, code, want, body[:200]))
    if b"TOPSECRET" in body:
        fail("%s leaked a file outside the root" % path)

# The listing: files under the root only, never through a link.
code, o = get_json("/api/recordings")
paths = sorted(r["path"] for r in o["recordings"]) if code == 200 else []
if "rec/walk.rec" not in paths or "rec/traffic.log" not in paths or any("link" in p for p in paths):
    fail("listing: %r" % paths)

# A window: decimated to points= per actor, inside [from, to].
code, o = get_json("/api/recordings/rec/walk.rec/window?from=2&to=8&points=7")
if code != 200 or len(o["actors"]) != 1:
    fail("window of walk.rec: %d %r" % (code, o))
else:
    pts = o["actors"][0]["points"]
    if len(pts) != 7 or not all(2 <= p[0] <= 8 for p in pts) or o["actors"][0]["samples"] < 7:
        fail("window points: %r" % pts)
# The largest window of 500 actors stays within the total cap.
code, o = get_json("/api/recordings/rec/traffic.log/window?points=5000")
total = sum(len(a["points"]) for a in o["actors"]) if code == 200 else -1
if code != 200 or len(o["actors"]) < 400 or total > 200000:
    fail("carla window: %d, %d actors, %d points" % (code, len(o["actors"]) if o else 0, total))

# The same recording indexed, without an index and with an index over the console's cap: the
# same window (an oversized sidecar is left aside, not read).
windows = {}
for name in ("indexed", "plain", "huge-index"):
    code, o = get_json("/api/recordings/rec/%s.recap/window?from=10&to=40&points=50" % name)
    windows[name] = (code, o and o.get("actors"), o and o.get("samples_total"))
if windows["plain"][0] != 200 or not windows["plain"][1] or len(set(map(repr, windows.values()))) != 1:
    fail("windows with and without an index differ: %r" % windows)

# Streams: 50 viewers, /healthz answers within its deadline meanwhile, each viewer gets updates.
def open_stream(rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10 * scale)
    s.connect((host, port))
    s.sendall(b"GET /api/sessions/ride/stream HTTP/1.1\r\nHost: x\r\n\r\n")
    return s


class Viewer:
    """A stream read as a browser reads it, on a thread of its own; keeps its first 64 KiB."""
    def __init__(self):
        self.sock = open_stream()
        self.got = self.sock.recv(65536)
        threading.Thread(target=self.drain, daemon=True).start()
    def drain(self):
        try:
            while True:
                b = self.sock.recv(65536)
                if not b:
                    return
                if len(self.got) < 65536:
                    self.got += b
        except OSError:
            return
    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

def open_viewer():
    return Viewer()

viewers = [open_viewer() for _ in range(50)]
worst = 0.0
for _ in range(10):
    t = time.monotonic()
    code, _, body = raw("/healthz", timeout=5 * scale)
    worst = max(worst, time.monotonic() - t)
    if code != 200:
        fail("/healthz answered %d with 50 viewers open" % code)
    time.sleep(0.05)
if worst > 2 * scale:
    fail("/healthz took %.2fs with 50 viewers open" % worst)
for v in viewers:
    deadline = time.monotonic() + 5 * scale
    while b"event: latest" not in v.got and time.monotonic() < deadline:
        time.sleep(0.05)
    got = v.got
    if not got.startswith(b"HTTP/1.1 200") or b"text/event-stream" not in got or b"event: latest" not in got:
        fail("a viewer got no update: %r" % got[:300])
        break
    if b"Content-Security-Policy: default-src 'self'" not in got:
        fail("a stream without the Content-Security-Policy")
        break
code, o = get_json("/api/process")
if code != 200 or o["console"]["streams"] != 50:
    fail("/api/process counts %r streams, not 50" % (o and o["console"]))
# Past max_streams (64): refused, not queued.
more = [open_viewer() for _ in range(14)]
extra = open_stream()
head = extra.recv(4096)
if not head.startswith(b"HTTP/1.1 503"):
    fail("the 65th viewer was not refused: %r" % head[:100])
extra.close()
for v in viewers + more:
    v.close()
wait_for("the streams to close", lambda: get_json("/api/process")[1]["console"]["streams"] == 0, 10)

# A viewer that never reads is closed once its backlog is full, and counted.
slow = open_stream(rcvbuf=4096)
dropped = wait_for("the slow viewer to be dropped",
                   lambda: get_json("/api/process")[1]["console"]["streams_dropped"] >= 1, 30)
slow.close()
code, _, _ = raw("/healthz")
if code != 200:
    fail("/healthz after the slow viewer: %d" % code)
sys.exit(1 if fails else 0)
