# SPDX-License-Identifier: MIT
# UDP receive buffer and kernel drops: recd sizes its UDP socket from limits.udp_receive_buffer,
# and datagrams the kernel drops while recd is stopped (SIGSTOP) show in
# recd_udp_kernel_drops_total, as many as the socket's own count says. The loop-lag histogram
# has observations and cumulative buckets.
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

RECD = os.environ.get("RECD", "")
if not RECD or not os.access(RECD, os.X_OK):
    print("SKIP: $RECD does not name the recd binary (the daemon is not built)")
    sys.exit(77)


def scrape(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/metrics")
    body = c.getresponse().read().decode()
    c.close()
    return body


def value(text, series):
    m = re.search("^" + re.escape(series) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def main():
    tmp = tempfile.mkdtemp(prefix="udp_kernel_drops.")
    cfg = os.path.join(tmp, "recd.yaml")
    with open(cfg, "w") as f:
        f.write("listen:\n  - udp://127.0.0.1:0\n"
                f"output:\n  root: {tmp}/out\n"
                "limits:\n  udp_receive_buffer: 64KiB\n"
                "metrics:\n  enabled: true\n  listen: 127.0.0.1:0\n")
    proc = subprocess.Popen([RECD, "--config", cfg, "--print-ports"], stdout=subprocess.PIPE,
                            stderr=open(tmp + "/log", "w"), text=True)
    fails = []
    try:
        ports = {}
        deadline = time.time() + 60
        ready = False
        while time.time() < deadline:  # one line per port, then "ready"
            line = proc.stdout.readline()
            if not line:
                break
            if line.strip() == "ready":
                ready = True
                break
            kind, _, addr = line.strip().partition(" ")
            ports[kind] = int(addr.rsplit(":", 1)[1])
        if not ready or len(ports) < 2:
            print("FAIL: recd did not print its ports: " + open(tmp + "/log").read())
            return 1
        text = scrape(ports["metrics"])
        if value(text, "recd_udp_kernel_drops_total") != 0:
            fails.append("recd_udp_kernel_drops_total does not start at 0")
        # Stopped, recd reads nothing: the 64 KiB buffer (128 KiB as the kernel counts it) holds
        # a few hundred small datagrams, the rest is dropped by the kernel.
        os.kill(proc.pid, signal.SIGSTOP)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for _ in range(5000):
            s.sendto(b"x" * 64, ("127.0.0.1", ports["listen"]))
        os.kill(proc.pid, signal.SIGCONT)
        drops = 0
        for _ in range(100):  # the sweep adds them within 250 ms
            drops = value(scrape(ports["metrics"]), "recd_udp_kernel_drops_total") or 0
            if drops:
                break
            time.sleep(0.05)
        if not 1000 <= drops <= 5000:
            fails.append(f"recd_udp_kernel_drops_total is {drops} after 5000 datagrams to a "
                         "stopped recd with a 64 KiB receive buffer")
        text = scrape(ports["metrics"])
        count = value(text, "recd_loop_lag_seconds_count")
        buckets = [float(v) for v in re.findall(r'^recd_loop_lag_seconds_bucket\{le="[^"]+"\} (\S+)$',
                                                text, re.M)]
        if not count or not buckets or buckets != sorted(buckets) or buckets[-1] != count:
            fails.append(f"recd_loop_lag_seconds: count {count}, buckets {buckets}")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)
    for f in fails:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if fails else 0


sys.exit(main())
