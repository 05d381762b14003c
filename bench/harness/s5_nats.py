#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""S5 through JetStream (issue 37): S5's workload (`rectool send --synthetic`, samp-onfoot walk,
N sessions at R sample/s each for D s) published to a fresh `nats-server -js` and recorded by ONE
recd consuming it (`listen: nats://...`), to measure its memory against S5's budget; with --tcp
the same run over TCP first (runs.idle_sessions, S5 as `make bench` runs it), on the same machine.
Reads recd's and nats-server's RSS twice a second, the time until every session is open, every
file finalized and every message acknowledged, recd's loss, error and duplicate counters, and
reads every sample back. Not part of `make bench`. Needs bench/build.sh's build-bench.
Usage: python3 bench/harness/s5_nats.py [--tcp] [--sessions N] [--seconds D] [--linger 10s]
[--max-in-flight N] [--partitions N] [--work DIR] [--build DIR] [--out FILE.json]"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import fleet  # noqa: E402
import procs  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402
import systems  # noqa: E402

COUNTERS = ("recd_samples_total", "recd_lost_bytes_total", "recd_decode_errors_total",
            "recd_nats_duplicates_dropped_total", "recd_nats_redeliveries_total",
            "recd_nats_session_record_failures_total", "recd_nats_session_record_writes_total",
            "recd_nats_acked_total", "recd_nats_pull_requests_total",
            "recd_nats_sessions_taken_over_total", "recd_nats_lease_renew_failures_total",
            "recd_backpressure_events_total", "recd_files_finalized_total")


