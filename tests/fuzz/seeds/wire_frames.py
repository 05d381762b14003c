# SPDX-License-Identifier: MIT
# Builds wire protocol seed inputs (docs/wire.md) for the wire fuzzers; imported by the seed
# scripts fuzz_wire_stream.sh and fuzz_wire_datagram.sh. Little-endian frames, big-endian Recap
# payloads, NDJSON lines.
import json, struct

def frame(ftype, key, payload=b"", seq=None, time=None, resume=False):
    flags = (1 if seq is not None else 0) | (2 if time is not None else 0) | (4 if resume else 0)
    body = bytes([len(key)]) + key.encode()
    if seq is not None:
        body += struct.pack("<Q", seq)
    if time is not None:
        body += struct.pack("<Q", time)
    body += payload
    return struct.pack("<BBBBI", 0xD7, 1, ftype, flags, len(body)) + body

def open_payload(fmt, start=0, token=b"", recap_header=b""):
    return struct.pack("<Bq", fmt, start) + bytes([len(token)]) + token + recap_header

def onfoot_body(x):
    # block bytes 4..71: lr, ud, keys, pos, quat, health, armour, weapon, special, vel, surf, ids
    return struct.pack("<hhH3f4fBBBB3f3fHHH", 0, -128, 8, 2500.0 + x, -1670.0, 13.5, 1.0, 0.0,
                       0.0, 0.0, 100, 0, 22, 0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 1189, 0x8004)

def vehicle_body(x):
    return struct.pack("<HhhH4f3f3ffBBBBBHI", 13, 0, 128, 8, 1.0, 0.0, 0.0, 0.0, 2008.0 + x,
                       -2493.0, 13.4, 0.0, 0.4, 0.0, 1000.0, 100, 0, 0, 1, 0, 0, 5000)

def bstr(s):
    b = s.encode()
    return bytes([len(b)]) + b

def recap_header():
    body = bstr("run") + bstr("Steve") + bstr("069a79f4-44e9-4726-a5be-fca90e38aaf5") + bstr("world")
    body += struct.pack(">3dqqIiq", 0.0, 64.0, 0.0, 1700000000000, 0, 0, 0, 6000)
    return b"RCAP" + bytes([4]) + struct.pack(">H", len(body)) + body

def item(key, count=1, data=b""):
    if not key:
        return b"\x00"
    return bstr(key) + bytes([count, 0]) + struct.pack(">H", len(data)) + data

def full_state(x):
    p = struct.pack(">9dHBBBff", x, 64.0, -3.5, 90.0, 0.0, 90.0, 0.0, -0.0784, 0.0, 0x200, 0, 0, 0,
                    20.0, 0.0)
    p += item("minecraft:diamond_sword", 1, b"\x0a\x00\x00") + item("") * 5
    p += struct.pack(">H", 2) + bytes([0]) + item("minecraft:bread", 5) + bytes([40]) + item("minecraft:shield")
    return p

def chat(text):
    b = text.encode()
    return bytes([0x1D]) + struct.pack(">H", len(b)) + b

def binary_session():
    out = frame(1, "foot1", open_payload(1, 1700000000000, b"token"), seq=0)
    for i in range(3):
        out += frame(2, "foot1" if i == 0 else "", onfoot_body(i), seq=i + 1, time=100 * i)
    out += frame(1, "car", open_payload(2)) + frame(2, "car", vehicle_body(1), time=5)
    out += frame(2, "car", vehicle_body(2))  # untimed
    out += frame(1, "mc", open_payload(3, 0, b"", recap_header()))
    out += frame(2, "mc", full_state(1.5), time=0) + frame(3, "mc", chat("hi"), time=0)
    out += frame(2, "mc", full_state(2.5), time=4) + frame(3, "mc", bytes([0x23]), time=4)
    out += frame(4, "mc", struct.pack("<Q", 10)) + frame(5, "mc", struct.pack("<q", 1700000001000))
    # samp-player: an on-foot state, then a vehicle one with model 411 and seat 0
    out += frame(1, "p1", open_payload(5)) + frame(2, "p1", b"\x02" + onfoot_body(3), time=7)
    out += frame(2, "p1", struct.pack("<BHB", 1, 411, 0) + vehicle_body(3), time=9)
    # instant replay: a save of the last 100 ms labelled "clip"
    out += frame(6, "foot1", struct.pack("<IB", 100, 4) + b"clip") + frame(5, "p1")
    out += frame(4, "car") + frame(5, "car") + frame(5, "foot1")
    return out

def ndjson_session():
    lines = [
        {"type": "open", "session": "p", "format": "samp-vehicle", "start_time": 5},
        {"type": "open", "session": "p", "format": "samp-vehicle", "auth": "tok", "resume": True},
        {"type": "flush", "session": "p", "end_tick": 3},
        {"type": "save", "session": "p", "last_ms": 500, "label": "clip"},
        {"type": "close"},
        {"type": "event", "session": "q", "tick": 1, "action": "TOTEM"},
    ]
    return "".join(json.dumps(l) + "\n" for l in lines).encode()
