"""Profiling recd during a benchmark run (`bench/run.sh full --only S1 --profile`): `perf record`
attached to the daemon's pid for the measured part of the run, summarised by symbol into
bench/results/profile-<scenario>.txt. Without a working perf the run goes on unprofiled and the
summary file says so (docs/performance.md shows the callgrind alternative)."""

import os
import shutil
import signal
import subprocess


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
                rows = [ln for ln in rep.stdout.decode(errors="replace").splitlines()
                        if ln.strip() and not ln.startswith("#")]
                f.write(f"== {title}\n" + "\n".join(rows[:45]) + "\n\n")
        if not os.environ.get("BENCH_KEEP_PERF_DATA"):
            os.remove(self.data)
        return self.out_txt
