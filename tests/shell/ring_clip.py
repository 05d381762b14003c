# SPDX-License-Identifier: MIT
# For the instant-replay tests: ring_clip.py HOST:PORT JSONL KEY LABEL sends a recording's JSON
# lines (rectool export) as session KEY with "ring": true, then a save of its whole window named
# LABEL and its close, on one connection; exits non-zero if recd replied (an error).
import json
import socket
import sys

host, port = sys.argv[1].rsplit(":", 1)
key, label = sys.argv[3], sys.argv[4]
out = b""
for line in open(sys.argv[2]):
    m = json.loads(line)
    if m["type"] == "close":
        break
    m["session"] = key
    if m["type"] == "open":
        m["ring"] = True
    out += json.dumps(m).encode() + b"\n"
out += json.dumps({"type": "save", "session": key, "last_ms": 3600000, "label": label}).encode()
out += b"\n" + json.dumps({"type": "close", "session": key}).encode() + b"\n"
s = socket.create_connection((host, int(port)))
s.sendall(out)
s.shutdown(socket.SHUT_WR)
s.settimeout(60)
reply = s.recv(4096)
if reply:
    sys.exit("daemon replied: %r" % reply)
