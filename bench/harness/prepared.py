# SPDX-License-Identifier: MIT
"""Prepared sample streams: runs `benchgen prepare` once per parameter set and keeps the result
under the work directory, keyed by the parameters and the code that renders them, so repeated
benchmark runs (and every system within one run) replay exactly the same bytes."""

import hashlib
import json
import os
import shutil
import subprocess
import time


class Prepared:
    def __init__(self, path):
        self.path = path
        with open(os.path.join(path, "meta.json")) as f:
            self.meta = json.load(f)

    def files(self, encoding, parts=("head", "body", "tail"), conn=0):
        return [os.path.join(self.path, f"{encoding}-{p}.{conn}") for p in parts]

    def body_lines(self):
        """Messages in the body of every text encoding (one line each)."""
        return self.meta["states"] + self.meta["events"]

    def stream_bytes(self, encoding):
        b = self.meta["bytes"][encoding]
        return b["head"] + b["body"] + b["tail"]


def _digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def ensure(env, name, fmt, sessions, samples, encodings, prefix, seed=1, scenario="walk",
           log=print):
    """Returns a Prepared for these parameters, generating it if the cache does not have it.
    name keys the cache slot (one parameter set is kept per name); prefix starts session keys."""
    # The streams depend on librecd (generator, encoders) and on benchgen's own rendering code,
    # not on the rest of benchgen: a change to the senders keeps the cache.
    code = [os.path.join(env.build, "lib", "librecd.a")] + [
        os.path.join(env.src, "bench", "gen", f) for f in ("prepare.c", "textline.c")]
    key = json.dumps([fmt, sessions, samples, sorted(encodings), seed, scenario,
                      [_digest(p) for p in code]])
    tag = hashlib.sha256(key.encode()).hexdigest()[:12]
    root = os.path.join(env.work, "prepared")
    path = os.path.join(root, f"{name}-{tag}")
    if os.path.exists(os.path.join(path, "meta.json")):
        return Prepared(path)
    for old in os.listdir(root) if os.path.isdir(root) else []:
        if old.startswith(name + "-"):  # an older parameter set of the same scenario
            shutil.rmtree(os.path.join(root, old), ignore_errors=True)
    tmp = path + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    t0 = time.monotonic()
    subprocess.run([env.benchgen, "prepare", "--format", fmt, "--scenario", scenario,
                    "--sessions", str(sessions), "--samples", str(samples), "--seed", str(seed),
                    "--prefix", prefix, "--encodings", ",".join(encodings),
                    "--out", tmp], check=True, stdout=subprocess.DEVNULL, timeout=1800)
    os.rename(tmp, path)
    log(f"  prepared {name}: {samples:,} samples for {sessions:,} sessions "
        f"({', '.join(encodings)}) in {time.monotonic() - t0:.1f} s")
    return Prepared(path)
