#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Loop stalls and page faults, recd builds side by side (docs/performance.md, "Loop
stalls"). For each build, alternately: S4's 1,000 sessions at one UDP rate, then the
recd_loop_lag_seconds histogram, the kernel's drops and the loss; and S2's TCP replay with recd's
minor page faults and CPU per 1M samples. Counts, not wall-clock rates, so a busy machine moves
them little.
  usage: stalls.py BUILD... [--skip-s2] [--skip-s4] [--rate 200000] [--seconds 3] [--reps 2] [--s2-samples N]"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import metrics  # noqa: E402
import procs  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402


def lag_buckets(m):
    """{le: count} of recd_loop_lag_seconds (cumulative, as exposed)."""
    return {lab["le"]: v for n, lab, v in m["series"] if n == "recd_loop_lag_seconds_bucket"}



def loop_sched(pid):
    """The loop thread's CPU time and time spent runnable but waiting for a CPU, in seconds
    (/proc schedstat), since recd started."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        run_ns, wait_ns, _ = (int(x) for x in f.read().split())
    return {"run_s": run_ns / 1e9, "runqueue_wait_s": wait_ns / 1e9}


def udp_extras(sysm):
    m = sysm.metrics()
    return {"lag": lag_buckets(m) if m else {}, "loop_sched": loop_sched(sysm.proc.pid),
            "kernel_drops_metric": m["totals"].get("recd_udp_kernel_drops_total") if m else None,
            "minflt": procs.minor_faults(sysm.proc.pid)}


def tcp_extras(sysm):
    m = sysm.metrics()
    return {"lag": lag_buckets(m) if m else {}}


def udp_run(env, sc, prep, rate, work):
    return runs.udp_step(env, sc, prep, "recd", rate, os.path.join(work, "run"), extras=udp_extras)


def tcp_run(env, sc, prep, work):
    return runs.tcp(env, sc, prep, "recd", os.path.join(work, "run"), extras=tcp_extras)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rate", type=int, default=200_000)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--s2-samples", type=int, default=2_000_000)
    ap.add_argument("--skip-s2", action="store_true")
    ap.add_argument("--skip-s4", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    work = os.environ.get("BENCH_WORK", "/var/tmp/recd-bench")
    envs = [bench.Env(bench.SRC, os.path.abspath(b), work) for b in a.builds]
    s4 = dict(scenarios.FULL["S4"], seconds=a.seconds, rates=[a.rate])
    s2 = dict(scenarios.FULL["S2"], samples=a.s2_samples)
    # Streams come from the first build's benchgen and serve both (same bytes for both builds).
    p4 = None if a.skip_s4 else bench.prepare(envs[0], "S4", s4, f"stalls{a.seconds}")
    p2 = None if a.skip_s2 else bench.prepare(envs[0], "S2", s2, "stalls")
    out = {"rate": a.rate, "seconds": a.seconds, "builds": a.builds, "udp": [], "s2": []}
    for rep in range(a.reps):
        order = envs if rep % 2 == 0 else envs[::-1]
        for env in order:
            if a.skip_s4:
                r = None
            else:
                r = udp_run(env, s4, p4, a.rate, work)
                r["build"] = env.build
                out["udp"].append(r)
            if r:
                print(f"S4 {os.path.basename(env.build):14s} {a.rate / 1e3:.0f}k/s sent {r['sent']:,} lost "
                  f"{r['lost']:,} kernel drops {r['kernel_rcvbuf_drops']} (metric "
                  f"{r.get('kernel_drops_metric')}) loop {r.get('loop_sched')} lag {r.get('lag')}", flush=True)
            if p2:
                t = tcp_run(env, s2, p2, work)
                t["build"] = env.build
                out["s2"].append(t)
                n = t["samples"]
                print(f"S2 {os.path.basename(env.build):14s} {t['samples_per_s'] / 1e6:.2f} M/s cpu "
                      f"{t['run_cpu_s'] * 1e6 / n:.3f} s/1M (loop {t['loop_cpu_s'] * 1e6 / n:.3f}) minflt {t['minflt']:,} "
                      f"({t['minflt'] * 1e6 / n:,.0f} per 1M) hwm {t['hwm_kib'] / 1024:.0f} MiB",
                      flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1, default=str)
    print(markdown(out))


def markdown(out):
    """Every run as one table row, in the order they ran."""
    rows = ["| build | S4 lost | kernel drops (metric) | loop runqueue wait s | iterations | "
            "> 2 ms | > 5 ms | > 10 ms | > 20 ms |", "|---|---|---|---|---|---|---|---|---|"]
    for r in out["udp"]:
        lag = r.get("lag") or {}
        n = lag.get("+Inf", 0)
        over = [int(n - lag.get(b, n)) for b in ("0.002", "0.005", "0.01", "0.02")]
        rows.append(f"| {r['build']} | {r['lost']:,} | {r.get('kernel_drops_metric')} | "
                    f"{(r.get('loop_sched') or {}).get('runqueue_wait_s', 0):.2f} | {int(n):,} | "
                    + " | ".join(str(o) for o in over) + " |")
    rows += ["", "| build | S2 M samples/s | CPU s per 1M, all threads / loop | minor faults per 1M | "
             "peak RSS MiB |", "|---|---|---|---|---|"]
    for t in out["s2"]:
        n = t["samples"]
        rows.append(f"| {t['build']} | {t['samples_per_s'] / 1e6:.2f} | {t['run_cpu_s'] * 1e6 / n:.3f} / "
                    f"{t['loop_cpu_s'] * 1e6 / n:.3f} | "
                    f"{t['minflt'] * 1e6 / n:,.0f} | {t['hwm_kib'] / 1024:.0f} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
