# SPDX-License-Identifier: MIT
# tls:// listeners and client certificate identities (issue 40), with a CA made by openssl here:
# - a session over tls:// gives a file byte-identical to the same bytes over tcp://, and its part
#   manifest names the identity;
# - wrong CA, expired client certificate, wrong server host name (checked by the client), no
#   client certificate, and a certificate no identities pattern matches are each refused, counted
#   in recd_connections_dropped_total, and record nothing;
# - an identity opening a key outside its pattern is refused (auth), a resume of a session from
#   another identity is refused (not_owner);
# - auth.token_file is read at start and again on reload (SIGHUP), the old token then refused;
# - tls.min_version "1.3" set by a reload refuses a TLS 1.2 client (counted) and takes a 1.3 one.
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tls_harness as h  # noqa: E402

h.need_binaries()
FAILS = []
TOKEN1, TOKEN2 = "a" * 24, "b" * 24


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what)


def ndjson(*msgs):
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


def drops(r, reason):
    return r.value(f'recd_connections_dropped_total{{reason="{reason}"}}') or 0


def refusals(r, tmp, data, pki, ctx_ok):
    """Each bad client is refused, counted, and records nothing."""
    other = h.Pki(tmp, "other")
    o_cert, o_key = other.issue("other-client", "gs-eu-3")
    x_cert, x_key = pki.issue("expired", "gs-eu-4", days=-1)
    n_cert, n_key = pki.issue("nomatch", "laptop-1")
    before = h.files_under(tmp + "/tls-out")
    cases = [
        ("wrong CA", h.client_context(pki.cert, o_cert, o_key), "localhost", "tls_handshake"),
        ("expired", h.client_context(pki.cert, x_cert, x_key), "localhost", "tls_handshake"),
        ("wrong host name", ctx_ok, "wrong.example", "tls_handshake"),
        ("no client certificate", h.client_context(pki.cert), "localhost", "tls_handshake"),
        ("no identities pattern", h.client_context(pki.cert, n_cert, n_key), "localhost",
         "tls_identity"),
    ]
    for name, ctx, host, reason in cases:
        was = drops(r, reason)
        err, reply = h.tls_send(r.ports["tls"], data, ctx, host)
        now = r.wait_value(f'recd_connections_dropped_total{{reason="{reason}"}}', was + 1)
        check(now == was + 1, f"{name}: recd_connections_dropped_total{{reason={reason}}} went "
                              f"from {was} to {now} (client: {err}, reply {reply[:80]!r})")
    untrusting = ssl.create_default_context(cafile=other.cert)
    err, _ = h.tls_send(r.ports["tls"], data, untrusting)
    check(err is not None and "certificate verify failed" in err,
          f"a client trusting another CA took recd's certificate: {err}")
    time.sleep(0.3 * h.SCALE)
    check(h.files_under(tmp + "/tls-out") == before,
          "a refused client recorded something: " +
          str(set(h.files_under(tmp + "/tls-out")) - set(before)))


def identities(r, pki):
    us_cert, us_key = pki.issue("us", "gs-us-1")
    eu2_cert, eu2_key = pki.issue("eu2", "gs-eu-2", dns=["gs-eu-2.example"])
    auth = 'recd_decode_errors_total{reason="auth"}'
    was = r.value(auth)
    open_eu = {"type": "open", "session": "eu-own", "format": "samp-onfoot"}
    _, reply = h.tls_send(r.ports["tls"], ndjson(open_eu), h.client_context(pki.cert, us_cert, us_key),
                          reply=True)
    check(b"may open sessions 'us-*' only" in reply, f"gs-us-1 opened eu-own: {reply!r}")
    check(r.value(auth) == was + 1, "the refusal of a key outside the pattern is not counted as auth")
    # gs-eu-1 holds eu-own open; gs-eu-2 (an eu identity too) may not resume it.
    owner = socket.create_connection(("127.0.0.1", r.ports["tls"]))
    eu1 = h.client_context(pki.cert, pki.eu1_cert, pki.eu1_key)
    owner = eu1.wrap_socket(owner, server_hostname="localhost")
    owner.sendall(ndjson(open_eu))
    r.wait_value("recd_sessions_open", 1)
    not_owner = 'recd_decode_errors_total{reason="not_owner"}'
    was = r.value(not_owner)
    _, reply = h.tls_send(r.ports["tls"], ndjson(dict(open_eu, resume=True)),
                          h.client_context(pki.cert, eu2_cert, eu2_key), reply=True)
    check(b"belongs to identity 'gs-eu-1'" in reply, f"gs-eu-2 resumed gs-eu-1's session: {reply!r}")
    check(r.value(not_owner) == was + 1, "the refused resume is not counted as not_owner")
    # The console shows the owner's identity and the refusal on the session it was about.
    c = http.client.HTTPConnection("127.0.0.1", r.ports["metrics"], timeout=10 * h.SCALE)
    c.request("GET", "/api/sessions")
    listed = {x["key"]: x for x in json.loads(c.getresponse().read())["sessions"]}
    c.close()
    eu = listed.get("eu-own", {})
    check(eu.get("identity") == "gs-eu-1", f"/api/sessions shows identity {eu.get('identity')!r} for eu-own")
    check(eu.get("drops", {}).get("refused_by") == {"not_owner": 1},
          f"/api/sessions counts eu-own's refusals as {eu.get('drops')!r}")
    owner.sendall(ndjson({"type": "close", "session": "eu-own"}))
    err, _ = h.tls_end(owner)
    check(err is None, f"the owner's close: {err}")
    # A protocol error inside TLS is answered (sealed) like over TCP, whatever errno says it.
    for bad in (b"{broken\n", b"\x00\x00\x00\x05\xffgarbage"):
        _, reply = h.tls_send(r.ports["tls"], bad, eu1, reply=True)
        check(reply.startswith(b"{") or reply[:1] in (b"\x00",) or b"error" in reply,
              f"no error reply over TLS to {bad!r}: {reply!r}")
    label = 'recd_tls_connections_total{identity="gs-eu-*"}'
    check((r.value(label) or 0) >= 2, f"{label} does not count the eu identities")


