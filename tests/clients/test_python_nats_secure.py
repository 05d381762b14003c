# SPDX-License-Identifier: MIT
# The Python JetStream publisher with TLS and credentials: the pure-Python Ed25519 signer against
# RFC 8032's test vectors 1-3; nkey seeds (base32, CRC-16) and .creds files; a scripted server
# checking the CONNECT a .creds file gives; a real nats-server with TLS (a CA and a certificate
# made here by openssl) feeding a recd fleet instance that consumes over TLS too, the sessions
# coming out byte-identical to TCP, a wrong CA refused before anything is sent; a real
# nats-server that only lets an nkey user in, a wrong seed refused; and one in operator mode
# (JWTs signed here) where the publisher and recd log in with .creds files.
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

from recd_client import Client, ed25519  # noqa: E402
from recd_client.nats import parse_nats_url  # noqa: E402
from recd_client.nkeys import (PREFIX_ACCOUNT, PREFIX_OPERATOR, PREFIX_USER,  # noqa: E402
                               decode_seed, encode_public, encode_seed, generate_user_seed,
                               load_creds, load_nkey, public_of_seed)
from recd_harness import SLOW  # noqa: E402
from test_python_client import RecordsAllFormats, onfoot  # noqa: E402
from test_python_nats import FixedStart, NatsServer, start_fleet_recd  # noqa: E402

