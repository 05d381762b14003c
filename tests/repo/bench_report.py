# SPDX-License-Identifier: MIT
"""The benchmark report without running a benchmark (tests/repo/bench_report.sh): every results
JSON kept in bench/results/ renders again with today's report code (--rerender), and a made-up
run with warm runs (bench/harness/warm.py) judges each S2 target on the fresh runs and on the warm
ones, in rows that say which, while a run without warm runs keeps its rows as they were."""

import glob
import json
import os
import subprocess
import sys
import tempfile

SRC = sys.argv[1]
sys.path.insert(0, os.path.join(SRC, "bench", "harness"))

import bench  # noqa: E402
import report  # noqa: E402
import scenarios  # noqa: E402


def run(system, sps, **more):
    r = {"system": system, "samples": 1_000_000, "samples_per_s": sps, "cpu_s": 1.0,
         "hwm_kib": 1024, "bytes_per_sample": 70.0, "lost": 0, "invalid": 0}
    if system == "recd":
        r.update(run_cpu_s=0.6, loop_cpu_s=0.5, sender_cpu_s=0.1, minflt=1000, flush_p99_s=0.005)
    r.update(more)
    return r


def runs(recd, rsyslog, raw):
    return {"recd": [run("recd", recd)], "rsyslog": [run("rsyslog", rsyslog)],
            "raw": [run("raw", raw)]}


def rendered(results):
    for r in results.values():
        r["summary"] = report.summarize_tcp(r["runs"])
        if "warm" in r:
            r["warm"]["summary"] = report.summarize_tcp(r["warm"]["runs"])
    info = {"generated": "test", "elapsed_s": 60, "nproc": 2, "cpu": "x", "memory_gib": 1,
            "kernel": "k", "os": "o", "rsyslog": "r", "zlib": "z", "loadavg_start": ["0"] * 3,
            "loadavg_end": ["0"] * 3, "source": "abc"}
    specs = {k: v for k, v in scenarios.FULL.items() if k in results}
    return bench.render("full", info, specs, results)


def expect(text, line, present=True):
    if (line in text) != present:
        sys.exit(f"bench_report: {'missing' if present else 'unexpected'}: {line}\n\n{text}")


def main():
    warm = rendered({"S2": {"runs": runs(8e6, 1e6, 20e6), "warm": {"runs": runs(11e6, 1e6, 20e6)}}})
    expect(warm, "| S2 fresh: recd >= 0.5x raw socket-to-file | 0.40x | missed |")
    expect(warm, "| S2 warm: recd >= 0.5x raw socket-to-file | 0.55x | met |")
    expect(warm, "| S2 fresh: recd >= 5x rsyslog samples/s | 8.00x | met |")
    expect(warm, "| S2 warm: recd >= 5x rsyslog samples/s | 11.00x | met |")
    expect(warm, "#### S2, warm: the second replay into the same running process")
    expect(warm, "| S2 fresh | 0.500 s |")
    expect(warm, "| S2 warm | 0.500 s |")
    fresh = rendered({"S2": {"runs": runs(8e6, 1e6, 20e6)}})
    expect(fresh, "| S2: recd >= 0.5x raw socket-to-file | 0.40x | missed |")
    expect(fresh, "warm", present=False)

    kept = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(SRC, "bench", "results", "*.json"))):
            with open(path) as f:
                saved = json.load(f)
            if "generated" not in saved.get("machine", {}):
                continue  # not a bench.py run (stalls.py) or from before --rerender existed
            res = subprocess.run([sys.executable, "-B", os.path.join(SRC, "bench", "harness",
                                                                     "bench.py"),
                                  "--rerender", path, "--results", os.path.join(tmp, "r.md"),
                                  "--src", SRC, "--build", tmp, "--work", tmp],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if res.returncode != 0:
                sys.exit(f"bench_report: --rerender {path} failed:\n{res.stderr[-2000:]}")
            kept += 1
    print(f"bench_report: fresh and warm targets judged apart; {kept} kept results rerendered")


if __name__ == "__main__":
    main()
