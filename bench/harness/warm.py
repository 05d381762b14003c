# SPDX-License-Identifier: MIT
"""Warm runs (issue 42): every other run starts its system afresh, so recd's runs include first
touching the memory its batches need, which a service that has been running pays once. A warm run
starts the system, replays the scenario's stream into it once (untimed), waits until that pass is
on disk and the machine is quiet again, then replays the same stream a second time on the same
connection into the same process and measures only that second pass. recd, rsyslog and the raw
copy are warmed the same way (benchgen send-tcp --passes 2). `make bench` runs one after each
fresh run of the scenarios marked `warm` (scenarios.py); alone, for a side-by-side of one
scenario, after `bash bench/build.sh`:

    python3 bench/harness/warm.py [--scenario S2] [--rounds 4] [--systems recd,raw] [--mode full]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import metrics  # noqa: E402
import procs  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402

PASSES = 2  # the first warms the process, the second is measured


def tcp(env, sc, prep, which, run_dir):
    """A warm run of one system in TCP scenario sc: the same fields as runs.tcp, measured over
    the second pass only (CPU, page faults, flushes, the sender's CPU), plus the first pass's
    rate (first_pass_samples_per_s) and warm: True. Peak RSS is the process's over both passes;
    lost counts both passes' samples."""
    runs.fresh_dir(run_dir)
    states = prep.meta["states"]
    sysm = runs.make_system(env, which, run_dir, sc)
    res = {"system": which, "samples": states, "warm": True}
    timeout = runs._timeout(states)
    sysm.start(tcp=True)
    try:
        args = runs.send_tcp_args(env, sc, prep, which, sysm.tcp_port) + ["--passes", str(PASSES)]
        sender = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        try:
            first = _pass_line(sender, timeout)
            t_first_done = _stored(sysm, which, sc, prep, sender, 1, timeout)
            res["first_pass_samples_per_s"] = states / (t_first_done - first["t_first"])
            _quiet(sysm, which)
            before = _counters(sysm, which)
            sender.stdin.write(b"\n")
            sender.stdin.flush()
            t_done = _stored(sysm, which, sc, prep, sender, PASSES, timeout)
            res.update(_measured(sysm, which, before, _counters(sysm, which)))
            out, err = sender.communicate(timeout=timeout)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
        sent = runs._sender_json(out, err)  # the last line: the second pass
        res["sender_cpu_s"] = sent.get("cpu_s")
        res["seconds"] = t_done - sent["t_first"]
        res["send_seconds"] = sent["t_sent"] - sent["t_first"]
        res["samples_per_s"] = states / res["seconds"]
    finally:
        stop = sysm.stop(grace=1.5) if which == "rsyslog" else sysm.stop()
    res["stop"] = stop
    if which == "rsyslog":
        res["expected_lines"] = PASSES * prep.body_lines()
    elif which != "recd":
        res["expected_bytes"] = PASSES * prep.stream_bytes(sc["input"])
    runs._finish(res, which, PASSES * states, sysm.readback())  # bytes/sample over both passes
    runs._delete_tree(run_dir)
    return res


def _pass_line(sender, timeout):
    """The JSON line benchgen prints once every connection has sent a pass."""
    ready = procs.wait_for(lambda: sender.poll() is not None or _readable(sender.stdout), timeout,
                           interval=0.002)
    line = sender.stdout.readline() if ready else b""
    if not line:
        err = sender.stderr.read().decode(errors="replace") if sender.poll() is not None else ""
        raise procs.BenchError(f"benchgen send-tcp did not finish its first pass within "
                               f"{timeout:.0f} s: {err[-300:]}")
    return json.loads(line)


def _readable(stream):
    import select
    return bool(select.select([stream], [], [], 0)[0])


def _stored(sysm, which, sc, prep, sender, pass_no, timeout):
    """Monotonic time at which pass pass_no was on disk, as runs.tcp decides it for a fresh run
    (recd: every file finalized; rsyslog: the pass's sentinel; raw: everything written, and at the
    last pass socat and gzip exited)."""
    if which == "recd":
        if pass_no == PASSES and not procs.wait_for(lambda: sender.poll() is not None, timeout,
                                                    interval=0.002):
            raise procs.BenchError(f"recd did not take the second pass within {timeout:.0f} s")
        return sysm.wait_finalized(pass_no * prep.meta["sessions"], timeout,
                                   interval=sc.get("finalize_poll_s", 0.005))
    if which == "rsyslog":
        return sysm.wait_sentinel(pass_no, timeout)
    if pass_no == PASSES:
        return sysm.wait_exit(timeout)
    # socat is still reading the connection: done when it has written the whole pass (for the
    # gzip copy, into the pipe; _quiet then lets gzip finish the last of it).
    socat = _socat_pid(sysm.proc.pid)
    want = prep.stream_bytes(sc["input"])
    if not procs.wait_for(lambda: _written(socat) >= want, timeout, interval=0.002):
        raise procs.BenchError(f"{which} did not write the first pass within {timeout:.0f} s")
    return time.monotonic()


def _quiet(sysm, which):
    """Between the passes, untimed: rsyslog's asynchronous writer flushes within its 1 s
    flushInterval; recd's first pass moves aside, so the second creates the same names in the
    same empty folders a fresh run does (instead of finding them taken); then, as before every
    fresh run, dirty data is written back and clean caches dropped (runs.quiet_disk), and the
    process is given a moment with nothing to do."""
    if which == "rsyslog":
        time.sleep(1.5)
    if which == "recd":
        aside = os.path.join(sysm.out, ".pass-1")
        os.makedirs(aside)
        for name in os.listdir(sysm.out):
            if name != ".pass-1":
                os.rename(os.path.join(sysm.out, name), os.path.join(aside, name))
    runs.quiet_disk()
    pids = _tree(sysm.proc.pid)
    cpu = lambda: sum(_cpu(p) for p in pids)  # noqa: E731
    last, since, deadline = cpu(), time.monotonic(), time.monotonic() + 10
    while time.monotonic() < deadline and time.monotonic() - since < 0.2:
        time.sleep(0.02)
        now = cpu()
        if now != last:
            last, since = now, time.monotonic()


def _counters(sysm, which):
    """What the second pass is measured against: CPU of every process of the system, and recd's
    loop thread, page faults and metrics."""
    pid = sysm.proc.pid
    c = {"cpu_s": sum(_cpu(p) for p in _tree(pid))}
    if which == "recd":
        c.update(loop_cpu_s=procs.cpu_seconds(pid, tid=pid), minflt=procs.minor_faults(pid),
                 metrics=sysm.metrics())
    return c


def _measured(sysm, which, before, after):
    """The second pass's figures from the counters before it and after it. The raw copy's CPU
    after it is read at its exit (runs.usage_of: its wait4 rusage, socat and gzip together)."""
    res = {}
    if which == "recd":
        res["run_cpu_s"] = after["cpu_s"] - before["cpu_s"]
        res["cpu_s"] = res["run_cpu_s"]
        res["loop_cpu_s"] = after["loop_cpu_s"] - before["loop_cpu_s"]
        res["minflt"] = after["minflt"] - before["minflt"]
        res["hwm_kib"] = procs.status_kib(sysm.proc.pid, "VmHWM")
        if before["metrics"] and after["metrics"]:
            res.update(runs.recd_extras_of(_metrics_delta(before["metrics"], after["metrics"])))
        return res
    if which == "rsyslog":
        return {"cpu_s": after["cpu_s"] - before["cpu_s"],
                "hwm_kib": procs.status_kib(sysm.proc.pid, "VmHWM")}
    return {"cpu_s": runs.usage_of(sysm)["cpu_s"] - before["cpu_s"], "hwm_kib": None}


def _metrics_delta(m0, m1):
    """recd's metrics over the second pass: each series after it minus before it."""
    old = {(n, tuple(sorted(lab.items()))): v for n, lab, v in m0["series"]}
    series = [(n, lab, v - old.get((n, tuple(sorted(lab.items()))), 0.0))
              for n, lab, v in m1["series"]]
    totals = {n: v - m0["totals"].get(n, 0.0) for n, v in m1["totals"].items()}
    return {"totals": totals, "series": series}


def _tree(pid):
    """pid and its descendants (the raw copy with gzip is sh, socat and gzip)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(procs._stat_fields(int(entry))[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _cpu(pid):
    try:
        return procs.cpu_seconds(pid)
    except OSError:
        return 0.0


def _socat_pid(pid):
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == "socat":
                    return p
        except OSError:
            pass
    raise procs.BenchError("the raw copy has no socat process")


def _written(pid):
    """Bytes the process has written (write() calls, /proc/PID/io wchar)."""
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def run(env, sid, sc, prep, system, work, log, label="warm"):
    """One warm run for bench.py's repetitions: the result, or {"error"} when it could not be
    measured, logged like a fresh run (label names the repetition)."""
    try:
        r = tcp(env, sc, prep, system, os.path.join(work, "run"))
        log(f"  {sid} {label} {system:11s} {r['samples_per_s'] / 1e3:9.0f} k samples/s  cpu "
            f"{r['cpu_s']:6.2f} s  faults {r.get('minflt', '-')}  lost {r.get('lost')}  (first, "
            f"untimed pass {r['first_pass_samples_per_s'] / 1e3:.0f} k samples/s)")
    except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
        r = {"error": str(e)[:300]}
        log(f"  {sid} {label} {system}: FAILED {r['error']}")
    return r


def main():
    import bench
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenario", default="S2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--systems", default="recd,raw")
    ap.add_argument("--mode", choices=["full", "quick"], default="full")
    ap.add_argument("--build", default=os.path.join(bench.SRC, "build-bench"))
    ap.add_argument("--work", default=os.environ.get("BENCH_WORK", "/var/tmp/recd-bench"))
    a = ap.parse_args()
    specs = scenarios.FULL if a.mode == "full" else scenarios.QUICK
    sid = a.scenario.upper()
    tcp_ids = [k for k, v in specs.items() if v["kind"] == "tcp"]
    if sid not in tcp_ids:
        sys.exit(f"warm.py: --scenario {a.scenario}: choose one of the TCP scenarios, "
                 f"{', '.join(tcp_ids)}")
    if a.rounds < 1:
        sys.exit("warm.py: give --rounds of 1 or more")
    sc, systems = specs[sid], a.systems.lower().split(",")
    env = bench.Env(bench.SRC, a.build, a.work)
    prep = bench.prepare(env, sid, sc, a.mode)
    rates = {(s, k): [] for s in systems for k in ("fresh", "warm")}
    for _ in range(a.rounds):
        for s in systems:
            fresh = runs.tcp(env, sc, prep, s, os.path.join(a.work, "run"))
            bench.log(f"  {sid} fresh {s:11s} {fresh['samples_per_s'] / 1e3:9.0f} k samples/s")
            rates[(s, "fresh")].append(fresh["samples_per_s"])
            warm = run(env, sid, sc, prep, s, a.work, bench.log)
            if "error" not in warm:
                rates[(s, "warm")].append(warm["samples_per_s"])
    med = {k: statistics.median(v) for k, v in rates.items() if v}
    for k in ("fresh", "warm"):
        line = ", ".join(f"{s} {med[(s, k)] / 1e6:.2f} M/s" for s in systems if (s, k) in med)
        if ("recd", k) in med and ("raw", k) in med:
            line += f"; recd / raw {med[('recd', k)] / med[('raw', k)]:.2f}x"
        print(f"medians, {k}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
