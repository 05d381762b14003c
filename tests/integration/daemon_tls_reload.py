# SPDX-License-Identifier: MIT
# A certificate renewed under load (issue 40): while a TLS connection streams three sessions,
# the certificate files are replaced and recd gets SIGHUP. The live connection goes on with the
# certificate it started with and loses nothing (its files are byte-identical to the same bytes
# sent over tcp:// to another recd); a new connection gets the renewed certificate. A reload
# whose new key does not match its certificate fails and keeps the running one.
import hashlib
import os
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_harness as h  # noqa: E402

h.need_binaries()


def served_cert(port, ca):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10 * h.SCALE)
    s = h.client_context(ca).wrap_socket(raw, server_hostname="localhost")
    der = s.getpeercert(binary_form=True)
    h.tls_end(s)
    return hashlib.sha256(der).hexdigest()


def fingerprint(pem):
    import ssl
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(pem).read())).hexdigest()


def reload_and_wait(r, result):
    series = f'recd_config_reloads_total{{result="{result}"}}'
    was = r.value(series)
    r.hup()
    return r.wait_value(series, was + 1) == was + 1


def main():
    tmp = tempfile.mkdtemp(prefix="daemon_tls_reload.")
    fails = []
    r = plain = None
    try:
        pki = h.Pki(tmp)
        old_cert, old_key = pki.issue("server", "localhost", dns=["localhost"])
        new_cert, new_key = pki.issue("renewed", "localhost", dns=["localhost"])
        live_cert, live_key = tmp + "/live.pem", tmp + "/live.key"
        shutil.copy(old_cert, live_cert)
        shutil.copy(old_key, live_key)
        data = h.capture("samp-onfoot", "load", samples=300, extra=("--sessions", "3"))
        plain = h.Recd(tmp, f"listen: [tcp://127.0.0.1:0]\noutput: {{root: {tmp}/tcp-out}}\n"
                            "metrics: {listen: 127.0.0.1:0}\n", "plain")
        r = h.Recd(tmp, f"""listen: [tls://127.0.0.1:0]
output: {{root: {tmp}/tls-out}}
metrics: {{listen: 127.0.0.1:0}}
tls: {{cert: {live_cert}, key: {live_key}}}
""")
        port = r.ports["tls"]
        if served_cert(port, pki.cert) != fingerprint(old_cert):
            fails.append("recd does not serve the configured certificate")
        raw = socket.create_connection(("127.0.0.1", port), timeout=10 * h.SCALE)
        live = h.client_context(pki.cert).wrap_socket(raw, server_hostname="localhost")
        chunks = [data[i:i + 997] for i in range(0, len(data), 997)]
        half = len(chunks) // 2
        for c in chunks[:half]:
            live.sendall(c)
        # Renewed: the new files in place (the key first: a half-done swap fails the reload).
        shutil.copy(new_key, live_key + ".new")
        shutil.copy(new_cert, live_cert + ".new")
        os.replace(live_key + ".new", live_key)
        os.replace(live_cert + ".new", live_cert)
        if not reload_and_wait(r, "ok"):
            fails.append("the reload with the renewed certificate did not succeed")
        for c in chunks[half:half + 2]:
            live.sendall(c)
        if served_cert(port, pki.cert) != fingerprint(new_cert):
            fails.append("a new connection does not get the renewed certificate")
        # A key that does not match: the reload fails, the renewed certificate stays in use.
        shutil.copy(old_key, live_key)
        if not reload_and_wait(r, "failed"):
            fails.append("a reload with a mismatched key did not fail")
        if served_cert(port, pki.cert) != fingerprint(new_cert):
            fails.append("a failed reload changed the certificate served")
        for c in chunks[half + 2:]:
            live.sendall(c)
        err, _ = h.tls_end(live)
        if err:
            fails.append(f"the live connection failed across the reloads: {err}")
        if h.tcp_send(plain.ports["tcp"], data) != b"":
            fails.append("plain TCP refused the sessions")
        p = h.wait_files(tmp + "/tcp-out", ".rec", 3)
        t = h.wait_files(tmp + "/tls-out", ".rec", 3)
        if len(p) != 3 or len(t) != 3:
            fails.append(f"files: {p} {t}")
        else:
            for a, b in zip(p, t):
                if open(a, "rb").read() != open(b, "rb").read():
                    fails.append(f"{b} differs from {a}: a sample was lost across the reload")
    finally:
        for x in (plain, r):
            if x:
                x.stop()
    for f in fails:
        print("FAIL: " + f)
    if fails and r:
        print(open(r.log).read()[-2000:])
    if not fails:
        shutil.rmtree(tmp, ignore_errors=True)
        print("ok")
    return 1 if fails else 0


sys.exit(main())