# RFC 8032 section 7.1, TEST 1-3: secret key, public key, message, signature (hex).
RFC8032 = [
    ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
    ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def creds_text(jwt, seed):
    return (f"-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n"
            "************************* IMPORTANT *************************\n"
            "NKEY Seed printed below can be used to sign and prove identity.\n\n"
            f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n")


def raw_public(nkey):
    """The 32 key bytes of a public nkey (56 base32 characters: no padding needed)."""
    return base64.b32decode(nkey)[1:33]


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Ed25519(unittest.TestCase):
    def test_rfc8032_vectors(self):
        for sk, pk, msg, sig in RFC8032:
            seed, m = bytes.fromhex(sk), bytes.fromhex(msg)
            self.assertEqual(ed25519.public_key(seed).hex(), pk)
            self.assertEqual(ed25519.sign(seed, m).hex(), sig)
            self.assertTrue(ed25519.verify(bytes.fromhex(pk), m, bytes.fromhex(sig)))

    def test_verify_refuses_changes(self):
        sk, pk, _, sig = RFC8032[1]
        pub, good = bytes.fromhex(pk), bytes.fromhex(sig)
        self.assertFalse(ed25519.verify(pub, b"\x73", good))
        self.assertFalse(ed25519.verify(pub, b"\x72", good[:63] + bytes([good[63] ^ 1])))
        self.assertFalse(ed25519.verify(pub, b"\x72", good[:-1]))
        with self.assertRaises(ValueError):
            ed25519.sign(b"short", b"")


class Nkeys(unittest.TestCase):
    def test_seed_round_trip_and_public_key(self):
        raw = bytes.fromhex(RFC8032[0][0])
        seed = encode_seed(PREFIX_USER, raw)
        self.assertTrue(seed.startswith("SU"), seed)
        self.assertEqual(len(seed), 58)
        self.assertEqual(decode_seed(seed), (PREFIX_USER, raw))
        pub = public_of_seed(seed)
        self.assertTrue(pub.startswith("U") and len(pub) == 56, pub)
        self.assertEqual(raw_public(pub).hex(), RFC8032[0][1])
        self.assertTrue(encode_seed(PREFIX_ACCOUNT, raw).startswith("SA"))

    def test_bad_seeds_are_refused_clearly(self):
        seed = generate_user_seed()
        flipped = seed[:10] + ("A" if seed[10] != "A" else "B") + seed[11:]
        for bad, why in ((flipped, "checksum does not match"), (seed[:-8], "31 bytes after base32"),
                         ("U" + seed[1:], "starts with 'S'"), (seed[:20] + "1" + seed[21:],
                                                               "not base32")):
            with self.assertRaisesRegex(ValueError, why, msg=bad):
                decode_seed(bad)
        with tempfile.TemporaryDirectory() as tmp:
            path = write(os.path.join(tmp, "bad.nk"), flipped + "\n")
            with self.assertRaisesRegex(ValueError, r"nkey seed file .*bad\.nk: the checksum"):
                load_nkey(path)
            account = write(os.path.join(tmp, "account.nk"),
                            encode_seed(PREFIX_ACCOUNT, os.urandom(32)))
            with self.assertRaisesRegex(ValueError, "the seed of a account, a user seed"):
                load_nkey(account)
            with self.assertRaisesRegex(ValueError, "No such file"):
                load_nkey(os.path.join(tmp, "missing.nk"))
            # Before connecting: a bad seed never reaches the network.
            with self.assertRaisesRegex(ValueError, "checksum"):
                Client("nats://127.0.0.1:9/p", nkey=path)

    def test_creds_file_gives_jwt_and_signature(self):
        seed = generate_user_seed()
        with tempfile.TemporaryDirectory() as tmp:
            good = load_creds(write(os.path.join(tmp, "u.creds"), creds_text("h.p.s", seed)))
            self.assertEqual(good.jwt, "h.p.s")
            fields = good.connect_fields("nonce-123")
            self.assertEqual(set(fields), {"jwt", "sig"})
            pub = raw_public(public_of_seed(seed))
            self.assertTrue(ed25519.verify(pub, b"nonce-123", unb64url(fields["sig"])))
            no_jwt = write(os.path.join(tmp, "n.creds"), creds_text("", seed))
            with self.assertRaisesRegex(ValueError, "no user JWT"):
                load_creds(no_jwt)
            # A .creds file also serves as an nkey file (its seed block).
            self.assertEqual(load_nkey(os.path.join(tmp, "u.creds")).nkey, public_of_seed(seed))

    def test_url_options(self):
        u = parse_nats_url("nats://alice:p%40ss@127.0.0.1:4222/recd.eu?partitions=4&"
                           "max_in_flight=64&ack_timeout=1m30s&buffer=2MiB&encoding=binary&"
                           "tls_ca=/etc/ca%20dir/ca.pem&creds=/c.creds")
        self.assertEqual((u.user, u.password, u.partitions, u.max_in_flight, u.ack_timeout,
                          u.buffer_bytes, u.tls_ca, u.creds),
                         ("alice", "p@ss", 4, 64, 90.0, 2 << 20, "/etc/ca dir/ca.pem", "/c.creds"))
        self.assertNotIn("p@ss", repr(u))
        self.assertEqual(parse_nats_url("nats://s3cret@h/p").token, "s3cret")
        for bad, why in (("nats://h/p?port=1", "unknown option"),
                         ("nats://h/p?partitions=0", "partitions=0: expected"),
                         ("nats://h/p?encoding=ndjson", "expected binary"),
                         ("nats://h/p?ack_timeout=10", "expected a duration"),
                         ("nats://h/p?buffer=1", "expected a size"),
                         ("nats://h/p?tls_ca=", "expected a file path"),
                         ("nats://h/p?nkey=a&nkey=b", "given twice")):
            with self.assertRaisesRegex(ValueError, why, msg=bad):
                parse_nats_url(bad)
        with self.assertRaisesRegex(ValueError, "partitions is given both"):
            Client("nats://127.0.0.1:9/p?partitions=4", partitions=8)
        with self.assertRaisesRegex(ValueError, "give one of creds, USER:PASSWORD@"):
            Client("nats://u:p@127.0.0.1:9/p", creds="/x.creds")


class ScriptedAuthServer:
    """One client: INFO with auth_required and a nonce, then records the CONNECT and answers
    its PING, or -ERR when refuse is set."""

    def __init__(self, refuse=False):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.refuse = refuse
        self.connect = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.listener.accept()
        self.listener.close()
        f = conn.makefile("rb")
        conn.sendall(b'INFO {"server_id":"fake","auth_required":true,"nonce":"N0nce-xyz",'
                     b'"max_payload":1048576}\r\n')
        for line in f:
            if line.startswith(b"CONNECT "):
                self.connect = json.loads(line[8:])
            elif line.startswith(b"PING"):
                conn.sendall(b"-ERR 'Authorization Violation'\r\n" if self.refuse else b"PONG\r\n")
                break
        f.close()
        conn.close()


class CredsOnTheWire(unittest.TestCase):
    """What a .creds file puts in CONNECT (a real server in operator mode is not run here)."""

    def test_connect_carries_jwt_and_nonce_signature(self):
        seed = generate_user_seed()
        with tempfile.TemporaryDirectory() as tmp:
            creds = write(os.path.join(tmp, "u.creds"), creds_text("eyJh.eyJi.c2ln", seed))
            fake = ScriptedAuthServer()
            c = Client(f"nats://127.0.0.1:{fake.port}/p", creds=creds)
            c._nats.abort()
            fake.thread.join(10)
            got = fake.connect
            self.assertEqual(got["jwt"], "eyJh.eyJi.c2ln")
            self.assertNotIn("nkey", got)
            pub = raw_public(public_of_seed(seed))
            self.assertTrue(ed25519.verify(pub, b"N0nce-xyz", unb64url(got["sig"])))
            fake = ScriptedAuthServer(refuse=True)
            with self.assertRaisesRegex(ConnectionError, r"refused the credentials of user nkey "
                                        r"U[A-Z2-7]+: -ERR 'Authorization Violation'"):
                Client(f"nats://127.0.0.1:{fake.port}/p", creds=creds)

    def test_user_password_and_token(self):
        fake = ScriptedAuthServer()
        Client(f"nats://alice:p%40ss@127.0.0.1:{fake.port}/p")._nats.abort()
        fake.thread.join(10)
        self.assertEqual((fake.connect["user"], fake.connect["pass"]), ("alice", "p@ss"))
        fake = ScriptedAuthServer()
        Client(f"nats://tok3n@127.0.0.1:{fake.port}/p")._nats.abort()
        fake.thread.join(10)
        self.assertEqual(fake.connect["auth_token"], "tok3n")
        fake = ScriptedAuthServer()
        with self.assertRaisesRegex(ConnectionError, "requires authentication: give creds="):
            Client(f"nats://127.0.0.1:{fake.port}/p")


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr}")


def make_ca(tmp, name):
    """A CA (NAME.pem, NAME.key) with a P-256 key."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
            "-subj", f"/CN=recd test {name}", cwd=tmp)
    return os.path.join(tmp, f"{name}.pem")


def make_cert(tmp, ca, name, san):
    """NAME.pem / NAME.key signed by the CA, with these subject alternative names."""
    write(os.path.join(tmp, f"{name}.cnf"), f"subjectAltName={san}\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=tmp)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.cnf",
            cwd=tmp)
    return os.path.join(tmp, f"{name}.pem"), os.path.join(tmp, f"{name}.key")


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
@unittest.skipUnless(shutil.which("openssl"),
                     "openssl is not installed (scripts/install-deps.sh installs it): no "
                     "certificates for the TLS test")
class PublishOverTls(RecordsAllFormats, unittest.TestCase):
    PREFIX = "pytls"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="recd_py_tls.")
        cls.ca = make_ca(cls.tmp, "ca")
        cls.other_ca = make_ca(cls.tmp, "other")
        # 127.0.0.1 as an IP address (Python checks those) and as a name (libnats).
        make_cert(cls.tmp, "ca", "server", "IP:127.0.0.1,DNS:127.0.0.1")
        # The server verifies clients: the publisher and recd present certificates of the CA.
        cls.cert, cls.key = make_cert(cls.tmp, "ca", "publisher", "DNS:publisher")
        recd_cert, recd_key = make_cert(cls.tmp, "ca", "recd", "DNS:recd")
        conf = write(os.path.join(cls.tmp, "nats.conf"),
                     f'tls {{\n  cert_file: "{cls.tmp}/server.pem"\n'
                     f'  key_file: "{cls.tmp}/server.key"\n  ca_file: "{cls.ca}"\n'
                     '  verify: true\n'
                     # A JVM's first handshake on a loaded machine can outlast the server's
                     # default TLS timeout of a few seconds.
                     '  timeout: 60\n}\n')
        cls.nats = NatsServer(cls.tmp, config=conf)
        cls.url = f"nats://127.0.0.1:{cls.nats.port}/{cls.PREFIX}"
        cls.recd = None
        # recd consumes over TLS too (libnats, nats.tls_*).
        cls.recd = start_fleet_recd(
            cls.url, f"flush:\n  interval: 1h\nnats:\n  tls_ca: {cls.ca}\n"
                     f"  tls_cert: {recd_cert}\n  tls_key: {recd_key}\n",
            cls.tearDownClass, " over TLS")

    @classmethod
    def tearDownClass(cls):
        if cls.recd:
            cls.recd.cleanup()
        cls.nats.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_sessions_match_tcp_byte_for_byte(self):
        with Client(self.recd.url("tcp", "binary")) as c:
            tcp = self.send_all_formats(FixedStart(c), "same")
        with Client(self.url, max_in_flight=16, tls_ca=self.ca, tls_cert=self.cert,
                    tls_key=self.key) as c:
            via = self.send_all_formats(FixedStart(c), "tls")
        self.assertEqual(c.messages_lost, 0)
        self.assertEqual(c._nats.acked, c._nats.published)  # every pack acknowledged
        self.check_files(tcp)
        self.check_files(via)
        self.assert_same_recordings(tcp, via, formats=tcp)

    def test_b_ca_in_the_url(self):
        key = "ca-in-url"
        with Client(f"{self.url}?tls_ca={self.ca}&partitions=8&tls_cert={self.cert}&"
                    f"tls_key={self.key}") as c:
            c.open(key, "samp-onfoot", start_time=1763213398000)
            for i in range(5):
                c.state(key, **onfoot(i))
            c.close_session(key)
        self.assertEqual((c.messages_sent, c._nats.acked), (7, c._nats.published))
        self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)], 30), self.recd.log_text())

    def test_c_wrong_ca_is_refused(self):
        with self.assertRaisesRegex(ConnectionError, r"TLS: the server's certificate was "
                                    r"refused: .* \(checked against tls_ca .*other\.pem"):
            Client(self.url, tls_ca=self.other_ca)
        # A server that requires TLS is checked against the system's CAs without tls_ca.
        with self.assertRaisesRegex(ConnectionError, "certificate was refused.*system's CAs"):
            Client(self.url)

    def test_d_host_name_is_checked(self):
        # The certificate names 127.0.0.1, not localhost.
        with self.assertRaisesRegex(ConnectionError, "certificate was refused.*localhost"):
            Client(f"nats://localhost:{self.nats.port}/{self.PREFIX}", tls_ca=self.ca)

    def test_f_client_certificate_is_needed(self):
        with self.assertRaisesRegex(ConnectionError, r"TLS.*CERTIFICATE.*\(does the server "
                                    r"want a client certificate\? tls_cert, tls_key\)"):
            Client(self.url, tls_ca=self.ca)
        with self.assertRaisesRegex(ValueError, "tls_key needs tls_cert"):
            Client(self.url, tls_ca=self.ca, tls_key=self.key)
        with self.assertRaisesRegex(ValueError, r"tls_cert .*ca\.key.*cannot load the client "
                                    "certificate"):
            Client(self.url, tls_ca=self.ca, tls_cert=os.path.join(self.tmp, "ca.key"))

    def test_e_no_clear_text_fallback(self):
        # A server without TLS: asking for TLS fails rather than publishing in clear text.
        plain = NatsServer(tempfile.mkdtemp(dir=self.tmp))
        try:
            with self.assertRaisesRegex(ConnectionError, "does not offer it; not connecting "
                                        "in clear text"):
                Client(f"nats://127.0.0.1:{plain.port}/p", tls_ca=self.ca)
        finally:
            plain.kill()


def js_request(port, creds, subject, body):
    """One JetStream API request with creds (nkeys.Credentials); the reply as JSON."""
    s = socket.create_connection(("127.0.0.1", port), timeout=20 * SLOW)
    f = s.makefile("rb")
    try:
        info = json.loads(f.readline()[5:])
        fields = creds.connect_fields(info["nonce"])
        data = body.encode()
        s.sendall(b"CONNECT " + json.dumps({"verbose": False, "protocol": 1, **fields}).encode()
                  + b"\r\nSUB _INBOX.t 1\r\n" + f"PUB {subject} _INBOX.t {len(data)}\r\n".encode()
                  + data + b"\r\n")
        while True:
            line = f.readline()
            if not line or line.startswith(b"-ERR"):
                raise RuntimeError(f"{subject}: {line!r}")
            if line.startswith(b"MSG "):
                return json.loads(f.read(int(line.split()[-1]) + 2))
            if line.startswith(b"PING"):
                s.sendall(b"PONG\r\n")
    finally:
        f.close()
        s.close()


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class NkeyAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="recd_py_nkey.")
        cls.seed = generate_user_seed()
        cls.seed_file = write(os.path.join(cls.tmp, "user.nk"), cls.seed + "\n")
        conf = write(os.path.join(cls.tmp, "nats.conf"),
                     "authorization {\n  users = [\n"
                     f"    {{ nkey: \"{public_of_seed(cls.seed)}\" }}\n  ]\n}}\n")
        cls.nats = NatsServer(cls.tmp, config=conf)
        created = js_request(cls.nats.port, load_nkey(cls.seed_file), "$JS.API.STREAM.CREATE.PYNKEY",
                             json.dumps({"name": "PYNKEY", "subjects": ["pynkey.>"],
                                         "storage": "memory"}))
        if "error" in created:
            cls.tearDownClass()
            raise RuntimeError(f"stream create: {created}")

    @classmethod
    def tearDownClass(cls):
        cls.nats.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_publish_with_seed_file(self):
        with Client(f"nats://127.0.0.1:{self.nats.port}/pynkey", nkey=self.seed_file) as c:
            c.open("nk-1", "samp-onfoot", start_time=1763213398000)
            for i in range(20):
                c.state("nk-1", **onfoot(i))
            c.close_session("nk-1")
        self.assertEqual((c.messages_lost, c.messages_sent, c._nats.acked), (0, 22, c._nats.published))
        info = js_request(self.nats.port, load_nkey(self.seed_file), "$JS.API.STREAM.INFO.PYNKEY",
                          "")
        self.assertEqual(info["state"]["messages"], c._nats.published)  # one pack or more

    def test_wrong_seed_is_refused(self):
        other = write(os.path.join(self.tmp, "other.nk"), generate_user_seed())
        with self.assertRaisesRegex(ConnectionError, r"refused user nkey U[A-Z2-7]{55}: -ERR "
                                    r"'Authorization Violation'"):
            Client(f"nats://127.0.0.1:{self.nats.port}/pynkey", nkey=other)
        with self.assertRaisesRegex(ConnectionError, "requires authentication"):
            Client(f"nats://127.0.0.1:{self.nats.port}/pynkey")


def b64url(data):
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def new_key(prefix):
    """(32-byte private key, public nkey, seed) of a fresh key of the given type."""
    raw = os.urandom(32)
    return raw, encode_public(prefix, ed25519.public_key(raw)), encode_seed(prefix, raw)


def signed_jwt(issuer_key, issuer, subject, name, nats):
    """A NATS JWT (alg ed25519-nkey) of these claims, signed by the issuer's private key."""
    claims = {"jti": b64url(os.urandom(33)).upper(), "iat": 1763213398, "iss": issuer,
              "sub": subject, "name": name, "nats": dict(nats, version=2)}
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    return f"{head}.{body}.{b64url(ed25519.sign(issuer_key, f'{head}.{body}'.encode()))}"


@unittest.skipUnless(shutil.which("nats-server"),
                     "nats-server is not installed (scripts/install-deps.sh installs it)")
class OperatorCreds(unittest.TestCase):
    """Decentralized auth: an operator, a system account and an account with JetStream, made
    here (JWTs signed with ed25519.py), preloaded into nats-server; the publisher and recd log
    in with .creds files of users of that account."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="recd_py_creds.")
        op_key, op_pub, _ = new_key(PREFIX_OPERATOR)
        cls.acc_key, cls.acc_pub, _ = new_key(PREFIX_ACCOUNT)
        _, sys_pub, _ = new_key(PREFIX_ACCOUNT)
        unlimited = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                     "wildcards": True, "conn": -1, "leaf": -1}
        operator = signed_jwt(op_key, op_pub, op_pub, "op", {"type": "operator"})
        system = signed_jwt(op_key, op_pub, sys_pub, "SYS",
                            {"type": "account", "limits": unlimited})
        account = signed_jwt(op_key, op_pub, cls.acc_pub, "recd",
                             {"type": "account", "limits": dict(
                                 unlimited, mem_storage=-1, disk_storage=-1, streams=-1,
                                 consumer=-1)})
        conf = write(os.path.join(cls.tmp, "nats.conf"),
                     f'operator: "{operator}"\nsystem_account: {sys_pub}\nresolver: MEMORY\n'
                     f'resolver_preload: {{\n  {cls.acc_pub}: "{account}"\n'
                     f'  {sys_pub}: "{system}"\n}}\n')
        cls.publisher = cls.user_creds("publisher")
        cls.nats = NatsServer(cls.tmp, config=conf)
        cls.url = f"nats://127.0.0.1:{cls.nats.port}/pycreds"
        cls.recd = None
        cls.recd = start_fleet_recd(cls.url, f"nats:\n  creds: {cls.user_creds('recd')}\n",
                                    cls.tearDownClass, " with its .creds")

    @classmethod
    def user_creds(cls, name, seed=None):
        """NAME.creds: a user of the account, its JWT signed by the account; seed: write this
        seed instead of the user's own."""
        _, pub, own = new_key(PREFIX_USER)
        user = signed_jwt(cls.acc_key, cls.acc_pub, pub, name,
                          {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1,
                           "payload": -1})
        return write(os.path.join(cls.tmp, f"{name}.creds"), creds_text(user, seed or own))

    @classmethod
    def tearDownClass(cls):
        if cls.recd:
            cls.recd.cleanup()
        cls.nats.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_publish_with_creds_into_recd(self):
        key = "creds-1"
        with Client(f"{self.url}?creds={self.publisher}") as c:
            c.open(key, "samp-onfoot", start_time=1763213398000)
            for i in range(12):
                c.state(key, **onfoot(i))
            c.close_session(key)
        self.assertEqual((c.messages_lost, c.messages_sent, c._nats.acked), (0, 14, c._nats.published))
        self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)], 30), self.recd.log_text())
        states = [m for m in self.recd.export(self.recd.files("samp-onfoot", key)[0])
                  if m["type"] == "state"]
        self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(12)])

    def test_jwt_with_another_seed_is_refused(self):
        forged = self.user_creds("forged", seed=generate_user_seed())
        with self.assertRaisesRegex(ConnectionError, r"refused the credentials of user nkey "
                                    r"U[A-Z2-7]+: -ERR 'Authorization Violation'"):
            Client(self.url, creds=forged)


if __name__ == "__main__":
    unittest.main(verbosity=2)
