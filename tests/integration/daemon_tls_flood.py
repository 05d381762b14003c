# SPDX-License-Identifier: MIT
# 1,000 idle TLS connections do not lock out a good sender (issue 40): one peer opens 1,000
# connections to a tls:// listener, most of them silent, some stopped halfway through a
# ClientHello, some sending garbage, with limits.max_connections at 300. A good sender from
# another address then records a session whose file verifies; the connections that were in the
# way were shed (recd_connections_dropped_total{reason="shed"}), the garbage was counted as
# tls_handshake, and the half-done handshakes that were left end at tls.handshake_timeout
# (tls_handshake_timeout).
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_harness as h  # noqa: E402

h.need_binaries()
FLOOD = 1000
# A TLS record header announcing a 512-byte ClientHello, and its first bytes only.
HALF_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 16


def drops(r, reason):
    return r.value(f'recd_connections_dropped_total{{reason="{reason}"}}') or 0


def flood(port):
    socks = []
    for i in range(FLOOD):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    time.sleep(0.2 * h.SCALE)  # let the connects finish before writing
    for i, s in enumerate(socks):
        try:
            if i % 10 == 1:
                s.send(HALF_HELLO)
            elif i % 10 == 2:
                s.send(b"GET / HTTP/1.0\r\n\r\n")
        except OSError:
            pass  # shed already
    return socks


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < FLOOD + 200:
        print(f"SKIP: the file descriptor limit ({hard}) is below {FLOOD + 200}")
        return 77
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY
                                                else FLOOD * 4, hard))
    tmp = tempfile.mkdtemp(prefix="daemon_tls_flood.")
    fails = []
    r = None
    socks = []
    try:
        pki = h.Pki(tmp)
        s_cert, s_key = pki.issue("server", "localhost", dns=["localhost"])
        data = h.capture("samp-onfoot", "good")
        r = h.Recd(tmp, f"""listen: [tls://0.0.0.0:0]
output: {{root: {tmp}/out}}
metrics: {{listen: 127.0.0.1:0}}
limits: {{max_connections: 300, max_connections_per_peer: 1000}}
tls: {{cert: {s_cert}, key: {s_key}, handshake_timeout: 3s}}
""")
        port = r.ports["tls"]
        socks = flood(port)
        started = time.time()
        raw = socket.socket()
        raw.bind(("127.0.0.2", 0))  # another peer
        raw.settimeout(10 * h.SCALE)
        raw.connect(("127.0.0.1", port))
        ctx = h.client_context(pki.cert)
        try:
            s = ctx.wrap_socket(raw, server_hostname="localhost")
            s.sendall(data)
            err, _ = h.tls_end(s)
        except OSError as e:
            err = str(e)
        took = time.time() - started
        if err:
            fails.append(f"the good sender failed after {took:.1f} s: {err}")
        files = h.wait_files(tmp + "/out", ".rec", 1)
        if len(files) != 1:
            fails.append(f"the good sender's session was not recorded: {files}")
        else:
            v = subprocess.run([h.RECTOOL, "verify", files[0]], capture_output=True, text=True)
            if v.returncode != 0:
                fails.append("rectool verify: " + v.stdout + v.stderr)
        # Past 300 connections, each new one takes the place of the one idle longest.
        if r.wait_value('recd_connections_dropped_total{reason="shed"}', 300) < 300:
            fails.append(f"only {drops(r, 'shed')} connections were shed")
        if drops(r, "tls_handshake") < 1:
            fails.append("garbage handshakes are not counted as tls_handshake")
        if r.wait_value('recd_connections_dropped_total{reason="tls_handshake_timeout"}', 1, 10) < 1:
            fails.append("no half-done handshake ended at tls.handshake_timeout")
        print(f"good sender done in {took:.2f} s; shed {drops(r, 'shed')}, tls_handshake "
              f"{drops(r, 'tls_handshake')}, tls_handshake_timeout {drops(r, 'tls_handshake_timeout')}")
    finally:
        for s in socks:
            s.close()
        if r:
            r.stop()
    for f in fails:
        print("FAIL: " + f)
    if fails and r:
        print(open(r.log).read()[-2000:])
    return 1 if fails else 0


sys.exit(main())
