#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes wire stream seeds for fuzz_wire_stream into $1. Each input starts with two control bytes
# (chunk size, decoder setup) followed by a binary or NDJSON stream.
set -euo pipefail
dir=${1:?usage: fuzz_wire_stream.sh DIR}
mkdir -p "$dir"
PYTHONPATH="$(dirname "$0")" python3 - "$dir" <<'PY'
import sys
import wire_frames as w
out = sys.argv[1]

def write(name, setup_chunk, setup, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(bytes([setup_chunk, setup]) + data)

b = w.binary_session()
write("binary_whole", 0, 0, b)
write("binary_bytewise", 1, 1, b)
write("binary_chunks7_registry", 7, 8 | 1, b)
write("binary_small_max", 13, 4, b)
write("binary_cut", 5, 0, b[:-3])
write("ndjson", 3, 2, w.ndjson_session())
write("ndjson_auto_registry", 9, 8, b"\r\n" + w.ndjson_session())
write("bad_magic", 0, 0, b"\xd8\x01\x05\x00\x01\x00\x00\x00\x00")
write("resume", 0, 0, w.frame(1, "foot1", w.open_payload(1, 0, b"token"), resume=True) +
      w.frame(2, "", w.onfoot_body(1), time=1))
PY
