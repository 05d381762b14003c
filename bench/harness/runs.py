# SPDX-License-Identifier: MIT
"""One measured run of one system: start it fresh, replay a prepared stream, find the moment the
last sample is on disk (recd: every file finalized; rsyslog: the in-stream sentinel written;
raw: socat and gzip exited), read CPU and peak RSS, stop it, and count what is on disk."""

import os
import re
import shutil
import subprocess
import time

import metrics
import procs
import readback
import systems


def fresh_dir(run_dir):
    """An empty run directory on a quiet file system. The previous run's files are deleted, all
    dirty data is written back (so the kernel's write-back threads do not take CPU in the middle
    of the next run; UDP has no backpressure to absorb that), and, as root, clean caches are
    dropped: on an ext4 without a journal (this machine's) the inode allocator skips inodes freed
    in the last 30 s by reading each one's inode-table block while it is cached, which made the
    1,000 file creations of S2 right after the last run's deletions a third of recd's CPU time.
    A deployment does not delete and create a thousand files a second, so every system starts
    each run without that. The prepared streams are read back into memory before the clock starts."""
    shutil.rmtree(run_dir, ignore_errors=True)
    quiet_disk()
    os.makedirs(run_dir)


def quiet_disk():
    """Writes back all dirty data and, as root, drops clean caches (fresh_dir says why; the warm
    runs do it again between their two passes)."""
    os.sync()
    if os.geteuid() == 0:
        try:
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("1\n")
        except OSError:
            pass


def _timeout(samples, floor=90.0):
    return min(900.0, floor + samples / 20000.0)  # every system here does far more than 20k/s


def make_system(env, which, run_dir, sc):
    """System `which` configured for scenario sc, not started (warm.py starts its own)."""
    if which == "recd":
        return systems.Recd(env, run_dir, gzip_level=sc.get("gzip_level", 6),
                            max_sessions=max(10000, 2 * sc["sessions"]))
    if which == "rsyslog":
        return systems.Rsyslog(env, run_dir, zip_level=sc.get("rsyslog_zip", 0),
                               cache=sc.get("rsyslog_cache", 256))
    if which.startswith("raw+gzip"):
        return systems.Raw(env, run_dir, gzip_level=1)
    return systems.Raw(env, run_dir)


def _recd_extras(sysm):
    m = sysm.metrics()
    return recd_extras_of(m) if m else {}


def recd_extras_of(m):
    """recd's own counters of a run from its metrics (warm.py: over its second pass only)."""
    t = m["totals"]
    p99 = metrics.histogram_quantile(m, "recd_flush_latency_seconds", 0.99)
    return {"flush_p99_s": p99, "recd_samples_total": t.get("recd_samples_total", 0),
            "decode_errors": t.get("recd_decode_errors_total", 0),
            "udp_gaps": t.get("recd_udp_gaps_total", 0),
            "backpressure_events": t.get("recd_backpressure_events_total", 0),
            "flushes": t.get("recd_flush_latency_seconds_count", 0)}


def _finish(res, which, states, rb):
    res.update(rb_files=rb.get("files"), out_bytes=rb.get("bytes", 0), invalid=rb.get("invalid", 0))
    if which == "recd":
        res["on_disk"] = rb["samples"]
        res["lost"] = states - rb["samples"]
        res["part_files"] = rb["part_files"]
    elif which == "rsyslog":
        res["on_disk"] = rb["lines"]
        res["lost"] = res["expected_lines"] - rb["lines"]
    else:
        res["lost_bytes"] = res["expected_bytes"] - rb["payload"]
        res["lost"] = 0 if res["lost_bytes"] == 0 else None
    res["bytes_per_sample"] = res["out_bytes"] / states if states else None
    return res


def send_tcp_args(env, sc, prep, which, port):
    """The `benchgen send-tcp` command that replays scenario sc's stream into system `which`:
    rsyslog gets the text lines and a sentinel after them, recd and raw the scenario's input."""
    args = [env.benchgen, "send-tcp", "--to", f"127.0.0.1:{port}"]
    if which == "rsyslog":
        enc = sc.get("rsyslog_input", "syslog")
        return args + ["--conn", prep.files(enc, ("body",))[0], "--sentinel",
                       systems.SENTINEL_LINE]
    return args + ["--conn", ",".join(prep.files(sc["input"]))]


