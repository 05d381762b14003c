#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Subject layout measurement (issue 37): a subject per session against one per partition.

For each configuration (layout x session count x stream limits) it starts a fresh
`nats-server -js` on free loopback ports with a temporary store, publishes packed-size messages
with bench/nats_subjects (built here with cc -lnats), restarts the server so the backlog has left
its cache, drains the backlog through a durable pull consumer per partition, and reads the CPU
and memory of nats-server (/proc, /varz, /jsz) and of the client around each phase. Runs are
interleaved over the layouts, round after round, so the machine's load falls on each alike.

  python3 bench/harness/nats_subjects.py [--rounds 2] [--messages 200000] [--size 2048]
      [--sessions 1000,100000] [--limits none,half] [--layouts session,partition]
      [--results bench/results/subjects-DATE.md]

Not part of `make test` nor `make bench`."""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "bench", "nats_subjects", "nats_subjects.c")
TICK = os.sysconf("SC_CLK_TCK")


def frames_per_message(size):
    """The packing factor: .rec state frames of about 80 bytes after the header and a 20-byte key
    (nats_subjects.c writes the same count)."""
    return max(1, (size - 24 - 20) // 80)


def build(out_dir):
    binary = os.path.join(out_dir, "nats_subjects")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libnats"], check=True,
                           capture_output=True, text=True).stdout.split()
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-D_GNU_SOURCE", "-O2", "-g", "-Wall",
                    "-Wextra", "-Werror", "-o", binary, SOURCE] + flags, check=True)
    return binary


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def proc_mem(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out


def http_json(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return json.loads(r.read())


def store_files(store):
    total = fss = count = 0
    for dirpath, _, names in os.walk(store):
        for n in names:
            size = os.path.getsize(os.path.join(dirpath, n))
            total += size
            count += 1
            if n.endswith(".fss"):  # 2.9's per-block subject state
                fss += size
    return {"store_bytes": total, "fss_bytes": fss, "files": count}


class Server:
    def __init__(self, store, log):
        self.store, self.log = store, log
        self.port, self.mport = free_port(), free_port()
        self.proc = None

    def start(self):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port), "-m",
             str(self.mport), "-sd", self.store], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = t0 + 600
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"nats-server exited with {self.proc.returncode}")
            try:
                if http_json(self.mport, "/healthz").get("status") == "ok":
                    return time.monotonic() - t0
            except OSError:
                pass
            time.sleep(0.05)
        sys.exit("nats-server did not become healthy within 600 s")

    def stop(self):
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=600)
        return time.monotonic() - t0

    def snapshot(self):
        varz = http_json(self.mport, "/varz")
        jsz = http_json(self.mport, "/jsz?streams=true")
        streams = [s for a in jsz.get("account_details", []) for s in a.get("stream_detail", [])]
        state = streams[0]["state"] if streams else {}
        return dict(cpu=proc_cpu(self.proc.pid), **proc_mem(self.proc.pid),
                    varz_mem=varz.get("mem"), jsz_storage=jsz.get("storage"),
                    stream_messages=state.get("messages"), stream_bytes=state.get("bytes"),
                    num_subjects=state.get("num_subjects"))


def client(binary, args):
    out = subprocess.run([binary] + args, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args[:1])} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def one_run(binary, work, layout, sessions, limit, a):
    store = tempfile.mkdtemp(prefix="store-", dir=work)
    max_bytes = a.messages * a.size // 2 if limit == "half" else 0
    with open(os.path.join(work, "nats-server.log"), "ab") as log:
        srv = Server(store, log)
        try:
            return measured(binary, srv, store, layout, sessions, limit, max_bytes, a)
        finally:
            if srv.proc and srv.proc.poll() is None:  # a failed run leaves no server behind
                srv.proc.kill()
                srv.proc.wait()
            shutil.rmtree(store, ignore_errors=True)


def measured(binary, srv, store, layout, sessions, limit, max_bytes, a):
    """Publish, restart, drain on srv (not started yet); the run's figures."""
    r = dict(layout=layout, sessions=sessions, limit=limit, max_bytes=max_bytes,
             messages=a.messages, size=a.size, partitions=a.partitions,
             loadavg_start=os.getloadavg()[0])
    srv.start()
    common = ["--url", f"nats://127.0.0.1:{srv.port}", "--layout", layout,
              "--partitions", str(a.partitions)]
    before = srv.snapshot()
    pub = client(binary, ["publish"] + common + [
        "--sessions", str(sessions), "--messages", str(a.messages), "--size", str(a.size),
        "--window", str(a.window), "--max-bytes", str(max_bytes)])
    after = srv.snapshot()
    r["publish"] = pub
    r["publish_server_cpu"] = after["cpu"] - before["cpu"]
    r["after_publish"] = after
    r["stop_seconds"] = srv.stop()
    r["store"] = store_files(store)
    r["loadavg_drain"] = os.getloadavg()[0]
    r["restart_seconds"] = srv.start()  # the backlog is now on disk only
    before = srv.snapshot()
    r["after_restart"] = before
    drain = client(binary, ["drain"] + common)
    after = srv.snapshot()
    r["drain"] = drain
    r["drain_server_cpu"] = after["cpu"] - before["cpu"]
    r["after_drain"] = after
    srv.stop()
    return r


