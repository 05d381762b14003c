#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes small synthetic .rec seeds for fuzz_rec_reader into $1: one of each layout the probe
# knows (standard, header-only, partial block, legacy 56/75, VC:MP-like, text-mangled).
set -euo pipefail
dir=${1:?usage: fuzz_rec_reader.sh DIR}
mkdir -p "$dir"
python3 - "$dir" <<'PY'
import math, struct, sys
out = sys.argv[1]

def write(name, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)

def quat(yaw):
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))

def onfoot(t):
    return struct.pack("<IhhH3f4fBBBB3f3fHHH", t, 0, -128, 8, 2500.0 + t / 100, -1670.0, 13.5,
                       *quat(t / 1000), 100, 0, 22 | 0x80, 0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0,
                       2005, 1189, 0x8004)

def vehicle(t):
    return struct.pack("<IHhhH4f3f3ffBBBBBHI", t, 13, 0, 128, 8, *quat(t / 2000), 2008.0,
                       -2493.0 + t / 50, 13.4, 0.0, 0.4, 0.0, 1000.0, 100, 0, 0, 1, 0, 0,
                       5000 | (4000 << 16))

def legacy56(t):
    return struct.pack("<IhhH3ffBBBB3f3fH", t, 0, 0, 0, 2480.0, -1660.0, 13.3, 96.8, 100, 0, 0, 7,
                       0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0)

def legacy75(t):
    return struct.pack("<IHhhH3f3f3f3ffBBBBBHI", t, 400, 0, 0, 0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
                       1500.0, -2400.0, 14.0, 0.0, 0.3, 0.0, 3000.0, 100, 0, 0, 0, 0, 0, 0)

hdr = lambda sig, typ: struct.pack("<II", sig, typ)
onfoot_file = hdr(1000, 2) + b"".join(onfoot(100 + 50 * i) for i in range(3))
write("onfoot.rec", onfoot_file)
write("vehicle.rec", hdr(1000, 1) + b"".join(vehicle(t) for t in (31, 141, 141, 90)))
write("header_only.rec", hdr(1000, 0))
write("partial.rec", onfoot_file + b"\xab" * 10)
write("bad_signature.rec", hdr(999, 1) + vehicle(0))
write("legacy56.rec", hdr(1000, 2) + b"".join(legacy56(339 + 52 * i) for i in range(3)))
write("headerless75.rec", b"".join(legacy75(78 + 77 * i) for i in range(2)))
write("vcmp.rec", hdr(1001, 1) + struct.pack("<II4fBBBB", 40, 0, -378.5, -537.2, 17.3, 1.57,
                                              100, 0, 21, 0) + bytes(48))
mangled = bytearray()
for b in onfoot_file[:100]:
    mangled += b" " if b == 0 else bytes([b]) if b < 0x80 else bytes([0xC0 | b >> 6, 0x80 | b & 0x3F])
write("textmangled.rec", bytes(mangled))
PY
