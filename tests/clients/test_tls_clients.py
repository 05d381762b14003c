# SPDX-License-Identifier: MIT
# tls:// in the three clients against recd: a throwaway CA made with openssl (server certificate
# for localhost and 127.0.0.1, a client certificate, and a second CA that signed nothing of
# ours). One recorded session is sent through rectool send (librecd's C client), the Python
# client and the Java client, each over plain TCP and over TLS with a client certificate; every
# file must be byte-identical to the plain TCP one. Then each client must refuse a server whose
# certificate does not chain to its ca= and one whose certificate does not hold the name it was
# told, and must report the server's refusal when it has no certificate of its own; none of
# those sessions may leave a file. Java is skipped (noted) only when javac is absent.
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "clients", "python"))
sys.path.insert(0, HERE)

from recd_client import Client  # noqa: E402

SCALE = float(os.environ.get("RECD_TEST_TIME_SCALE", "1") or 1)
RECD, RECTOOL = os.environ["RECD"], os.environ["RECTOOL"]
HAVE_JAVA = shutil.which("javac") is not None and shutil.which("jar") is not None


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(d):
    """ca.pem signs server.pem (localhost, 127.0.0.1) and client.pem (CN gs-eu-1);
    other-ca.pem signs nothing of ours."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for ca in ("ca", "other-ca"):
        openssl("req", "-x509", *ec, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
                "-subj", f"/CN=recd test {ca}", cwd=d)
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, subj, ext in (("server", "/CN=localhost", ["-extfile", "server.ext"]),
                            ("client", "/CN=gs-eu-1", [])):
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subj, cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", *ext, cwd=d)


class TlsClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="recd_tls_clients.")
        cls.certs = os.path.join(cls.tmp, "certs")
        os.mkdir(cls.certs)
        make_ca(cls.certs)
        cls.root = os.path.join(cls.tmp, "recordings")
        os.mkdir(cls.root)
        cls.start_recd()
        cls.session_file = os.path.join(cls.tmp, "match.recap")
        subprocess.run([RECTOOL, "generate", "--format", "recap", "--scenario", "mixed",
                        "--duration", "5s", "--seed", "11", "-o", cls.session_file], check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([RECTOOL, "export", cls.session_file, "--to", "jsonl"], check=True,
                             capture_output=True, text=True).stdout
        cls.messages = [json.loads(line) for line in out.splitlines() if line.strip()]
        if HAVE_JAVA:
            cls.build_java()

    @classmethod
    def start_recd(cls):
        """recd with a tcp:// listener and a tls:// one that requires a client certificate."""
        cfg = os.path.join(cls.tmp, "recd.yaml")
        c = cls.certs
        with open(cfg, "w") as f:
            f.write(f"listen:\n  - tcp://127.0.0.1:0\n  - tls://127.0.0.1:0\n"
                    f"output:\n  root: {cls.root}\nmetrics:\n  enabled: false\n"
                    f"tls:\n  cert: {c}/server.pem\n  key: {c}/server.key\n"
                    f"  client_ca: {c}/ca.pem\n")
        cls.log = open(os.path.join(cls.tmp, "recd.log"), "w+")
        cls.proc = subprocess.Popen([RECD, "--config", cfg, "--print-ports"], stdout=subprocess.PIPE,
                                    stderr=cls.log, text=True)
        urls = {}
        for line in cls.proc.stdout:
            if line.startswith("listen "):
                url = line.split()[1]
                urls[url.split(":", 1)[0]] = url
            if line.strip() == "ready":
                break
        if "tcp" not in urls or "tls" not in urls:
            cls.log.seek(0)
            raise RuntimeError(f"recd did not start with both listeners ({urls}):\n{cls.log.read()}")
        cls.tcp = urls["tcp"]
        cls.tls_port = int(urls["tls"].rsplit(":", 1)[1])

    @classmethod
    def build_java(cls):
        cls.java_out = os.path.join(cls.tmp, "java")
        subprocess.run(["bash", os.path.join(REPO, "clients", "java", "build.sh"), cls.java_out],
                       check=True, stdout=subprocess.DEVNULL)
        classes = os.path.join(cls.java_out, "test-classes")
        os.mkdir(classes)
        subprocess.run(["javac", "--release", "17", "-cp", os.path.join(cls.java_out, "recd-client.jar"),
                        "-d", classes, os.path.join(HERE, "java", "JsonLinesSender.java")], check=True)

    @classmethod
    def tearDownClass(cls):
        if cls.proc.poll() is None:
            cls.proc.terminate()
            cls.proc.wait(60 * SCALE)
        cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- helpers ----

    def tls_url(self, host="127.0.0.1", ca="ca.pem", cert=True, servername=None):
        c = self.certs
        q = f"ca={c}/{ca}"
        if cert:
            q += f"&cert={c}/client.pem&key={c}/client.key"
        if servername:
            q += f"&servername={servername}"
        return f"tls://{host}:{self.tls_port}?{q}"

    def files(self, session):
        d = os.path.join(self.root, "recap", session)
        # The recordings only: a .recap gets its seek index NAME.recap.idx beside it.
        return sorted(os.path.join(d, n) for n in os.listdir(d)
                      if not n.endswith(".idx")) if os.path.isdir(d) else []

    def wait_file(self, session):
        """The session's one finished file (it was closed by its sender)."""
        deadline = time.monotonic() + 30 * SCALE
        while time.monotonic() < deadline:
            done = [f for f in self.files(session) if not f.endswith(".part")]
            if done:
                self.assertEqual(len(self.files(session)), 1, self.files(session))
                return done[0]
            time.sleep(0.05)
        self.fail(f"no finished file for {session}: {self.files(session)}")

    def read(self, path):
        v = subprocess.run([RECTOOL, "verify", path], capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        with open(path, "rb") as f:
            return f.read()

    def send_c(self, url, session):
        return subprocess.run([RECTOOL, "send", self.session_file, "--to", url, "--session", session,
                               "--speed", "max"], capture_output=True, text=True, timeout=60 * SCALE)

    def send_python(self, url, session):
        with Client(url, reconnect=False) as c:
            for m in self.messages:
                c.send(dict(m, session=session))

    def send_java(self, url, session):
        cp = os.pathsep.join([os.path.join(self.java_out, "recd-client.jar"),
                              os.path.join(self.java_out, "test-classes")])
        lines = "".join(json.dumps(dict(m, session=session)) + "\n" for m in self.messages)
        # a short-lived JVM: the quick compiler and the serial collector start fastest
        return subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", cp,
                               "recd.client.JsonLinesSender", url, "-"], input=lines,
                              capture_output=True, text=True, timeout=120 * SCALE)

    def assert_nothing_recorded(self, session):
        time.sleep(0.2 * SCALE)  # what was sent, had anything been, has arrived by now
        self.assertEqual(self.files(session), [], f"{session} left a file")

    # ---- the same bytes over TLS ----

    def test_c_client(self):
        plain = self.send_c(self.tcp, "c-plain")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        tls = self.send_c(self.tls_url(), "c-tls")
        self.assertEqual(tls.returncode, 0, tls.stderr)
        self.assertEqual(self.read(self.wait_file("c-tls")), self.read(self.wait_file("c-plain")))
        by_name = self.send_c(self.tls_url(host="localhost"), "c-tls-name")  # a DNS name, SNI
        self.assertEqual(by_name.returncode, 0, by_name.stderr)
        self.assertEqual(self.read(self.wait_file("c-tls-name")), self.read(self.wait_file("c-plain")))

    def test_python_client(self):
        self.send_python(self.tcp, "py-plain")
        self.send_python(self.tls_url(), "py-tls")
        self.send_python(self.tls_url(host="localhost"), "py-tls-name")
        plain = self.read(self.wait_file("py-plain"))
        self.assertEqual(self.read(self.wait_file("py-tls")), plain)
        self.assertEqual(self.read(self.wait_file("py-tls-name")), plain)

    @unittest.skipUnless(HAVE_JAVA, "javac/jar not found")
    def test_java_client(self):
        for url, session in ((self.tcp, "java-plain"), (self.tls_url(host="localhost"), "java-tls")):
            r = self.send_java(url, session)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIsNone(json.loads(r.stdout.splitlines()[-1])["error"], r.stdout)
        plain = self.read(self.wait_file("java-plain"))
        self.assertEqual(self.read(self.wait_file("java-tls")), plain)

    # ---- refusals: a clear error, nothing recorded ----

    def refusals(self):
        """(case, URL, what the error must say for C, Python, Java)."""
        return (("wrong-ca", self.tls_url(ca="other-ca.pem"),
                 ("certificate is refused", "certificate verify failed", "PKIX path")),
                ("wrong-name", self.tls_url(servername="recd.invalid"),
                 ("hostname mismatch", "Hostname mismatch", "No subject alternative DNS name")),
                ("no-cert", self.tls_url(cert=False),
                 ("certificate required", "CERTIFICATE_REQUIRED", "certificate_required")))

    def test_c_client_refusals(self):
        for case, url, why in self.refusals():
            r = self.send_c(url, f"c-{case}")
            self.assertNotEqual(r.returncode, 0, f"{case}: {r.stdout}")
            self.assertIn(why[0], r.stderr, case)
            self.assert_nothing_recorded(f"c-{case}")

    def test_python_client_refusals(self):
        for case, url, why in self.refusals():
            with self.assertRaises(ssl.SSLError, msg=case) as e:
                self.send_python(url, f"py-{case}")
            self.assertIn(why[1], str(e.exception), case)
            self.assert_nothing_recorded(f"py-{case}")

    @unittest.skipUnless(HAVE_JAVA, "javac/jar not found")
    def test_java_client_refusals(self):
        for case, url, why in self.refusals():
            r = self.send_java(url, f"java-{case}")
            out = r.stdout + r.stderr
            self.assertTrue(r.returncode != 0 or '"error":null' not in r.stdout, f"{case}: {out}")
            self.assertIn(why[2], out, case)
            self.assert_nothing_recorded(f"java-{case}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
