# SPDX-License-Identifier: MIT
"""Profiling recd during a benchmark run (`bench/run.sh full --only S1 --profile`): `perf record`
attached to the daemon's pid for the measured part of the run, summarised by symbol into
bench/results/profile-<scenario>.txt. Without a working perf the run goes on unprofiled and the
summary file says so (docs/performance.md shows the callgrind alternative)."""

import os
import re
import shutil
import signal
import subprocess

# Frames perf could not name (stripped libuv/jansson code, the unwinder's end marker) say
# nothing in a summary. The vDSO only holds the clock functions, so its unnamed addresses are
# clock reads (clock_gettime's body).
UNSYMBOLIZED = re.compile(r"\] 0x[0-9a-f]+\s*$")
VDSO = re.compile(r"(\[vdso\]\s+\[\.\] )0x[0-9a-f]+")


def _tidy(line):
    line = VDSO.sub(r"\1(clock reads in the vDSO)", line)
    return re.sub(r"\s+-\s+-\s*$", "", line.rstrip())


class Profiler:
    def __init__(self, out_txt):
        self.out_txt = out_txt
        self.data = out_txt + ".data"
        self.proc = None
        self.perf = shutil.which("perf")

    def attach(self, pid):
        if not self.perf:
            return
        self.proc = subprocess.Popen([self.perf, "record", "-q", "-F", "499", "--call-graph", "dwarf,16384", "-p", str(pid),
                                      "-o", self.data], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)

    def finish(self):
        """Stops perf and writes the summary; returns the summary's path."""
        with open(self.out_txt, "w") as f:
            if not self.perf or not self.proc:
                f.write("perf is not installed: no profile (see docs/performance.md)\n")
                return self.out_txt
            self.proc.send_signal(signal.SIGINT)
            try:
                _, err = self.proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                _, err = self.proc.communicate()
            if not os.path.exists(self.data):
                f.write("perf record failed: " + err.decode(errors="replace")[-300:] + "\n")
                return self.out_txt
            for title, args in (("self time by library", ["--no-children", "--sort", "dso"]),
                                ("self time by library and symbol",
                                 ["--no-children", "--sort", "dso,symbol"]),
                                ("time including callees, by symbol",
                                 ["--children", "--sort", "symbol"])):
                rep = subprocess.run([self.perf, "report", "-i", self.data, "--stdio", "-g", "none",
                                      "--percent-limit", "1.5", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, timeout=300)
                rows = [_tidy(ln) for ln in rep.stdout.decode(errors="replace").splitlines()
                        if ln.strip() and not ln.startswith("#")]
                rows = [ln for ln in rows if not UNSYMBOLIZED.search(ln)]
                f.write(f"== {title}\n" + "\n".join(rows[:45]) + "\n\n")
        if not os.environ.get("BENCH_KEEP_PERF_DATA"):
            os.remove(self.data)
        return self.out_txt
