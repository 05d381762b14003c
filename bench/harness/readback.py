# SPDX-License-Identifier: MIT
"""Counting what reached the disk: recd's recordings read back with `rectool info`, rsyslog's
per-key files read line by line (through gzip when compressed), raw captures by size or by frame."""

import gzip
import json
import os
import subprocess
import zlib

RECTOOL_BATCH = 400  # files per rectool invocation (keeps argv far below the kernel limit)


def walk_files(root):
    for dirpath, _, names in os.walk(root):
        for n in names:
            yield os.path.join(dirpath, n)


def _rectool_objects(rectool, paths):
    res = subprocess.run([rectool, "info", "--json", *paths], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=600)
    text = res.stdout.decode("utf-8", "replace").strip()
    if not text:
        return []
    try:
        return [json.loads(text)]  # one file: one indented object
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def recd_outputs(rectool, root):
    """Samples (.rec blocks or Recap ticks) in finalized files, plus what was left unfinished;
    bytes are the recordings', index_bytes their seek-index sidecars' (FILE.idx)."""
    out = {"files": 0, "part_files": 0, "invalid": 0, "samples": 0, "bytes": 0, "index_bytes": 0}
    finals = []
    for p in walk_files(root):
        if p.endswith(".idx"):  # a seek-index sidecar: not a recording, its bytes counted apart
            out["index_bytes"] += os.path.getsize(p)
            continue
        out["bytes"] += os.path.getsize(p)
        if p.endswith(".part"):
            out["part_files"] += 1
        else:
            finals.append(p)
    out["files"] = len(finals)
    for i in range(0, len(finals), RECTOOL_BATCH):
        for obj in _rectool_objects(rectool, finals[i:i + RECTOOL_BATCH]):
            if not obj.get("valid", False):
                out["invalid"] += 1
            if "rec" in obj:
                out["samples"] += int(obj["rec"].get("blocks", 0))
            elif "recap" in obj:
                out["samples"] += int(obj["recap"].get("ticks", 0))
    return out


def _count_lines(path):
    """(lines, readable) for a plain or gzip file; a damaged gzip counts what came out first."""
    lines = 0
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return lines, True
                lines += chunk.count(b"\n")
    except (EOFError, OSError, zlib.error):
        return lines, False


def text_outputs(root, skip=()):
    """Lines in every file below root (rsyslog's per-key files) and whether each was readable."""
    out = {"files": 0, "invalid": 0, "lines": 0, "bytes": 0}
    for p in walk_files(root):
        if os.path.basename(p) in skip:
            continue
        out["files"] += 1
        out["bytes"] += os.path.getsize(p)
        n, ok = _count_lines(p)
        out["lines"] += n
        out["invalid"] += 0 if ok else 1
    return out


def raw_bytes(path):
    """Payload bytes of a raw capture (decompressed when it is .gz) and its size on disk."""
    size = os.path.getsize(path) if os.path.exists(path) else 0
    if not path.endswith(".gz"):
        return {"payload": size, "bytes": size, "invalid": 0}
    payload, invalid = 0, 0
    try:
        with gzip.open(path, "rb") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                payload += len(chunk)
    except (EOFError, OSError, zlib.error):
        invalid = 1
    return {"payload": payload, "bytes": size, "invalid": invalid}


def wire_frames(path):
    """Complete binary frames in a capture of datagrams written back to back (raw UDP)."""
    frames = 0
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos + 8 <= len(data):
        body = int.from_bytes(data[pos + 4:pos + 8], "little")
        if pos + 8 + body > len(data):
            break
        frames += 1
        pos += 8 + body
    return frames