def tcp(env, sc, prep, which, run_dir, profiler=None, read_back=None, extras=None,
        discard=None):
    """A TCP scenario (S1, S2, S3, S6, S7) for one system; returns the measurements. A profiler
    (perf_profile.Profiler) is attached to the system's process for the measured part. read_back
    (system -> dict like readback's) replaces the system's own count of what is on disk (S7).
    extras (system -> dict) adds measurements of recd after the run (stalls.py). discard(run_dir)
    replaces deleting the run's files afterwards (the cost curve keeps their inodes).
    sc["finalize_poll_s"]: how often /metrics is polled for the last file (default 5 ms)."""
    fresh_dir(run_dir)
    states = prep.meta["states"]
    sysm = make_system(env, which, run_dir, sc)
    res = {"system": which, "samples": states}
    sysm.start(tcp=True)
    try:
        args = send_tcp_args(env, sc, prep, which, sysm.tcp_port)
        if which == "rsyslog":
            res["expected_lines"] = prep.body_lines()
        elif which != "recd":
            res["expected_bytes"] = prep.stream_bytes(sc["input"])
        timeout = _timeout(states)
        if profiler:
            profiler.attach(sysm.proc.pid)
        if which == "recd":  # CPU from here on is the run's, not start-up's (see _cpu_split)
            cpu_before = _cpu_split(sysm.proc.pid)
            faults_before = procs.minor_faults(sysm.proc.pid)
            res["rss_before_kib"] = procs.status_kib(sysm.proc.pid, "VmRSS")  # the cost curve's base
        sender = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            if which == "recd":
                # The closes end the stream, and recd closes the connection only once it has
                # decoded them, so no file is final before the sender exits. Scraping /metrics
                # before then would only take time from recd's loop and the machine's CPUs.
                # Polled, not Popen.wait(timeout): that sleeps up to 50 ms between checks.
                if not procs.wait_for(lambda: sender.poll() is not None, timeout, interval=0.002):
                    raise procs.BenchError(
                        f"recd did not take the stream within {timeout:.0f} s (it closes the "
                        f"connection after the last frame); its log ends: "
                        + systems.tail(os.path.join(sysm.dir, "recd.log")))
                t_done = sysm.wait_finalized(prep.meta["sessions"], timeout,
                                             interval=sc.get("finalize_poll_s", 0.005))
                cpu_after = _cpu_split(sysm.proc.pid)
                res["run_cpu_s"] = cpu_after[0] - cpu_before[0]
                res["loop_cpu_s"] = cpu_after[1] - cpu_before[1]
                # First touches of memory (page faults) during the run, all threads.
                res["minflt"] = procs.minor_faults(sysm.proc.pid) - faults_before
            elif which == "rsyslog":
                t_done = sysm.wait_sentinel(1, timeout)
            else:
                t_done = sysm.wait_exit(timeout)
            out, err = sender.communicate(timeout=timeout)
        finally:
            if profiler:
                res["profile"] = profiler.finish()
            if sender.poll() is None:
                sender.kill()
                sender.wait()
        sent = _sender_json(out, err)
        res["sender_cpu_s"] = sent.get("cpu_s")
        res.update(usage_of(sysm))
        if which == "recd":
            res.update(_recd_extras(sysm))
            if extras:
                res.update(extras(sysm))
        res["seconds"] = t_done - sent["t_first"]
        res["send_seconds"] = sent["t_sent"] - sent["t_first"]
        res["samples_per_s"] = states / res["seconds"]
    finally:
        stop = sysm.stop(grace=1.5) if which == "rsyslog" else sysm.stop()
    res["stop"] = stop
    rb = read_back(sysm) if read_back else sysm.readback()
    _finish(res, which, states, rb)
    (discard or _delete_tree)(run_dir)
    return res


def _delete_tree(path):
    shutil.rmtree(path, ignore_errors=True)


def usage_of(sysm):
    u = sysm.usage()
    return {"cpu_s": u["cpu_s"], "hwm_kib": u["hwm_kib"]}


def _cpu_split(pid):
    """(whole process, loop thread) CPU seconds of recd: the loop is its main thread, and reading,
    decoding and buffering all happen there, so its CPU bounds the rate one loop can reach."""
    return procs.cpu_seconds(pid), procs.cpu_seconds(pid, tid=pid)


def _sender_json(out, err):
    import json
    lines = out.decode().strip().splitlines()
    if not lines:
        raise procs.BenchError("benchgen send-tcp printed nothing: " + err.decode()[-300:])
    return json.loads(lines[-1])


