#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes small synthetic .recap seeds for fuzz_recap_decoder into $1: header only, a multi-member
# file touching state, event, skip and extension actions, a version-1 header, a cut file, and an
# empty member before the first tick.
set -euo pipefail
dir=${1:?usage: fuzz_recap_decoder.sh DIR}
mkdir -p "$dir"
python3 - "$dir" <<'PY'
import gzip, struct, sys
out = sys.argv[1]

def write(name, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)

def s8(b):  # str: u8 length + UTF-8
    return bytes([len(b)]) + b

def header(version=4, ext=b""):
    body = s8(b"seed") + s8(b"Steve") + s8(b"8667ba71-b85a-4004-af54-457a9734eed7") + s8(b"world")
    body += struct.pack(">3dqqI", 1.0, 64.0, -1.0, 1767225600000, 0, 0)
    if version >= 2:
        body += struct.pack(">iq", 0, 6000)
    body += ext
    return b"RCAP" + bytes([version]) + struct.pack(">H", len(body)) + body

encoder = bytes([3]) + struct.pack(">H", 9) + struct.pack(">IBI", 200, 6, 65536)
item = s8(b"minecraft:stone") + bytes([1, 0]) + struct.pack(">H", 0)
full = bytes([0x01]) + struct.pack(">9d", 0.5, 64, 0.5, 90, 0, 90, 0, -0.0784, 0)
full += struct.pack(">HBBBff", 1 << 9, 0, 0, 0, 20.0, 0.0) + item + b"\x00" * 5
full += struct.pack(">H", 1) + bytes([3]) + item + b"\x0b"
tick1 = b"\x02\x41\x01" + struct.pack(">hh", 10, 100)                  # x SHORT, yaw SHORT
tick1 += b"\x05\x00" + b"\x1d" + struct.pack(">H", 2) + b"hi" + b"\x0b"  # swing, chat
skips = b"\x0c\x05\x0c\xff"
tick2 = b"\x04\x00" + item + b"\x2a" + struct.pack(">H", 1) + b"\x03\x00" + b"\x0b"
tick3 = b"\xff\x07" + struct.pack(">I", 2) + b"\xab\xcd" + b"\x03\x02\x00\x0b"
tick4 = b"\x2b" + struct.pack(">H", 1) + struct.pack(">iii", 1, 2, 3) + struct.pack(">H", 5) + b"stone\x0b"

def member(raw):
    return gzip.compress(raw, compresslevel=6, mtime=0)

frames = member(full + tick1) + member(skips + tick2) + member(tick3 + tick4)
write("header_only.recap", header(ext=encoder))
write("multi_member.recap", header(ext=encoder) + frames)
write("version1.recap", header(version=1) + member(full + tick1 + skips))
write("cut.recap", (header(ext=encoder) + frames)[:-7])
write("unknown_ext.recap", header(ext=encoder + b"\x09\x00\x01x") + member(full))
write("empty_first_member.recap", header(ext=encoder) + member(b"") + member(full + tick1))
PY
