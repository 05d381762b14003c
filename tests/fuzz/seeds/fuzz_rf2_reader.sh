#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes rFactor 2 replay seeds for fuzz_rf2_reader into $1: the test writer's sample, plain and
# gzip'd ($RF2_SAMPLE_VCR, the rf2_sample_vcr test tool), cuts of it, and a bare header.
set -euo pipefail
dir=${1:?usage: fuzz_rf2_reader.sh DIR}
mkdir -p "$dir"
if [ -n "${RF2_SAMPLE_VCR:-}" ] && [ -x "$RF2_SAMPLE_VCR" ]; then
    "$RF2_SAMPLE_VCR" "$dir/sample.vcr"
    "$RF2_SAMPLE_VCR" --gzip "$dir/sample_gzip.vcr"
    head -c 700 "$dir/sample.vcr" >"$dir/cut_in_slices.vcr"
    head -c 300 "$dir/sample.vcr" >"$dir/cut_in_drivers.vcr"
fi
python3 - "$dir" <<'PY'
import struct, sys
def s(n, b): return struct.pack({1: "<B", 2: "<H", 4: "<I"}[n], len(b)) + b
body = b"seed\nIRSR" + struct.pack("<f", 1.08) + s(4, b"a.rfm") + b"\0" * 4 + s(4, b"") + s(4, b"t.scn")
body += s(4, b"t.aiw") + s(2, b"Mod") + s(2, b"1") + s(2, b"u") + s(2, b"T") + bytes([0, 10]) + bytes(67)
body += struct.pack("<I", 1) + bytes([0]) + s(1, b"D") + s(1, b"") + s(2, b"C") + s(2, b"1") + s(2, b"I")
body += bytes(32 + 48) + struct.pack("<ff", 0, 10)
body += struct.pack("<IIff", 1, 1, 0, 1) + struct.pack("<fH", 1, 1) + struct.pack("<IB", (3 << 29) | (6 << 17) | (11 << 8), 0) + bytes(11)
open(sys.argv[1] + "/minimal.vcr", "wb").write(body)
PY
