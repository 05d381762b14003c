# SPDX-License-Identifier: MIT
# daemon_part_churn.sh's sender. daemon_part_churn.py HOST:PORT KEY N [METRICS_HOST:PORT]: one samp-player session whose N states alternate
# on foot and vehicle, so that every state starts a new part; sent as binary frames in one
# stream. Prints the seconds from the first byte to recd's close after our EOF, and, with a
# metrics address, the slowest /healthz answer seen meanwhile.
import socket, struct, sys, threading, time, urllib.request
host, port = sys.argv[1].rsplit(":", 1)
key, n = sys.argv[2].encode(), int(sys.argv[3])
metrics = sys.argv[4] if len(sys.argv) > 4 else None
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
data = bytearray(frame(1, 0, keyed(struct.pack("<BqB", 5, 0, 0))))
for i in range(n):
    data += frame(2, 2, keyed(struct.pack("<Q", i) + (vehicle if i & 1 else onfoot)))
data += frame(5, 0, keyed(b""))
worst = [0.0]
done = threading.Event()
def probe():
    while not done.is_set():
        t = time.monotonic()
        try:
            urllib.request.urlopen("http://%s/healthz" % metrics, timeout=120).read()
        except Exception as e:
            if not getattr(e, "code", None):
                raise
        worst[0] = max(worst[0], time.monotonic() - t)
        time.sleep(0.05)
if metrics:
    th = threading.Thread(target=probe, daemon=True)
    th.start()
s = socket.create_connection((host, int(port)))
s.settimeout(600)
replies = bytearray()
def read_replies():
    while True:
        b = s.recv(1 << 16)
        if not b:
            return
        replies.extend(b)
reader = threading.Thread(target=read_replies)
t0 = time.monotonic()
reader.start()
s.sendall(data)
s.shutdown(socket.SHUT_WR)
reader.join()
took = time.monotonic() - t0
done.set()
errors, off, first = 0, 0, None
while off + 8 <= len(replies):
    ln = struct.unpack_from("<I", replies, off + 4)[0]
    if first is None:
        first = bytes(replies[off + 8:off + 8 + ln])
    errors += 1
    off += 8 + ln
print("%.3f %.3f %d %r" % (took, worst[0], errors, first))
