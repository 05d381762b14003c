# SPDX-License-Identifier: MIT
# daemon_player_disk_full.sh's sender. daemon_player_disk_full.py HOST:PORT ROOT KEY PARTS LOG:
# one samp-player session over TCP (binary frames) whose states alternate on foot and vehicle
# every three states, so PARTS parts. Its first two parts go while the disk has room, until its
# manifest ROOT/samp-player/KEY/KEY.json exists; then the filesystem under ROOT is filled
# (ROOT/filler), the other parts and the close are sent, and the sender waits for recd's close
# of the connection (no error reply) and for LOG to say the manifest could not be stored.
import os, socket, struct, sys, time

host, port = sys.argv[1].rsplit(":", 1)
root, key, parts, log = sys.argv[2], sys.argv[3].encode(), int(sys.argv[4]), sys.argv[5]
scale = max(1, int(os.environ.get("RECD_TEST_TIME_SCALE", "1") or 1))
manifest = os.path.join(root, "samp-player", key.decode(), key.decode() + ".json")


def frame(ftype, flags, body):
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body


def keyed(body):
    return bytes([len(key)]) + key + body


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
onfoot = struct.pack("<BhhH", 2, 0, -128, 8) + f32(1000.0, -1000.0, 13.5) + f32(1, 0, 0, 0) \
    + bytes([100, 0, 0, 0]) + f32(0, 0, 0) + f32(0, 0, 0) + struct.pack("<HHH", 0, 1189, 0x8004)
vehicle = struct.pack("<BHB", 1, 411, 0) + struct.pack("<HhhH", 7, 0, 0, 8) + f32(1, 0, 0, 0) \
    + f32(1010.0, -1000.0, 13.5) + f32(0.5, 0, 0) + f32(1000.0) + bytes([100, 0, 0, 0, 0]) \
    + struct.pack("<HI", 0, 0)


def states(first, last):
    return b"".join(frame(2, 2, keyed(struct.pack("<Q", i * 50) + (vehicle if (i // 3) & 1 else onfoot)))
                    for i in range(first * 3, last * 3))


def wait_for(what, ok, seconds):
    deadline = time.monotonic() + seconds * scale
    while not ok():
        if time.monotonic() > deadline:
            sys.exit("timed out waiting for " + what)
        time.sleep(0.05)


def log_says_manifest_failed():
    with open(log, errors="replace") as f:
        return ("session '%s': cannot store its manifest" % key.decode()) in f.read()


s = socket.create_connection((host, int(port)))
s.sendall(frame(1, 0, keyed(struct.pack("<BqB", 5, 0, 0))) + states(0, 2))
wait_for("the manifest's first store", lambda: os.path.exists(manifest), 30)
with open(os.path.join(root, "filler"), "wb", buffering=0) as f:
    try:
        while True:
            f.write(b"\0" * 4096)
    except OSError:
        pass
s.sendall(states(2, parts) + frame(5, 0, keyed(b"")))
s.shutdown(socket.SHUT_WR)
s.settimeout(60 * scale)
reply = s.recv(4096)
if reply:
    sys.exit("recd replied: %r" % reply)
wait_for("the log line of the failed manifest store", log_says_manifest_failed, 30)
