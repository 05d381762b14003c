# SPDX-License-Identifier: MIT
"""A stand-in NATS server for nats_signed_connect.sh: it hands out a chosen nonce, checks the
nkey signature in CONNECT and writes one line per connection to the log.

libnats 3.4.1 sends no "sig" when the nonce's Ed25519 signature starts with a zero byte (its
base64 encoder reads that as an empty string), so 1 nkey connect in 256 is refused. The first
connection here gets a nonce whose signature with the test seed starts with zero; later ones get
an ordinary nonce. A connection with a valid signature is served (PING gets PONG, publishes are
read and never acknowledged); one without is refused the way nats-server refuses it.

Usage: nats_signed_connect.py PORT_FILE LOG_FILE SEED_FILE
"""
import base64
import hashlib
import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
from recd_client import ed25519, nkeys  # noqa: E402

SEED = hashlib.sha256(b"recd signed-connect test seed").digest()
ZERO_LED_NONCE = "recdnonce000329"  # the first recdnonceNNNNNN whose signature starts with 0x00
ORDINARY_NONCE = "recdnonce000000"


def read_line(f):
    line = f.readline()
    if not line:
        raise EOFError
    return line.rstrip(b"\r\n").decode("utf-8", "replace")


def serve(conn, number, nonce, log):
    f = conn.makefile("rb")
    info = {"server_id": "FAKE", "version": "2.9.0", "proto": 1, "headers": True,
            "auth_required": True, "max_payload": 1048576, "nonce": nonce}
    conn.sendall(b"INFO " + json.dumps(info).encode() + b"\r\n")
    try:
        line = read_line(f)
        fields = json.loads(line[len("CONNECT "):]) if line.startswith("CONNECT ") else {}
        sig = fields.get("sig")
        valid = False
        if sig:
            raw = base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
            valid = ed25519.verify(ed25519.public_key(SEED), nonce.encode(), raw)
        state = "valid" if valid else ("invalid" if sig else "absent")
        log.write("connection %d nonce %s sig %s\n" % (number, nonce, state))
        log.flush()
        if not valid:
            conn.sendall(b"-ERR 'Authorization Violation'\r\n")
            return
        while True:
            words = read_line(f).split()
            if not words:
                continue
            if words[0] == "PING":
                conn.sendall(b"PONG\r\n")
            elif words[0] in ("PUB", "HPUB"):
                f.read(int(words[-1]) + 2)  # the payload and its CRLF: read, never answered
    except (EOFError, OSError, ValueError):
        pass
    finally:
        conn.close()


def main():
    port_file, log_file, seed_file = sys.argv[1:4]
    if (ed25519.sign(SEED, ZERO_LED_NONCE.encode())[0] != 0
            or ed25519.sign(SEED, ORDINARY_NONCE.encode())[0] == 0):
        sys.exit("nats_signed_connect.py: the nonces do not give the signatures they are chosen for")
    with open(seed_file, "w") as out:
        out.write(nkeys.encode_seed(nkeys.PREFIX_USER, SEED) + "\n")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    log = open(log_file, "a")
    with open(port_file + ".tmp", "w") as out:
        out.write("%d\n" % server.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    number = 0
    while True:
        conn, _ = server.accept()
        number += 1
        nonce = ZERO_LED_NONCE if number == 1 else ORDINARY_NONCE
        threading.Thread(target=serve, args=(conn, number, nonce, log), daemon=True).start()


if __name__ == "__main__":
    main()
