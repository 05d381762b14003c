# SPDX-License-Identifier: MIT
# Shared by the daemon_tls*.py tests: a CA and certificates made with the openssl command in a
# temporary directory, recd started on free loopback ports (and stopped), a session's wire bytes
# captured from `rectool send --synthetic`, and senders over plain TCP and over TLS (Python's ssl).
import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

RECD = os.environ.get("RECD", "")
RECTOOL = os.environ.get("RECTOOL", "")
SCALE = float(os.environ.get("RECD_TEST_TIME_SCALE", "1") or "1")


def need_binaries():
    for name, path in (("RECD", RECD), ("RECTOOL", RECTOOL)):
        if not path or not os.access(path, os.X_OK):
            print(f"SKIP: ${name} does not name the binary (not built)")
            sys.exit(77)
    if subprocess.run(["openssl", "version"], capture_output=True).returncode != 0:
        print("SKIP: the openssl command is missing")
        sys.exit(77)


def openssl(*args):
    p = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("openssl " + " ".join(args) + ": " + p.stderr)


class Pki:
    """A CA (name) in directory d, and certificates it signs."""

    def __init__(self, d, name="ca"):
        self.d, self.name = d, name
        self.cert = os.path.join(d, name + ".pem")
        self.key = os.path.join(d, name + ".key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", self.key, "-out", self.cert, "-days", "2", "-subj", f"/CN={name} CA")

    def issue(self, stem, cn, dns=(), days=2, ip=None):
        """stem.pem and stem.key: a certificate for cn (expired with days=-1)."""
        key, csr = os.path.join(self.d, stem + ".key"), os.path.join(self.d, stem + ".csr")
        cert, ext = os.path.join(self.d, stem + ".pem"), os.path.join(self.d, stem + ".ext")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", csr, "-subj", f"/CN={cn}")
        sans = [f"DNS:{n}" for n in dns] + ([f"IP:{ip}"] if ip else [])
        with open(ext, "w") as f:
            f.write(("subjectAltName=" + ",".join(sans) + "\n") if sans else "")
        openssl("x509", "-req", "-in", csr, "-CA", self.cert, "-CAkey", self.key,
                "-CAcreateserial", "-out", cert, "-days", str(days), "-extfile", ext)
        return cert, key


class Recd:
    """recd on the config text given (free ports, --print-ports)."""

    def __init__(self, tmp, config, name="recd"):
        self.cfg = os.path.join(tmp, name + ".yaml")
        self.log = os.path.join(tmp, name + ".log")
        with open(self.cfg, "w") as f:
            f.write(config)
        self.proc = subprocess.Popen([RECD, "--config", self.cfg, "--print-ports"],
                                     stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True)
        self.ports = {}
        deadline = time.time() + 30 * SCALE
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line or line.strip() == "ready":
                break
            kind, _, addr = line.strip().partition(" ")
            scheme = addr.split("://")[0] if "://" in addr else kind
            self.ports[scheme] = int(addr.rsplit(":", 1)[1])
        if not self.ports:
            self.stop()
            raise RuntimeError("recd did not start: " + open(self.log).read())

    def scrape(self):
        c = http.client.HTTPConnection("127.0.0.1", self.ports["metrics"], timeout=10 * SCALE)
        c.request("GET", "/metrics")
        body = c.getresponse().read().decode()
        c.close()
        return body

    def value(self, series):
        m = re.search("^" + re.escape(series) + r" (\S+)$", self.scrape(), re.M)
        return float(m.group(1)) if m else None

    def wait_value(self, series, at_least, seconds=10):
        deadline = time.time() + seconds * SCALE
        v = self.value(series)
        while (v or 0) < at_least and time.time() < deadline:
            time.sleep(0.05)
            v = self.value(series)
        return v or 0

    def hup(self):
        self.proc.send_signal(signal.SIGHUP)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20 * SCALE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def capture(fmt, session, samples=200, extra=()):
    """The wire bytes `rectool send --synthetic` sends for one session (key session + "-1")."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    chunks = []

    def take():
        c, _ = srv.accept()
        while True:
            b = c.recv(65536)
            if not b:
                break
            chunks.append(b)
        c.close()

    t = threading.Thread(target=take)
    t.start()
    rate = 1000
    p = subprocess.run([RECTOOL, "send", "--synthetic", "--format", fmt, "--sessions", "1",
                        "--rate", str(rate), "--duration", f"{samples * 1000 // rate}ms",
                        "--session", session, *extra,
                        "--to", f"tcp://127.0.0.1:{srv.getsockname()[1]}"],
                       capture_output=True, text=True)
    t.join()
    srv.close()
    if p.returncode != 0:
        raise RuntimeError("rectool send: " + p.stderr)
    return b"".join(chunks)


def finish(sock, seconds=10):
    """Half-closes and reads to the end: recd closes once it took everything. The reply bytes."""
    sock.settimeout(seconds * SCALE)
    got = b""
    try:
        sock.shutdown(socket.SHUT_WR)
        while True:
            b = sock.recv(65536)
            if not b:
                break
            got += b
    except (OSError, ssl.SSLError) as e:
        got += f"<{e}>".encode()
    sock.close()
    return got


def tcp_send(port, data):
    s = socket.create_connection(("127.0.0.1", port), timeout=10 * SCALE)
    s.sendall(data)
    return finish(s)


def client_context(ca, cert=None, key=None):
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def tls_end(s, reply=False):
    """Ends a TLS connection. With reply: reads recd's answer to the end (an error reply, then
    its close_notify); else sends close_notify and waits for recd's (everything was taken).
    (error text or None, reply bytes)."""
    s.settimeout(10 * SCALE)
    got = b""
    try:
        if not reply:
            s.unwrap()
            return None, b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except (OSError, ssl.SSLError) as e:
        return str(e), got
    finally:
        s.close()
    return None, got


def tls_send(port, data, ctx, hostname="localhost", reply=False):
    """Sends data over TLS and ends the connection (tls_end). (error text or None, reply)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10 * SCALE)
    try:
        s = ctx.wrap_socket(raw, server_hostname=hostname)
        s.sendall(data)
    except (OSError, ssl.SSLError) as e:
        raw.close()
        return str(e), b""
    return tls_end(s, reply)


def files_under(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names]
    return sorted(out)


def wait_files(root, suffix, count, seconds=10):
    deadline = time.time() + seconds * SCALE
    found = [f for f in files_under(root) if f.endswith(suffix)]
    while len(found) < count and time.time() < deadline:
        time.sleep(0.05)
        found = [f for f in files_under(root) if f.endswith(suffix)]
    return found