def nats_run(env, a, run_dir):
    runs.fresh_dir(run_dir)
    n = a.sessions
    server = fleet.NatsServer(os.path.join(run_dir, "nats"))
    os.makedirs(server.dir)
    res = {"system": "recd via nats", "sessions": n, "partitions": a.partitions,
           "max_in_flight": a.max_in_flight, "linger": a.linger}
    recd = None
    try:
        server.start()
        url = f"nats://127.0.0.1:{server.port}/bench.s5"
        recd = fleet.RecdFleet(env, os.path.join(run_dir, "recd"), url, "s5", a.partitions,
                               a.max_in_flight, lease_ttl="15s", max_sessions=2 * n)
        os.makedirs(recd.dir)
        recd.start(tcp=False)
        if not procs.wait_for(lambda: recd.total("recd_nats_partitions_owned") == a.partitions,
                              60, interval=0.2):
            raise procs.BenchError("recd did not claim every partition within 60 s")
        base = recd.usage()
        res.update(base_rss_kib=base["rss_kib"], nats_base_rss_kib=procs.status_kib(
            server.proc.pid, "VmRSS"))
        cpu0, ncpu0 = base["cpu_s"], server.cpu_s()
        # The publisher packs a session's frames for `linger` (buffer: room for every session's
        # pack, so none is published early for want of it).
        argv = [env.rectool, "send", "--synthetic", "--format", "samp-onfoot", "--scenario",
                "walk", "--sessions", str(n), "--rate", str(a.rate), "--duration",
                f"{a.seconds}s", "--seed", "1", "--session", "s5",
                "--partitions", str(a.partitions), "--max-in-flight", "1024",
                "--to", f"{url}?linger={a.linger}&buffer={a.buffer}"]
        res["argv"] = argv
        t0 = time.monotonic()
        sender = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        samples, first_open, all_open = [], None, None
        deadline = t0 + a.seconds + 600
        done_at, sender_done = None, None
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if recd.proc.poll() is not None:
                raise procs.BenchError(f"recd exited with {recd.proc.returncode}")
            now = time.monotonic() - t0
            t = (recd.metrics() or {"totals": {}})["totals"]
            row = {"t": round(now, 2), "rss_kib": procs.status_kib(recd.proc.pid, "VmRSS"),
                   "nats_rss_kib": procs.status_kib(server.proc.pid, "VmRSS"),
                   "open": t.get("recd_sessions_open", 0),
                   "lag": t.get("recd_nats_consumer_lag_messages", 0),
                   "acked": t.get("recd_nats_acked_total", 0),
                   "samples": t.get("recd_samples_total", 0),
                   "finalized": t.get("recd_files_finalized_total", 0),
                   "buffered": t.get("recd_buffered_bytes", 0)}
            samples.append(row)
            if first_open is None and row["open"] > 0:
                first_open = now
            if all_open is None and row["open"] >= n:
                all_open = now
            if sender_done is None and sender.poll() is not None:
                sender_done = now
            if sender_done is not None:
                st = server.streams().get("RECD_bench_s5", {})
                if row["finalized"] >= n and row["acked"] >= (st.get("last_seq") or 0):
                    done_at = now
                    break
        if sender.poll() is None:
            sender.kill()
        out, err = sender.communicate(timeout=60)
        res["sender_out"] = out.decode()[-400:]
        res["sender_err"] = err.decode()[-400:]
        m = runs.SEND_SUMMARY.search(out.decode())
        if not m:
            raise procs.BenchError("rectool send failed: " + err.decode(errors="replace")[-300:])
        res["states_sent"] = int(m.group(2))
        res.update(first_open_s=first_open, all_open_s=all_open, sender_exit_s=sender_done,
                   done_s=done_at, samples=samples)
        res["open_span_s"] = all_open - first_open if all_open and first_open else None
        u = recd.usage()
        res.update(hwm_kib=u["hwm_kib"], rss_after_kib=u["rss_kib"], cpu_s=u["cpu_s"] - cpu0,
                   nats_hwm_kib=procs.status_kib(server.proc.pid, "VmHWM"),
                   nats_cpu_s=server.cpu_s() - ncpu0)
        t = recd.metrics()["totals"]
        res["counters"] = {k: t.get(k, 0) for k in COUNTERS}
        res["streams"] = server.streams()
        res["store_bytes"] = int(subprocess.run(["du", "-sb", server.store], stdout=subprocess.PIPE)
                                 .stdout.split()[0])
    finally:
        if recd:
            res["stop"] = recd.stop()
        res["nats_stop"] = server.stop()
    res["recd_log_tail"] = systems.tail(os.path.join(recd.dir, "recd.log"), 2000)
    rb = recd.readback()
    res.update(on_disk=rb["samples"], files=rb["files"], part_files=rb["part_files"],
               invalid=rb["invalid"], out_bytes=rb["bytes"])
    res["lost"] = res["states_sent"] - rb["samples"]
    res["kib_per_session"] = (res["hwm_kib"] - res["base_rss_kib"]) / n
    if not a.keep:
        shutil.rmtree(run_dir, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tcp", action="store_true", help="run S5 over TCP first, same machine")
    ap.add_argument("--no-nats", action="store_true")
    ap.add_argument("--sessions", type=int, default=100_000)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rate", type=float, default=1)
    ap.add_argument("--linger", default="10s")
    ap.add_argument("--buffer", default="512MiB")
    ap.add_argument("--max-in-flight", type=int, default=4096)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--work", default="/var/tmp/recd-bench-s5nats")
    ap.add_argument("--build", default=os.path.join(bench.SRC, "build-bench"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the nats run's directory")
    a = ap.parse_args()
    env = bench.Env(bench.SRC, a.build, a.work)
    os.makedirs(a.work, exist_ok=True)
    os.chmod(a.work, 0o755)
    results = {"loadavg_start": open("/proc/loadavg").read().split()[:3]}
    if a.tcp:
        sc = dict(scenarios.FULL["S5"], sessions=a.sessions, seconds=a.seconds, rate=a.rate)
        results["tcp"] = runs.idle_sessions(env, sc, os.path.join(a.work, "tcp"))
        print(json.dumps({k: v for k, v in results["tcp"].items() if k != "rss_samples_kib"}),
              flush=True)
    if not a.no_nats:
        results["nats"] = nats_run(env, a, os.path.join(a.work, "nats"))
        print(json.dumps({k: v for k, v in results["nats"].items() if k != "samples"}), flush=True)
    results["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
