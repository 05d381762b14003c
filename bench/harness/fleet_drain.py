#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""S8's consumer alone: S8's quick stream is published into a fresh JetStream while no recd pulls
(one instance is started only to create the stream and consumers, then stopped), then N recd
instances are started and timed until every message is written and acknowledged. Shows how fast
the fleet drains a backlog without a publisher on the machine; not part of `make bench`
(docs/performance.md, "JetStream (S8)"). With --instances 2 the first instance claims all
partitions and hands half to the second while both pull: the run that found the abort in
docs/performance.md. Needs bench/build.sh's build-bench.
With --pack-bytes N the publisher packs (docs/fleet.md, "Packed messages"): the catch-up rate of
a backlog of packed messages. BENCH_NATS_PPROF=DIR profiles nats-server while the instances
drain (fleet.py) and prints its top functions. Usage: python3 bench/harness/fleet_drain.py [--instances N]
[--sessions N] [--samples N] [--pack-bytes N] [--outage-s S] [--work DIR] [--build DIR]
[--recd PATH]"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import fleet  # noqa: E402
import prepared  # noqa: E402
import procs  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=None, help="default: S8 quick's 200,000")
    ap.add_argument("--pack-bytes", type=int, default=0, help="0: one frame per message")
    ap.add_argument("--outage-s", type=float, default=0,
                    help="seconds between the last publish and the instances' start: the "
                         "outage the backlog waits out (nats-server drops idle block caches)")
    ap.add_argument("--work", default="/var/tmp/recd-bench-drain")
    ap.add_argument("--build", default=os.path.join(bench.SRC, "build-bench"),
                    help="where benchgen and rectool are (bench/build.sh's build-bench)")
    ap.add_argument("--recd", help="another recd binary, e.g. one built with AddressSanitizer")
    a = ap.parse_args()
    env = bench.Env(bench.SRC, a.build, a.work)
    if a.recd:
        env.recd = os.path.abspath(a.recd)
    why = fleet.missing(env)
    if why:
        print("skipped: " + why)
        return 77
    sc = dict(scenarios.QUICK["S8"], sessions=a.sessions)
    if a.samples:
        sc["samples"] = a.samples
    parts = sc["partitions"]
    prep = prepared.ensure(env, f"drain{a.sessions}-{sc['samples']}", sc["format"], a.sessions,
                           sc["samples"],
                           ["wire"], prefix="d-")
    run_dir = os.path.join(a.work, "run")
    runs.fresh_dir(run_dir)
    server = fleet.NatsServer(os.path.join(run_dir, "nats"), os.environ.get("BENCH_NATS_PPROF"))
    os.makedirs(server.dir)
    started = []

    def instance(i, tag):
        inst = fleet.RecdFleet(env, os.path.join(run_dir, f"recd-{i}-{tag}"), server.url(),
                               f"drain{i}", parts, sc["nats_max_in_flight"])
        os.makedirs(inst.dir)
        started.append(inst)
        inst.start(tcp=False)
        return inst

    try:
        server.start()
        setup = instance(0, "setup")
        procs.wait_for(lambda: setup.total("recd_nats_partitions_owned") == parts, 60, 0.2)
        setup.stop()
        argv = [env.benchgen, "send-nats", "--to", server.url(), "--partitions", str(parts)]
        for f in prep.files("wire"):
            argv += ["--file", f]
        if a.pack_bytes:
            argv += ["--pack-bytes", str(a.pack_bytes), "--linger-ms", "20"]
        out = subprocess.run(argv, stdout=subprocess.PIPE, timeout=300, check=True)
        sent = json.loads(out.stdout.decode().splitlines()[-1])
        msgs = sent["messages"]
        samples = prep.meta["states"]
        time.sleep(a.outage_s)
        t0 = time.monotonic()
        cpu0 = server.cpu_s()
        counts0 = server.counts()
        server.pprof_start(f"drain-{os.getpid()}")
        fleet_ = [instance(i, "run") for i in range(a.instances)]
        acked = lambda: sum(i.total("recd_nats_acked_total") for i in fleet_)  # noqa: E731
        procs.wait_for(lambda: acked() >= msgs or any(i.proc.poll() is not None for i in fleet_),
                       300, 0.05)
        done = acked() >= msgs
        t1 = time.monotonic()
        server_top = server.pprof_finish(12)
        crashed = [i.dir for i in fleet_ if i.proc.poll() is not None]
        recd_cpu = sum(i.usage()["cpu_s"] for i in fleet_ if i.proc.poll() is None)
        print(f"published {sent['messages']:,} messages in {sent['t_acked'] - sent['t_first']:.2f}"
              f" s; {a.instances} instance(s) {'drained' if done else 'did NOT drain'} them in "
              f"{t1 - t0:.2f} s from their start ({msgs / (t1 - t0):,.0f} messages/s, "
              f"{samples / (t1 - t0):,.0f} samples/s); recd CPU "
              f"{recd_cpu:.2f} s (whole processes, start-up included), nats-server CPU "
              f"{server.cpu_s() - cpu0:.2f} s" + (f"; EXITED: {crashed}" if crashed else ""))
        counts1 = server.counts()
        m = [i.metrics() or {"totals": {}} for i in fleet_ if i.proc.poll() is None]
        tot = {k: sum(x["totals"].get(f"recd_nats_{k}_total", 0) for x in m)
               for k in ("acked", "ack_frames", "pull_requests", "session_record_writes")}
        print(f"nats-server messages in {counts1['in_msgs'] - counts0['in_msgs']:,}, out "
              f"{counts1['out_msgs'] - counts0['out_msgs']:,}; recd {json.dumps(tot)}")
        for k, v in counts1["conns"].items():
            v0 = counts0["conns"].get(k, (0, 0))
            print(f"  connection {k}: in {v[0] - v0[0]:,} out {v[1] - v0[1]:,}")
        if server_top:
            print(f"nats-server profile, {server_top['total_ns'] / 1e9:.2f} CPU s; inclusive:")
            for r in server_top["inclusive"]:
                print(f"  {r['share'] * 100:5.1f} %  {r['function']}")
        return 0 if done and not crashed else 1
    finally:
        for inst in started:
            inst.stop()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
