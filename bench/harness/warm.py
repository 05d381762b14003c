# SPDX-License-Identifier: MIT
"""Warm against fresh recd, side by side with the raw copy (docs/performance.md, "Targets
missed"). The harness starts every system afresh for each run, so recd's runs include first
touching the memory its batches need. This script starts recd ROUNDS times, replays one TCP
scenario's stream into it REPLAYS times (the first replay is a fresh process, the later ones a
warm one), and runs the raw copy once per round, alternating. It prints each replay and the
medians. Usage, after `bash bench/build.sh` (the streams are prepared and cached on first use, as
by `make bench`):

    python3 bench/harness/warm.py [--scenario S2] [--rounds 4] [--replays 3]
"""

import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import procs  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenario", default="S2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--replays", type=int, default=3)
    ap.add_argument("--build", default=os.path.join(bench.SRC, "build-bench"))
    ap.add_argument("--work", default=os.environ.get("BENCH_WORK", "/var/tmp/recd-bench"))
    a = ap.parse_args()
    sid = a.scenario.upper()
    tcp = [k for k, v in scenarios.FULL.items() if v["kind"] == "tcp"]
    if sid not in tcp:
        sys.exit(f"warm.py: --scenario {a.scenario}: choose one of the TCP scenarios, "
                 f"{', '.join(tcp)} (only they replay into one process)")
    if a.rounds < 1 or a.replays < 1:
        sys.exit("warm.py: give --rounds and --replays of 1 or more (the first replay of each "
                 "round is the fresh one, the others the warm ones)")
    sc = scenarios.FULL[sid]
    env = bench.Env(bench.SRC, a.build, a.work)
    prep = bench.prepare(env, sid, sc, "full")
    states, sessions = prep.meta["states"], prep.meta["sessions"]
    fresh, warm, raw = [], [], []
    run_dir = os.path.join(a.work, "warm")
    for rnd in range(a.rounds):
        runs.fresh_dir(run_dir)
        recd = runs.make_system(env, "recd", run_dir, sc)  # configured as the harness's runs
        recd.start(tcp=True)
        try:
            pid = recd.proc.pid  # its main thread runs the loop
            send = runs.send_tcp_args(env, sc, prep, "recd", recd.tcp_port)
            for rep in range(1, a.replays + 1):
                faults0, cpu0 = procs.minor_faults(pid, pid), procs.cpu_seconds(pid, pid)
                sent = procs.run_json(send, timeout=600)
                t_done = recd.wait_finalized(rep * sessions, 600, interval=0.005)
                rate = states / (t_done - sent["t_first"])
                loop = procs.cpu_seconds(pid, pid) - cpu0
                faults = procs.minor_faults(pid, pid) - faults0
                (fresh if rep == 1 else warm).append(rate)
                print(f"round {rnd + 1} replay {rep} ({'fresh' if rep == 1 else 'warm'}): "
                      f"{rate / 1e6:.2f} M samples/s, loop {loop:.2f} CPU s, loop faults {faults}",
                      flush=True)
        finally:
            recd.stop()
            shutil.rmtree(run_dir, ignore_errors=True)
        r = runs.tcp(env, sc, prep, "raw", os.path.join(a.work, "warm-raw"))
        raw.append(r["samples_per_s"])
        print(f"round {rnd + 1} raw: {r['samples_per_s'] / 1e6:.2f} M samples/s", flush=True)
    med = {k: statistics.median(v) for k, v in (("fresh", fresh), ("warm", warm), ("raw", raw)) if v}
    warm_part = (f"warm recd {med['warm'] / 1e6:.2f}, " if warm else
                 "no warm replays (--replays 1), ")
    print(f"medians: fresh recd {med['fresh'] / 1e6:.2f}, {warm_part}raw {med['raw'] / 1e6:.2f} "
          f"M samples/s; fresh/raw {med['fresh'] / med['raw']:.2f}x"
          + (f", warm/raw {med['warm'] / med['raw']:.2f}x" if warm else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
