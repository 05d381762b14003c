# SPDX-License-Identifier: MIT
"""S8, S2's workload through NATS JetStream: a fresh `nats-server -js` per run (its store in the
run directory), 1 or 2 recd fleet instances sharing the partitions (`listen: nats://...`), and
`benchgen send-nats` publishing every frame of the prepared stream as one JetStream message on its
partition's subject (PREFIX.<p>.~; runs before issue 37's switch used the session's). Measured from the first publish to the last session's file finalized, with the
CPU of every process on the path (recd instances, nats-server, publisher) and a read-back of
every sample. The same stream also goes to recd and to the raw copy over TCP in the same run
(runs.tcp), so the JetStream path is reported as a ratio to them. BENCH_NATS_PPROF=DIR keeps
nats-server's CPU profile of each run's measured stretch there (pprof_top.py reads it) and puts
its top functions into the run's results."""

import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request

import pprof_top
import procs
import runs
import systems

NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"
PREFIX = "bench.s8"
# nats-1, nats-2: that many recd instances, the publisher sending one frame per message;
# nats-1p, nats-2p: the same with packed messages (PACK_BYTES or LINGER_MS, docs/fleet.md).
SYSTEM = re.compile(r"^nats-(\d)(p?)$")
PACK_BYTES, LINGER_MS = 65536, 20  # librecd's publisher defaults


def missing(env):
    """Why S8 cannot run on this machine, or None."""
    if not os.access(NATS_SERVER, os.X_OK):
        return "nats-server is not installed (Debian: nats-server)"
    res = subprocess.run([env.benchgen, "send-nats"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    if res.returncode == 77:
        return "benchgen was built without libnats (Debian: libnats-dev)"
    return None


class NatsServer:
    label = "nats-server"

    def __init__(self, run_dir, pprof_dir=None):
        self.dir = run_dir
        self.store = os.path.join(run_dir, "js")
        self.proc = None
        self.port = self.monitor_port = self.pprof_port = None
        self.pprof_dir = pprof_dir
        self._pprof = None

    def start(self):
        os.makedirs(self.store, exist_ok=True)
        procs.give_to_unprivileged(self.dir)
        procs.give_to_unprivileged(self.store)
        self.port, self.monitor_port = procs.free_port(), procs.free_port()
        log = os.path.join(self.dir, "nats.log")
        argv = [NATS_SERVER, "-js", "-a", "127.0.0.1", "-p", str(self.port),
                "-m", str(self.monitor_port), "-sd", self.store]
        if self.pprof_dir:
            self.pprof_port = procs.free_port()
            argv += ["--profile", str(self.pprof_port)]
        self.proc = procs.spawn(argv, log)
        if not procs.wait_for(lambda: procs.listening(self.port) or self.proc.poll() is not None,
                              30) or self.proc.poll() is not None:
            self.stop()
            raise procs.BenchError("nats-server did not start: " + systems.tail(log))

    def url(self):
        return f"nats://127.0.0.1:{self.port}/{PREFIX}"

    def cpu_s(self):
        return procs.cpu_seconds(self.proc.pid)

    def streams(self):
        """{stream: {"messages", "bytes", "last_seq"}} from the monitoring port's /jsz: the
        sessions bucket's last sequence is how many session records recd wrote."""
        url = f"http://127.0.0.1:{self.monitor_port}/jsz?accounts=true&streams=true"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                jsz = json.load(r)
        except (OSError, ValueError):
            return {}
        out = {}
        for acc in jsz.get("account_details") or []:
            for st in acc.get("stream_detail") or []:
                state = st.get("state", {})
                out[st["name"]] = {k: state.get(k) for k in ("messages", "bytes", "last_seq")}
        return out

    def _monitor(self, path):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_port}/{path}",
                                        timeout=10) as r:
                return json.load(r)
        except (OSError, ValueError):
            return {}

    def counts(self):
        """Protocol messages the server took in and sent out so far (/varz), and per client
        connection (/connz, by name): what the consumer's pulls, acks and record writes cost
        in messages, independent of the machine's load."""
        varz = self._monitor("varz")
        conns = self._monitor("connz?limit=1024").get("connections") or []
        return {"in_msgs": varz.get("in_msgs", 0), "out_msgs": varz.get("out_msgs", 0),
                "conns": {f"{c.get('name') or '?'}#{c.get('cid')}":
                          (c.get("in_msgs", 0), c.get("out_msgs", 0)) for c in conns}}

    def pprof_start(self, name):
        """Profiles the server from now until pprof_finish, in 2-second CPU profiles (one
        long one would be lost with the server if the run ended first)."""
        if not self.pprof_port:
            return
        os.makedirs(self.pprof_dir, exist_ok=True)
        stop, files = threading.Event(), []

        def fetch():
            url = f"http://127.0.0.1:{self.pprof_port}/debug/pprof/profile?seconds=2"
            while not stop.is_set():
                path = os.path.join(self.pprof_dir, f"{name}-{len(files):03d}.pb.gz")
                try:
                    with urllib.request.urlopen(url, timeout=30) as r, open(path, "wb") as f:
                        f.write(r.read())
                    files.append(path)
                except OSError:
                    return
        t = threading.Thread(target=fetch, daemon=True)
        t.start()
        self._pprof = (stop, t, files)

    def pprof_finish(self, n=15):
        """Top functions of the profiles taken since pprof_start, or None."""
        if not self._pprof:
            return None
        stop, t, files = self._pprof
        self._pprof = None
        stop.set()
        t.join(timeout=10)
        return pprof_top.top([pprof_top.read(f) for f in files], n) if files else None

    def stop(self):
        if self.proc:
            code, secs = procs.stop(self.proc, timeout=60)
            return {"exit": code, "stop_s": secs}
        return {}


