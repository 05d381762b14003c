#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_sc2_replay in $1: the corpus replays under 40 KB (RECD_CORPUS_DIR/sc2) and cut
# copies of them, or, without the corpus, a bare replay header so the fuzzer still has a start.
set -euo pipefail
dir=${1:?usage: fuzz_sc2_replay.sh DIR}
mkdir -p "$dir"
corpus="${RECD_CORPUS_DIR:-}/sc2"
if [ -d "$corpus" ]; then
    for f in "$corpus"/*.SC2Replay; do
        size=$(stat -c %s "$f")
        [ "$size" -le 40000 ] || continue
        name=$(basename "$f" .SC2Replay)
        cp "$f" "$dir/$name"
        head -c $((size / 2)) "$f" >"$dir/$name.half"
    done
fi
python3 - "$dir" <<'PY'
import struct, sys
sig = b"StarCraft II replay\x1b11"
# struct of 2 fields: 0 signature blob, 3 elapsed game loops (int 100)
header = bytes([0x05, 0x04, 0x00, 0x02, len(sig) << 1]) + sig + bytes([0x06, 0x09, 0xC8, 0x01])
user = b"MPQ\x1b" + struct.pack("<III", 512, 1024, len(header)) + header
open(sys.argv[1] + "/header_only", "wb").write(user + bytes(1024 - len(user)) + b"MPQ\x1a" + bytes(40))
PY
