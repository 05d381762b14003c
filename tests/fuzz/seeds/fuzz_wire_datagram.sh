#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes datagram seeds for fuzz_wire_datagram into $1: one setup byte, then one datagram.
set -euo pipefail
dir=${1:?usage: fuzz_wire_datagram.sh DIR}
mkdir -p "$dir"
PYTHONPATH="$(dirname "$0")" python3 - "$dir" <<'PY'
import struct, sys
import wire_frames as w
out = sys.argv[1]

def write(name, setup, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(bytes([setup]) + data)

full = w.frame(1, "foot1", w.open_payload(1)) + b"".join(
    w.frame(2, "foot1", w.onfoot_body(i), seq=i, time=50 * i) for i in range(4))
write("binary", 0, full)
write("binary_registry_states", 8 | 1, b"".join(
    w.frame(2, "f", w.onfoot_body(i), time=i) for i in range(3)) + w.frame(2, "v", w.vehicle_body(0)))
write("recap", 1, w.frame(1, "mc", w.open_payload(3, 0, b"", w.recap_header())) +
      w.frame(2, "mc", w.full_state(0.5), time=0) + w.frame(3, "mc", w.chat("gg"), time=0))
write("continuation_refused", 0, full + w.frame(5, ""))
# A datagram of a protected session: its open as a resume with the token, then its states.
write("resume_with_token", 0, w.frame(1, "foot1", w.open_payload(1, 0, b"token"), resume=True) +
      b"".join(w.frame(2, "foot1", w.onfoot_body(i), time=i) for i in range(2)))
write("resume_on_state_refused", 0, w.frame(2, "foot1", w.onfoot_body(0), resume=True))
write("ndjson", 2, w.ndjson_session())
write("ndjson_last_line", 0, b'{"type":"open","session":"a","format":"recap","recap":{}}')
PY
