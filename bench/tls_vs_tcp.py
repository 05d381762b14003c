# SPDX-License-Identifier: MIT
# A rough look at what TLS costs recd (issue 40): one stream of 10 synthetic .rec sessions
# (200,000 samples, captured once from rectool send) sent to one recd over tcp:// and over
# tls://, three rounds each, samples/s from recd_samples_total. Not the S1 scenario (the bench
# harness needs a TLS sender for that); run with RECD and RECTOOL set:
#   RECD=build/daemon/recd RECTOOL=build/tools/rectool python3 bench/tls_vs_tcp.py
import os, re, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))
import tls_harness as h
import tempfile
tmp = tempfile.mkdtemp(prefix="tls_vs_tcp.")
pki = h.Pki(tmp)
c, k = pki.issue("server", "localhost", dns=["localhost"])
data = h.capture("samp-onfoot", "tp", samples=20000, extra=("--sessions", "10"))
print("stream bytes", len(data))
r = h.Recd(tmp, f"""listen: [tls://127.0.0.1:0, tcp://127.0.0.1:0]
output: {{root: {tmp}/out}}
metrics: {{listen: 127.0.0.1:0}}
sessions: {{second_open: new_file}}
tls: {{cert: {c}, key: {k}}}
""")
ctx = h.client_context(pki.cert)
def samples():
    t = r.scrape()
    return sum(float(x) for x in re.findall(r'^recd_samples_total\{[^}]*\} (\S+)$', t, re.M))
res = {"tcp": [], "tls": []}
for rnd in range(3):
    for kind in ("tcp", "tls"):
        before = samples()
        t0 = time.time()
        if kind == "tcp":
            h.tcp_send(r.ports["tcp"], data)
        else:
            h.tls_send(r.ports["tls"], data, ctx)
        dt = time.time() - t0
        n = samples() - before
        res[kind].append(n / dt)
for kind in res:
    print(kind, [f"{x:,.0f}" for x in res[kind]], "samples/s")
print("ratio tls/tcp (best of 3):", max(res["tls"]) / max(res["tcp"]))
r.stop()
import shutil
shutil.rmtree(tmp, ignore_errors=True)