class RecdFleet(systems.Recd):
    """One recd fleet instance consuming the stream's partitions instead of a TCP port."""

    def __init__(self, env, run_dir, url, instance, partitions, max_in_flight, lease_ttl="6s",
                 **kw):
        super().__init__(env, run_dir, **kw)
        self.url, self.instance = url, instance
        self.partitions, self.max_in_flight, self.lease_ttl = partitions, max_in_flight, lease_ttl

    def _config(self, tcp, udp):
        text = super()._config(False, False).replace("listen:\n", f"listen:\n  - {self.url}\n", 1)
        return text + (f"nats:\n  partitions: {self.partitions}\n  lease_ttl: {self.lease_ttl}\n"
                       f"  max_in_flight: {self.max_in_flight}\n  instance: {self.instance}\n")


def _owned(instances):
    return [int(i.total("recd_nats_partitions_owned")) for i in instances]


def run_fleet(env, sc, prep, n, run_dir, profiler=None, packed=False):
    """One S8 run with n recd instances (packed: the publisher packs); returns the
    measurements."""
    runs.fresh_dir(run_dir)
    states, sessions, messages = prep.meta["states"], prep.meta["sessions"], prep.meta["messages"]
    parts = sc["partitions"]
    res = {"system": f"nats-{n}{'p' if packed else ''}", "samples": states, "instances": n, "partitions": parts,
           "max_in_flight": sc["nats_max_in_flight"]}
    server = NatsServer(os.path.join(run_dir, "nats"), os.environ.get("BENCH_NATS_PPROF"))
    os.makedirs(server.dir)
    fleet = []
    try:
        server.start()
        for i in range(n):
            inst = RecdFleet(env, os.path.join(run_dir, f"recd-{i}"), server.url(), f"bench{i}",
                             parts, sc["nats_max_in_flight"],
                             max_sessions=max(10000, 2 * sessions))
            os.makedirs(inst.dir)
            fleet.append(inst)
            inst.start(tcp=False)
        share = -(-parts // n)
        if not procs.wait_for(lambda: sum(_owned(fleet)) == parts and
                              max(_owned(fleet)) <= share, 60, interval=0.2):
            raise procs.BenchError(f"the {n} recd instances own {_owned(fleet)} of {parts} "
                                   "partitions after 60 s")
        res["owned"] = _owned(fleet)
        if profiler:
            profiler.attach(fleet[0].proc.pid)
        recd_cpu0 = [inst.usage()["cpu_s"] for inst in fleet]
        nats_cpu0 = server.cpu_s()
        counts0 = server.counts()
        server.pprof_start(f"{res['system']}-{os.getpid()}-{int(time.time())}")
        files = prep.files(sc["input"])
        argv = [env.benchgen, "send-nats", "--to", server.url(), "--partitions", str(parts)]
        for f in files:
            argv += ["--file", f]
        if packed:
            argv += ["--pack-bytes", str(PACK_BYTES), "--linger-ms", str(LINGER_MS)]
        timeout = runs._timeout(states)
        sender = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # recd finalizes a session's file when it takes the close, which is published last,
            # so no file is final before the publisher has every ack. Until then the harness does
            # not scrape /metrics (each scrape takes recd's loop), and afterwards every 50 ms: with
            # a scrape every 10 ms, serving them showed in this scenario's profile of recd.
            if not procs.wait_for(lambda: sender.poll() is not None, timeout, interval=0.005):
                raise procs.BenchError(f"the publisher did not finish within {timeout:.0f} s")
            out, err = sender.communicate(timeout=timeout)
            published = runs._sender_json(out, err).get("messages", messages)
            # Done when every message is acknowledged (written) and every session's file is
            # finalized: the count of finalized files alone is reached early when a partition
            # changes hands mid-run (its sessions' parts are finalized on the way).
            def done():
                for inst in fleet:
                    if inst.proc.poll() is not None:
                        raise procs.BenchError(f"recd instance {inst.instance} exited with "
                                               f"{inst.proc.returncode} mid-run: "
                                               + systems.tail(os.path.join(inst.dir, "recd.log")))
                m = [inst.metrics() or {"totals": {}} for inst in fleet]
                acked = sum(x["totals"].get("recd_nats_acked_total", 0) for x in m)
                finals = sum(x["totals"].get("recd_files_finalized_total", 0) for x in m)
                return acked >= published and finals >= sessions
            if not procs.wait_for(done, timeout, interval=0.05):
                raise procs.BenchError(f"the fleet did not write and acknowledge all {published} "
                                       f"messages within {timeout:.0f} s")
            t_done = time.monotonic()
            recd_cpu = [inst.usage()["cpu_s"] - c0 for inst, c0 in zip(fleet, recd_cpu0)]
            res["nats_cpu_s"] = server.cpu_s() - nats_cpu0
            counts1 = server.counts()
            res["nats_in_msgs"] = counts1["in_msgs"] - counts0["in_msgs"]
            res["nats_out_msgs"] = counts1["out_msgs"] - counts0["out_msgs"]
            res["nats_conns"] = {k: (v[0] - counts0["conns"].get(k, (0, 0))[0],
                                     v[1] - counts0["conns"].get(k, (0, 0))[1])
                                 for k, v in counts1["conns"].items()}
        finally:
            if profiler:
                res["profile"] = profiler.finish()
            res["nats_pprof"] = server.pprof_finish()
            if sender.poll() is None:
                sender.kill()
                sender.wait()
        sent = runs._sender_json(out, err)
        res["publisher_lost"] = sent.get("lost")
        res["stream_messages"] = sent.get("messages")
        res["sender_cpu_s"] = sent.get("cpu_s")
        res["run_cpu_s"] = sum(recd_cpu)
        res["instance_cpu_s"] = recd_cpu
        res["cpu_s"] = sum(recd_cpu)  # the receiving side: every instance, whole process
        res["hwm_kib"] = max(procs.status_kib(inst.proc.pid, "VmHWM") for inst in fleet)
        res["nats_hwm_kib"] = procs.status_kib(server.proc.pid, "VmHWM")
        m = [inst.metrics() or {"totals": {}} for inst in fleet]
        res["acked"] = sum(x["totals"].get("recd_nats_acked_total", 0) for x in m)
        for k in ("ack_frames", "pull_requests", "session_record_writes"):
            res[k] = sum(x["totals"].get(f"recd_nats_{k}_total", 0) for x in m)
        res["duplicates"] = sum(x["totals"].get("recd_nats_duplicates_dropped_total", 0)
                                for x in m)
        res["decode_errors"] = sum(x["totals"].get("recd_decode_errors_total", 0) for x in m)
        # A partition that changed hands during the run (a lease not renewed in time on a busy
        # machine) shows here; its sessions go on in a second part on the new owner.
        res["taken_over"] = sum(x["totals"].get("recd_nats_sessions_taken_over_total", 0)
                                for x in m)
        res["renew_failures"] = sum(x["totals"].get("recd_nats_lease_renew_failures_total", 0)
                                    for x in m)
        res["owned_after"] = _owned(fleet)
        res["streams"] = server.streams()
        res["record_writes"] = sum(v.get("last_seq") or 0 for k, v in res["streams"].items()
                                   if k.endswith("_sessions"))
        res["seconds"] = t_done - sent["t_first"]
        res["send_seconds"] = sent["t_sent"] - sent["t_first"]
        res["acked_seconds"] = sent["t_acked"] - sent["t_first"]
        res["samples_per_s"] = states / res["seconds"]
    finally:
        res["stop"] = [inst.stop() for inst in fleet]
        res["nats_stop"] = server.stop()
    rb = {"files": 0, "part_files": 0, "invalid": 0, "samples": 0, "bytes": 0}
    for inst in fleet:
        for k, v in inst.readback().items():
            rb[k] = rb.get(k, 0) + v
    res.update(rb_files=rb["files"], out_bytes=rb["bytes"], invalid=rb["invalid"],
               on_disk=rb["samples"], part_files=rb["part_files"], lost=states - rb["samples"],
               bytes_per_sample=rb["bytes"] / states if states else None)
    shutil.rmtree(run_dir, ignore_errors=True)
    return res


def run(env, sc, prep, which, run_dir, profiler=None):
    """One S8 run of `which`: recd or raw over TCP (the side-by-side baseline), or nats-N."""
    m = SYSTEM.match(which)
    if not m:
        return runs.tcp(env, sc, prep, which, run_dir, profiler=profiler)
    why = missing(env)
    if why:
        raise procs.BenchError("S8 skipped: " + why)
    return run_fleet(env, sc, prep, int(m.group(1)), run_dir, profiler=profiler,
                     packed=bool(m.group(2)))