def mib(n):
    return f"{n / 1048576:.0f}" if n is not None else "-"


def table(runs):
    head = ("| layout | sessions | limit | load | pub msg/s | pub samples/s | server us/msg pub | "
            "client us/msg pub | subjects | RSS after pub MiB | peak RSS MiB | /varz mem MiB | "
            "store MiB (fss) | stop s | restart s | RSS after restart MiB | "
            "consumers s (slowest) | drain msg/s | drain samples/s | server us/msg drain | "
            "client us/msg drain | peak RSS drain MiB |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in runs:
        p, d, ap, ar, ad = (r["publish"], r["drain"], r["after_publish"], r["after_restart"],
                            r["after_drain"])
        n = p["messages"]
        fpm = frames_per_message(r["size"])
        dn = max(d["messages"], 1)
        lines.append(
            f"| {r['layout']} | {r['sessions']:,} | {r['limit']} | {r['loadavg_start']:.1f} | "
            f"{n / p['seconds']:,.0f} | {n * fpm / p['seconds']:,.0f} | "
            f"{r['publish_server_cpu'] / n * 1e6:.1f} | {p['cpu_seconds'] / n * 1e6:.1f} | "
            f"{ap['num_subjects']:,} | {mib(ap['VmRSS'])} | {mib(ap['VmHWM'])} | "
            f"{mib(ap['varz_mem'])} | {mib(r['store']['store_bytes'])} "
            f"({r['store']['fss_bytes'] / 1048576:.1f}) | {r['stop_seconds']:.2f} | "
            f"{r['restart_seconds']:.2f} | {mib(ar['VmRSS'])} | {d['consumers_seconds']:.2f} "
            f"({d['slowest_consumer_seconds']:.2f}) | "
            f"{d['messages'] / d['seconds']:,.0f} | "
            f"{d['messages'] * fpm / d['seconds']:,.0f} | "
            f"{r['drain_server_cpu'] / dn * 1e6:.1f} | {d['cpu_seconds'] / dn * 1e6:.1f} | "
            f"{mib(ad['VmHWM'])} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--messages", type=int, default=200000)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--window", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--sessions", default="1000,100000")
    ap.add_argument("--limits", default="none,half",
                    help="none: recd's stream (no limits); half: max_bytes of half the data")
    ap.add_argument("--layouts", default="session,partition",
                    help="session, partition, partition-token (PREFIX.<p>.~)")
    ap.add_argument("--results", help="markdown file to write (and .json beside it)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="nats-subjects-", dir=os.environ.get("BENCH_WORK", "/var/tmp"))
    binary = build(work)
    version = subprocess.run(["nats-server", "--version"], capture_output=True,
                             text=True).stdout.strip()
    runs = []
    layouts = a.layouts.split(",")
    for rnd in range(a.rounds):
        order = layouts if rnd % 2 == 0 else layouts[::-1]
        for sessions in [int(s) for s in a.sessions.split(",")]:
            for limit in a.limits.split(","):
                for layout in order:
                    r = one_run(binary, work, layout, sessions, limit, a)
                    r["loadavg_end"] = os.getloadavg()[0]
                    r["round"] = rnd + 1
                    runs.append(r)
                    print(table([r]).splitlines()[-1], flush=True)
    shutil.rmtree(work)
    runs.sort(key=lambda r: (r["sessions"], r["limit"], r["layout"], r["round"]))
    text = (f"{version}, {a.messages:,} messages of {a.size} B ({frames_per_message(a.size)} "
            f"frames each) "
            f"per run, {a.partitions} partitions, window {a.window}\n\n{table(runs)}\n")
    print(text)
    if a.results:
        with open(a.results, "w") as f:
            f.write(text)
        with open(os.path.splitext(a.results)[0] + ".json", "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
