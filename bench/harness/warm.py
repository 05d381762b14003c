"""Warm against fresh recd, side by side with the raw copy (docs/performance.md, "Targets
missed"). The harness starts every system afresh for each run, so recd's runs include first
touching the memory its batches need. This script starts recd ROUNDS times, replays one TCP
scenario's stream into it REPLAYS times (the first replay is a fresh process, the later ones a
warm one), and runs the raw copy once per round, alternating. It prints each replay and the
medians. Usage, after `bash bench/build.sh` and one `make bench` (which prepares the streams):

    python3 bench/harness/warm.py [--scenario S2] [--rounds 4] [--replays 3]
"""

import argparse
import os
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import prepared  # noqa: E402
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
    tcp = [k for k, v in scenarios.FULL.items() if v["kind"] == "tcp"]
    if a.scenario.upper() not in tcp:
        sys.exit(f"warm.py: --scenario {a.scenario}: choose one of the TCP scenarios, "
                 f"{', '.join(tcp)} (only they replay into one process)")
    sc = scenarios.FULL[a.scenario.upper()]
    env = bench.Env(bench.SRC, a.build, a.work)
    prep = prepared.ensure(env, f"{a.scenario.upper()}-full", sc["format"], sc["sessions"],
                           scenarios.prepared_samples(sc), scenarios.encodings(sc),
                           prefix=a.scenario.lower() + "-", log=bench.log)
    states, sessions = prep.meta["states"], prep.meta["sessions"]
    fresh, warm, raw = [], [], []
    run_dir = os.path.join(a.work, "warm")
    for rnd in range(a.rounds):
        runs.fresh_dir(run_dir)
        recd = runs.make_system(env, "recd", run_dir, sc)  # configured as the harness's runs
        recd.start(tcp=True)
        try:
            for rep in range(1, a.replays + 1):
                pid = recd.proc.pid  # its main thread runs the loop
                faults0, cpu0 = procs.minor_faults(pid, pid), procs.cpu_seconds(pid, pid)
                sent = procs.run_json([env.benchgen, "send-tcp", "--to",
                                       f"127.0.0.1:{recd.tcp_port}",
                                       "--conn", ",".join(prep.files(sc["input"]))], timeout=600)
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
    print(f"medians: fresh recd {med['fresh'] / 1e6:.2f}, warm recd "
          f"{med.get('warm', 0) / 1e6:.2f}, raw {med['raw'] / 1e6:.2f} M samples/s; "
          f"fresh/raw {med['fresh'] / med['raw']:.2f}x, warm/raw {med.get('warm', 0) / med['raw']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