def token_file(r, tmp):
    auth = 'recd_decode_errors_total{reason="auth"}'

    def send(token, key):
        return h.tcp_send(r.ports["tcp"], ndjson(
            {"type": "open", "session": key, "format": "samp-onfoot", "auth": token},
            {"type": "close", "session": key}))

    check(send(TOKEN1, "tok-1") == b"", "the token of auth.token_file is refused")
    with open(tmp + "/token", "w") as f:
        f.write(TOKEN2 + "\n")
    was = r.value('recd_config_reloads_total{result="ok"}')
    r.hup()
    r.wait_value('recd_config_reloads_total{result="ok"}', was + 1)
    errors = r.value(auth)
    check(b"wrong auth token" in send(TOKEN1, "tok-2"), "the old token is taken after a reload")
    check(r.value(auth) == errors + 1, "the old token's refusal is not counted")
    check(send(TOKEN2, "tok-3") == b"", "the rotated token is refused after a reload")


def min_version(r, pki):
    """tls.min_version: "1.3" by reload; a TLS 1.2 client is then refused, a 1.3 one taken."""
    text = open(r.cfg).read().replace("client_ca: ", 'min_version: "1.3", client_ca: ')
    with open(r.cfg, "w") as f:
        f.write(text)
    was = r.value('recd_config_reloads_total{result="ok"}')
    r.hup()
    r.wait_value('recd_config_reloads_total{result="ok"}', was + 1)
    old = h.client_context(pki.cert, pki.eu1_cert, pki.eu1_key)
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    before = drops(r, "tls_handshake")
    err, _ = h.tls_send(r.ports["tls"], ndjson({"type": "open", "session": "eu-v", "format": "samp-onfoot"}), old)
    check(err is not None, "a TLS 1.2 client was taken with tls.min_version 1.3")
    check(r.wait_value('recd_connections_dropped_total{reason="tls_handshake"}', before + 1) == before + 1,
          "the TLS 1.2 client's refusal is not counted")
    new = h.client_context(pki.cert, pki.eu1_cert, pki.eu1_key)
    err, reply = h.tls_send(r.ports["tls"], ndjson({"type": "open", "session": "eu-v", "format": "samp-onfoot"},
                                                   {"type": "close", "session": "eu-v"}), new)
    check(err is None and reply == b"", f"a TLS 1.3 client was refused: {err} {reply!r}")


def main():
    tmp = tempfile.mkdtemp(prefix="daemon_tls.")
    plain = r = None
    try:
        pki = h.Pki(tmp)
        s_cert, s_key = pki.issue("server", "localhost", dns=["localhost"], ip="127.0.0.1")
        pki.eu1_cert, pki.eu1_key = pki.issue("eu1", "gs-eu-1")
        with open(tmp + "/token", "w") as f:
            f.write(TOKEN1 + "\n")
        data = h.capture("samp-onfoot", "eu-a", extra=("--auth", TOKEN1))
        plain = h.Recd(tmp, f"listen: [tcp://127.0.0.1:0]\noutput: {{root: {tmp}/tcp-out}}\n"
                            "metrics: {listen: 127.0.0.1:0}\n", "plain")
        r = h.Recd(tmp, f"""listen: [tls://127.0.0.1:0, tcp://127.0.0.1:0]
output: {{root: {tmp}/tls-out, part_manifest: true}}
metrics: {{listen: 127.0.0.1:0}}
auth: {{token_file: {tmp}/token}}
tls: {{cert: {s_cert}, key: {s_key}, client_ca: {pki.cert}}}
identities:
  "gs-eu-*": {{sessions: "eu-*"}}
  "gs-us-*": {{sessions: "us-*"}}
""")
        check(h.tcp_send(plain.ports["tcp"], data) == b"", "plain TCP refused the session")
        ctx_ok = h.client_context(pki.cert, pki.eu1_cert, pki.eu1_key)
        err, reply = h.tls_send(r.ports["tls"], data, ctx_ok)
        check(err is None and reply == b"", f"TLS refused the session: {err} {reply!r}")
        p = h.wait_files(tmp + "/tcp-out", ".rec", 1)
        t = h.wait_files(tmp + "/tls-out", ".rec", 1)
        check(len(p) == 1 and len(t) == 1, f"files: {p} {t}")
        if len(p) == 1 and len(t) == 1:
            check(open(p[0], "rb").read() == open(t[0], "rb").read(),
                  "the file recorded over tls:// differs from the one over tcp://")
            v = subprocess.run([h.RECTOOL, "verify", t[0]], capture_output=True, text=True)
            check(v.returncode == 0, "rectool verify: " + v.stdout + v.stderr)
            m = h.wait_files(tmp + "/tls-out", ".rec.json", 1) or h.wait_files(tmp + "/tls-out", ".json", 1)
            ident = json.load(open(m[0])).get("identity") if m else None
            check(ident == "gs-eu-1", f"the part manifest's identity is {ident!r}")
        refusals(r, tmp, data, pki, ctx_ok)
        identities(r, pki)
        token_file(r, tmp)
        min_version(r, pki)
    finally:
        for x in (plain, r):
            if x:
                x.stop()
    if FAILS:
        print(open(r.log).read()[-3000:] if r else "")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("ok")
    return 0


sys.exit(main())
