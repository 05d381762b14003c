# SPDX-License-Identifier: MIT
# metrics.tls (issue 40): the HTTP endpoint speaks HTTPS with tls.cert. /metrics and /healthz
# answer over HTTPS (plain HTTP gets no answer); the save endpoint, a mutating one, needs the
# token or a client certificate that verifies: without either it is refused (401), with either
# it is taken (404 for a session that does not exist); a certificate from another CA fails the
# handshake.
import http.client
import os
import shutil
import socket
import ssl
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_harness as h  # noqa: E402

h.need_binaries()
TOKEN = "c" * 24


def request(port, ctx, method, path, headers=None):
    c = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=10 * h.SCALE)
    try:
        c.request(method, path, headers=headers or {})
        resp = c.getresponse()
        return resp.status, resp.read().decode()
    finally:
        c.close()


def main():
    tmp = tempfile.mkdtemp(prefix="daemon_tls_https.")
    fails = []
    r = None
    try:
        pki = h.Pki(tmp)
        s_cert, s_key = pki.issue("server", "localhost", dns=["localhost"])
        c_cert, c_key = pki.issue("client", "ops-1")
        other = h.Pki(tmp, "other")
        o_cert, o_key = other.issue("intruder", "ops-2")
        r = h.Recd(tmp, f"""listen: [tcp://127.0.0.1:0]
output: {{root: {tmp}/out}}
metrics: {{listen: 127.0.0.1:0, tls: true}}
auth: {{token: {TOKEN}}}
tls: {{cert: {s_cert}, key: {s_key}, client_ca: {pki.cert}}}
""")
        port = r.ports["metrics"]
        anon = h.client_context(pki.cert)
        code, body = request(port, anon, "GET", "/metrics")
        if code != 200 or "recd_connections_dropped_total" not in body:
            fails.append(f"GET /metrics over HTTPS: {code}")
        code, body = request(port, anon, "GET", "/healthz")
        if code != 200 or '"status":"ok"' not in body:
            fails.append(f"GET /healthz over HTTPS: {code} {body}")
        plain = socket.create_connection(("127.0.0.1", port), timeout=5 * h.SCALE)
        plain.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        try:
            got = plain.recv(100)
        except OSError:
            got = b""
        plain.close()
        if got.startswith(b"HTTP/"):
            fails.append("plain HTTP is answered on the HTTPS endpoint")
        path = "/sessions/none-such/save?last=5s"
        code, body = request(port, anon, "POST", path)
        if code != 401:
            fails.append(f"a save without token or certificate: {code} {body}")
        code, body = request(port, anon, "POST", path, {"Authorization": "Bearer " + TOKEN})
        if code != 404:
            fails.append(f"a save with the token: {code} {body}")
        code, body = request(port, h.client_context(pki.cert, c_cert, c_key), "POST", path)
        if code != 404:
            fails.append(f"a save with a client certificate: {code} {body}")
        try:
            code, body = request(port, h.client_context(pki.cert, o_cert, o_key), "POST", path)
            fails.append(f"a certificate from another CA was taken: {code} {body}")
        except (OSError, ssl.SSLError, http.client.HTTPException):
            pass
    finally:
        if r:
            r.stop()
    for f in fails:
        print("FAIL: " + f)
    if fails and r:
        print(open(r.log).read()[-2000:])
    if not fails:
        shutil.rmtree(tmp, ignore_errors=True)
        print("ok")
    return 1 if fails else 0


sys.exit(main())
