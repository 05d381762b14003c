# SPDX-License-Identifier: MIT
# Scrapes a running recd and checks every metric against Prometheus' naming rules: snake_case
# with a recd_ or process_ prefix, counters (and only counters) end in _total, a unit comes last
# (before _total), units are base units (seconds, bytes), _info gauges are 1, and each deprecated
# name points at a replacement that is there. Also HEAD, /healthz's JSON (with the reason of a
# failing check) and the live gauges.
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

RECD = os.environ.get("RECD", "")
if not RECD or not os.access(RECD, os.X_OK):
    print("SKIP: $RECD does not name the recd binary (the daemon is not built)")
    sys.exit(77)

NAME = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
NON_BASE_UNITS = {"milliseconds", "microseconds", "nanoseconds", "ms", "us", "ns", "minutes", "hours",
                  "days", "kilobytes", "megabytes", "gigabytes", "kib", "mib", "gib", "kb", "mb", "gb",
                  "bits", "percent"}
BASE_UNITS = {"seconds", "bytes"}
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def check_families(text):
    """Returns {name: (type, help, [sample lines])} and checks each family's name."""
    fams = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            fams.setdefault(name, ["", "", []])[1] = help_
        elif line.startswith("# TYPE "):
            name, _, typ = line[7:].partition(" ")
            fams.setdefault(name, ["", "", []])[0] = typ
        elif line and not line.startswith("#"):
            series = re.split(r"[{ ]", line, 1)[0]
            base = re.sub(r"_(bucket|sum|count)$", "", series)
            fam = series if series in fams else base
            if fam not in fams:
                fail(f"sample without a TYPE line: {line}")
                continue
            fams[fam][2].append(line)
            for label in re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', line):
                if not NAME.match(label):
                    fail(f"{fam}: label {label} is not snake_case")
    for name, (typ, help_, samples) in fams.items():
        deprecated = help_.startswith("Deprecated:")
        if not NAME.match(name):
            fail(f"{name}: not snake_case")
        if not (name.startswith("recd_") or name.startswith("process_")):
            fail(f"{name}: no recd_ or process_ prefix")
        if not typ or not help_:
            fail(f"{name}: missing TYPE or HELP")
        if not samples:
            fail(f"{name}: no samples")
        words = name.split("_")
        if typ == "counter":
            if words[-1] != "total":
                fail(f"{name}: a counter must end in _total")
            words = words[:-1]
        elif words[-1] == "total":
            fail(f"{name}: only counters end in _total ({typ})")
        for w in words:
            if w in NON_BASE_UNITS:
                fail(f"{name}: '{w}' is not a base unit (use seconds or bytes)")
        if deprecated:
            m = re.search(r"use ([a-z_]+)", help_)
            if not m or m.group(1) not in fams:
                fail(f"{name}: deprecated without a replacement that exists")
            continue
        units = [i for i, w in enumerate(words) if w in BASE_UNITS]
        if units and units[-1] != len(words) - 1:
            fail(f"{name}: the unit must come last (before _total)")
        if typ == "histogram" and not units:
            fail(f"{name}: a histogram needs a unit")
        if name.endswith("_info"):
            if typ != "gauge" or any(not s.endswith(" 1") for s in samples):
                fail(f"{name}: an _info metric is a gauge with value 1")
    return fams


def request(port, method, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("Content-Length"), r.getheader("Content-Type"), body.decode()


def value(text, series):
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split(" ")[-1])
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="metric_names.")
    proc = subprocess.Popen([RECD, "--listen", "tcp://127.0.0.1:0", "--output", tmp + "/out",
                             "--metrics", "127.0.0.1:0", "--print-ports"],
                            stdout=subprocess.PIPE, stderr=open(tmp + "/log", "w"), text=True)
    ports = {}
    try:
        deadline = time.time() + 60
        while len(ports) < 2 and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            kind, _, addr = line.strip().partition(" ")
            ports[kind] = int(addr.rsplit(":", 1)[1])
        if "metrics" not in ports or "listen" not in ports:
            fail("recd did not print its ports: " + open(tmp + "/log").read())
            return
        mport = ports["metrics"]
        status, length, ctype, text = request(mport, "GET", "/metrics")
        if status != 200:
            fail(f"GET /metrics answered {status}")
        fams = check_families(text)
        for want in ["recd_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes",
                     "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                     "process_start_time_seconds", "recd_connections_open", "recd_sessions_open_by_format",
                     "recd_write_errors_total", "recd_samples_dropped_total", "recd_in_bytes_total",
                     "recd_written_bytes_total", "recd_bytes_in_total", "recd_bytes_written_total"]:
            if want not in fams:
                fail(f"{want} is missing")
        if not re.search(r'^recd_build_info\{version="[0-9.]+",commit="([0-9a-f]{7,}|unknown)"\} 1$', text, re.M):
            fail("recd_build_info has no version and commit")
        start = value(text, "process_start_time_seconds")
        if start is None or abs(start - time.time()) > 600:
            fail(f"process_start_time_seconds is {start}, now is {time.time()}")
        # An open connection shows in the gauge.
        s = socket.create_connection(("127.0.0.1", ports["listen"]))
        seen = None
        for _ in range(200):
            seen = value(request(mport, "GET", "/metrics")[3], "recd_connections_open")
            if seen == 1:
                break
            time.sleep(0.05)
        if seen != 1:
            fail(f"recd_connections_open is {seen} with one client connected")
        s.close()
        # HEAD: GET's headers, no body.
        status, hlen, _, body = request(mport, "HEAD", "/metrics")
        if status != 200 or body or not hlen or int(hlen) < 1000:
            fail(f"HEAD /metrics: {status}, Content-Length {hlen}, body {len(body)} bytes")
        status, hlen, ctype, body = request(mport, "GET", "/healthz")
        doc = json.loads(body)
        if status != 200 or doc.get("status") != "ok" or doc.get("checks") != [] or "json" not in ctype:
            fail(f"GET /healthz: {status} {ctype} {body!r}")
        status, hlen2, _, body = request(mport, "HEAD", "/healthz")
        if status != 200 or body or hlen2 != hlen:
            fail(f"HEAD /healthz: {status} {hlen2} {body!r}")
        # A failing check names itself and says why: remove the output root under recd.
        subprocess.run(["rm", "-rf", tmp + "/out"])
        doc, status = None, None
        for _ in range(400):
            status, _, _, body = request(mport, "GET", "/healthz")
            if status == 503:
                doc = json.loads(body)
                break
            time.sleep(0.05)
        checks = {c.get("name"): c.get("reason", "") for c in (doc or {}).get("checks", [])}
        if status != 503 or doc.get("status") != "error" or "output_root" not in checks or \
                tmp + "/out" not in checks["output_root"]:
            fail(f"/healthz with the output root gone: {status} {doc}")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        subprocess.run(["rm", "-rf", tmp])


main()
sys.exit(1 if failures else 0)