def udp_step(env, sc, prep, which, rate, run_dir, profiler=None, extras=None):
    """One UDP rate step (S4): opens over TCP, then `rate` datagrams/s, one sample each. extras
    (system -> dict) adds measurements of recd after the run (stalls.py)."""
    fresh_dir(run_dir)
    sysm = make_system(env, which, run_dir, sc)
    res = {"system": which, "rate_target": rate}
    sysm.start(tcp=(which == "recd"), udp=True)
    try:
        if which == "recd":
            # The opens go over UDP too: a session takes messages only from the input that opened
            # it, and datagrams are one input. Sent slowly, so none is lost, and again if one was.
            head = prep.files("wire", ("head",))[0]
            for _ in range(3):
                procs.run_json([env.benchgen, "send-udp", "--to", f"127.0.0.1:{sysm.udp_port}",
                                "--file", head, "--framing", "wire", "--rate", "20000",
                                "--seconds", str(sc["sessions"] / 20000 + 0.01)], timeout=60)
                if procs.wait_for(lambda: sysm.total("recd_sessions_open") >= sc["sessions"], 5):
                    break
            else:
                raise procs.BenchError("recd did not open every S4 session")
            body, framing = prep.files("wire", ("body",))[0], "wire"
        elif which == "rsyslog":
            body, framing = prep.files("syslog", ("body",))[0], "lines"
        else:
            body, framing = prep.files("wire", ("body",))[0], "wire"
        snmp0 = procs.udp_counters()
        if profiler:
            profiler.attach(sysm.proc.pid)
        sent = procs.run_json([env.benchgen, "send-udp", "--to", f"127.0.0.1:{sysm.udp_port}",
                               "--file", body, "--framing", framing, "--rate", str(rate),
                               "--seconds", str(sc["seconds"])], timeout=sc["seconds"] * 4 + 30)
        if which == "recd":
            sysm.wait_quiet("recd_samples_total")
        else:
            time.sleep(2.0)  # rsyslog: past flushInterval; socat writes as it reads
        if profiler:
            res["profile"] = profiler.finish()
        snmp1 = procs.udp_counters()
        res.update(usage_of(sysm))
        if which == "recd":
            res.update(_recd_extras(sysm))
            if extras:
                res.update(extras(sysm))
        res.update(sent=sent["sent"], rate_achieved=sent["rate_achieved"],
                   sender_gso=sent.get("gso", False),
                   kernel_rcvbuf_drops=snmp1.get("RcvbufErrors", 0) - snmp0.get("RcvbufErrors", 0))
    finally:
        res["stop"] = sysm.stop(grace=1.5) if which == "rsyslog" else sysm.stop()
    if which == "recd":
        rb = sysm.readback()
        res["on_disk"] = rb["samples"]
    elif which == "rsyslog":
        rb = sysm.readback()
        res["on_disk"] = rb["lines"]
    else:
        res["on_disk"] = readback.wire_frames(sysm.path)
    res["lost"] = res["sent"] - res["on_disk"]
    shutil.rmtree(run_dir, ignore_errors=True)
    return res


SEND_SUMMARY = re.compile(r"sent (\d+) messages \((\d+) states, (\d+) events\)")


def idle_sessions(env, sc, run_dir):
    """S5: many sessions open at a low rate each, driven by `rectool send --synthetic`."""
    fresh_dir(run_dir)
    n = sc["sessions"]
    sysm = systems.Recd(env, run_dir, max_sessions=2 * n)
    res = {"system": "recd", "sessions": n}
    sysm.start(tcp=True)
    try:
        base = sysm.usage()
        res["base_rss_kib"] = base["rss_kib"]
        argv = [env.rectool, "send", "--synthetic", "--format", "samp-onfoot", "--scenario", "walk",
                "--sessions", str(n), "--rate", str(sc["rate"]), "--duration", f"{sc['seconds']}s",
                "--seed", "1", "--session", "s5", "--to", f"tcp://127.0.0.1:{sysm.tcp_port}"]
        t0 = time.monotonic()
        sender = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rss, opened_at = [], None
        deadline = t0 + sc["seconds"] + 300
        while sender.poll() is None and time.monotonic() < deadline:
            time.sleep(1.0)
            rss.append(procs.status_kib(sysm.proc.pid, "VmRSS"))
            if opened_at is None and sysm.total("recd_sessions_open") >= n:
                opened_at = time.monotonic() - t0
        if sender.poll() is None:
            sender.kill()
        out, err = sender.communicate(timeout=60)
        m = SEND_SUMMARY.search(out.decode())
        if not m:
            raise procs.BenchError("rectool send failed: " + err.decode(errors="replace")[-300:])
        res["states_sent"] = int(m.group(2))
        res["send_seconds"] = time.monotonic() - t0
        res["all_open_after_s"] = opened_at
        res["rss_samples_kib"] = rss
        res["steady_rss_kib"] = sorted(rss)[len(rss) // 2] if rss else None
        t_close = time.monotonic()
        sysm.wait_finalized(n, 600)
        res["finalize_seconds"] = time.monotonic() - t_close
        res.update(usage_of(sysm))
        res.update(_recd_extras(sysm))
    finally:
        res["stop"] = sysm.stop()
    rb = sysm.readback()
    res.update(on_disk=rb["samples"], files=rb["files"], part_files=rb["part_files"],
               out_bytes=rb["bytes"])
    res["lost"] = res["states_sent"] - rb["samples"]
    res["kib_per_session"] = (res["hwm_kib"] - res["base_rss_kib"]) / n
    shutil.rmtree(run_dir, ignore_errors=True)
    return res
