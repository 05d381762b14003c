# SPDX-License-Identifier: MIT
# Packed JetStream messages (docs/fleet.md, "Packed messages"): consecutive frames of one session
# in one message, after a header naming the session, the first and last seq and the frame count.
# Byte for byte what librecd's publisher builds (lib/src/wire/fleet_pack.c).
import struct
from typing import Optional

MAGIC = 0xD8  # a binary frame starts with 0xD7
VERSION = 1
FLAG_SEQS = 1  # every frame carries a seq, strictly increasing
HEAD = 24  # bytes before the key
DEFAULT_PACK_BYTES = 64 << 10
PACK_BYTES_MIN = 256
PACK_BYTES_MAX = 512 << 10
DEFAULT_LINGER_MS = 20
LINGER_MAX_MS = 10000


class Pack:
    """The frames of one session waiting to be published. The first frame added must name the
    session (key_len > 0), the later ones must not (key_len 0), as on a stream."""

    def __init__(self, key: str, opened: float = 0.0):
        self.key = key.encode("ascii")
        self.frames = bytearray()
        self.count = 0
        self.seqs = True
        self.first_seq = 0
        self.last_seq = 0
        self.opened = opened  # time.monotonic() of its first frame

    def add(self, frame: bytes, seq: Optional[int]) -> None:
        if seq is None or (self.count and seq <= self.last_seq):
            self.seqs = False
        if not self.count:
            self.first_seq = seq or 0
        self.last_seq = seq or 0
        self.frames += frame
        self.count += 1

    def __len__(self) -> int:
        """The packed message's size (what pack_bytes is compared with)."""
        return HEAD + len(self.key) + len(self.frames)

    def message(self) -> bytes:
        first, last = (self.first_seq, self.last_seq) if self.seqs else (0, 0)
        head = struct.pack("<BBBBIQQ", MAGIC, VERSION, FLAG_SEQS if self.seqs else 0,
                           len(self.key), self.count, first, last)
        return head + self.key + bytes(self.frames)
