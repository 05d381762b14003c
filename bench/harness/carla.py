# SPDX-License-Identifier: MIT
"""S7, concurrent CARLA episodes: the stream is made once from `rectool generate --format carla`
logs, one per episode, which `rectool send --speed max` interleaves by time into one TCP
connection of binary frames. A socat capture of that connection is the pre-encoded stream that
benchgen send-tcp replays into recd and into the raw copy, so the sender never encodes during a
run. Zero loss is checked frame by frame and byte by byte: each recd output log must equal the
episode's generated log (recd writes a CARLA session as CARLA would), and the raw capture must
equal the sent stream."""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import time

import procs
import readback

WIRE_STATE, WIRE_EVENT = 2, 3


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wire_counts(path):
    """{type: frames} of a stream of binary frames (docs/wire.md 2.1), and whether it ends on a
    frame boundary."""
    counts = {}
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos + 8 <= len(data):
        if data[pos] != 0xD7:
            break
        body = int.from_bytes(data[pos + 4:pos + 8], "little")
        if pos + 8 + body > len(data):
            break
        counts[data[pos + 2]] = counts.get(data[pos + 2], 0) + 1
        pos += 8 + body
    return counts, pos == len(data)


def log_frames(rectool, paths):
    """Frames in each CARLA log, by `rectool info --json` ({path: frames}, None if unreadable)."""
    out = {}
    for i in range(0, len(paths), readback.RECTOOL_BATCH):
        batch = paths[i:i + readback.RECTOOL_BATCH]
        objs = readback._rectool_objects(rectool, batch)
        by_file = {obj.get("file"): obj for obj in objs}
        for p in batch:
            obj = by_file.get(p, {})
            ok = obj.get("valid") and obj.get("format") == "carla-log" and "frames" in obj
            out[p] = int(obj["frames"]) if ok else None
    return out


class Prepared:
    """The S7 stream: one file of binary frames for one connection, plus the episodes' logs."""

    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "meta.json")) as f:
            self.meta = json.load(f)

    def files(self, encoding, parts=None, conn=0):
        return [os.path.join(self.path, "wire.bin")]

    def stream_bytes(self, encoding):
        return self.meta["bytes"]["wire"]


def ensure(env, name, sc, log=print):
    """The cached stream of scenario sc, made if the cache lacks it. Keyed by the parameters and by
    rectool's binary (its generator and encoder make the bytes)."""
    key = json.dumps([sc["sessions"], sc["actors"], sc["seconds"], sc.get("seed", 1),
                      _sha(env.rectool)[:16]])
    tag = hashlib.sha256(key.encode()).hexdigest()[:12]
    root = os.path.join(env.work, "prepared")
    path = os.path.join(root, f"{name}-{tag}")
    if os.path.exists(os.path.join(path, "meta.json")):
        return Prepared(path)
    os.makedirs(root, exist_ok=True)
    for old in os.listdir(root):
        if old.startswith(name + "-"):
            shutil.rmtree(os.path.join(root, old), ignore_errors=True)
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "logs"))
    t0 = time.monotonic()
    n = sc["sessions"]
    logs = [os.path.join(tmp, "logs", f"ep-{i + 1:03d}.log") for i in range(n)]
    for i, p in enumerate(logs):
        subprocess.run([env.rectool, "generate", "--format", "carla", "--scenario", "traffic",
                        "--actors", str(sc["actors"]), "--duration", f"{sc['seconds']}s",
                        "--seed", str(sc.get("seed", 1) + i), "-o", p],
                       check=True, stdout=subprocess.DEVNULL, timeout=600)
    wire = os.path.join(tmp, "wire.bin")
    _capture(env, logs, sc["session_prefix"], wire)
    counts, whole = wire_counts(wire)
    frames = log_frames(env.rectool, logs)
    if not whole or None in frames.values():
        raise procs.BenchError("S7: the captured stream or a generated log is not whole")
    if counts.get(WIRE_STATE, 0) != sum(frames.values()):
        raise procs.BenchError(f"S7: the stream holds {counts.get(WIRE_STATE, 0)} state frames, "
                               f"the logs {sum(frames.values())} frames")
    meta = {"sessions": n, "states": counts.get(WIRE_STATE, 0),
            "events": counts.get(WIRE_EVENT, 0), "frames_by_type": counts,
            "bytes": {"wire": os.path.getsize(wire)}, "wire_sha256": _sha(wire),
            # rectool send names the sessions PREFIX-1 .. PREFIX-N in file order
            "episodes": {f"{sc['session_prefix']}-{i + 1}": {
                "log": os.path.relpath(p, tmp), "sha256": _sha(p), "bytes": os.path.getsize(p),
                "frames": frames[p]} for i, p in enumerate(logs)}}
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    os.rename(tmp, path)
    log(f"  prepared {name}: {n} CARLA episodes x {sc['actors']} actors x {sc['seconds']} s, "
        f"{meta['states']:,} frames + {meta['events']:,} events, "
        f"{meta['bytes']['wire'] / 2**20:.0f} MiB of binary frames in {time.monotonic() - t0:.1f} s")
    return Prepared(path)


