#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fastest of three whole runs of a command by CPU time (user + system of the child, which a
busy shared machine disturbs less than wall time), printed in ns. Exits 1 when a run fails.
With --fresh PATH, PATH (a file or a folder) is removed before each run, outside the timing: every
run then writes new files, as a first export does, instead of also paying for the file system's
deletion of the previous run's output when it is replaced.
Usage: cpu_best_of3.py [--fresh PATH] COMMAND ARGS..."""
import os
import resource
import shutil
import subprocess
import sys

args = sys.argv[1:]
fresh = None
if args[:1] == ["--fresh"]:
    fresh, args = args[1], args[2:]

best = None
for _ in range(3):
    if fresh is not None:
        if os.path.isdir(fresh):
            shutil.rmtree(fresh)
        elif os.path.lexists(fresh):
            os.unlink(fresh)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = subprocess.call(args, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best = cpu if best is None else min(best, cpu)
print(max(int(best * 1e9), 1))