def _capture(env, logs, prefix, out):
    """The bytes `rectool send` puts on one connection for these logs, through a socat capture."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sink = subprocess.Popen([env.socat, "-u", "-b", "262144",
                             f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr", f"CREATE:{out}"],
                            stderr=subprocess.PIPE)
    try:
        if not procs.wait_for(lambda: procs.listening(port) or sink.poll() is not None, 30):
            raise procs.BenchError("S7: socat capture did not listen")
        subprocess.run([env.rectool, "send", *logs, "--to", f"tcp://127.0.0.1:{port}",
                        "--speed", "max", "--session", prefix],
                       check=True, stdout=subprocess.DEVNULL, timeout=1800)
        sink.wait(timeout=60)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    if sink.returncode != 0:
        raise procs.BenchError("S7: socat capture failed: " + sink.stderr.read().decode()[-300:])


def recd_readback(env, prep, out_root):
    """Frames in recd's finalized logs, and how many equal their episode's log byte for byte."""
    rb = {"files": 0, "part_files": 0, "invalid": 0, "samples": 0, "bytes": 0, "identical": 0,
          "differing": []}
    finals = {}
    for p in readback.walk_files(out_root):
        if p.endswith(".idx"):
            continue  # a log's seek-index sidecar (docs/formats/seek-index.md), not a log
        rb["bytes"] += os.path.getsize(p)
        if p.endswith(".part"):
            rb["part_files"] += 1
        else:
            finals[os.path.splitext(os.path.basename(p))[0]] = p
    rb["files"] = len(finals)
    frames = log_frames(env.rectool, list(finals.values()))
    for session, p in finals.items():
        if frames.get(p) is None:
            rb["invalid"] += 1
        else:
            rb["samples"] += frames[p]
        want = prep.meta["episodes"].get(session)
        if want and os.path.getsize(p) == want["bytes"] and _sha(p) == want["sha256"]:
            rb["identical"] += 1
        else:
            rb["differing"].append(session)
    rb["differing"] = rb["differing"][:10]
    return rb


def raw_readback(prep, capture):
    """State frames in the raw capture, and whether it is the sent stream byte for byte."""
    size = os.path.getsize(capture) if os.path.exists(capture) else 0
    counts, whole = wire_counts(capture) if size else ({}, True)
    same = size == prep.meta["bytes"]["wire"] and _sha(capture) == prep.meta["wire_sha256"]
    return {"payload": size, "bytes": size, "invalid": 0 if whole else 1,
            "samples": counts.get(WIRE_STATE, 0), "identical": 1 if same else 0}


def run(env, sc, prep, which, run_dir, profiler=None):
    """One S7 run of recd or raw (runs.tcp), with the frame-by-frame and byte-by-byte checks."""
    import runs  # here, not at the top: runs is only needed for a measured run
    seen = {}

    def read_back(sysm):
        seen.update(recd_readback(env, prep, sysm.out) if which == "recd"
                    else raw_readback(prep, sysm.path))
        return seen

    res = runs.tcp(env, sc, prep, which, run_dir, profiler=profiler, read_back=read_back)
    states = prep.meta["states"]
    res["frames_back"] = seen.get("samples", 0)
    res["lost"] = states - res["frames_back"]
    # recd: output logs equal to their episode's generated log; raw: 1 if the capture is the stream
    res["identical"] = seen.get("identical", 0)
    res["identical_of"] = prep.meta["sessions"] if which == "recd" else 1
    if seen.get("differing"):
        res["differing"] = seen["differing"]
    return res
