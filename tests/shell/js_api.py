# SPDX-License-Identifier: MIT
# One JetStream API request over the plain NATS protocol (standard library only), for the fleet
# tests: js_api.py PORT SUBJECT [JSON] prints the reply and exits 1 when it holds an error.
import json
import socket
import sys


def main():
    port, subject = int(sys.argv[1]), sys.argv[2]
    body = (sys.argv[3] if len(sys.argv) > 3 else "").encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    f = s.makefile("rb")
    f.readline()  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _JSAPI.reply 1\r\n')
    s.sendall(b"PUB %s _JSAPI.reply %d\r\n%s\r\n" % (subject.encode(), len(body), body))
    while True:
        words = f.readline().split()
        if not words:
            continue
        if words[0] == b"PING":
            s.sendall(b"PONG\r\n")
        elif words[0] in (b"MSG", b"HMSG"):
            total = int(words[-1])
            hdr_len = int(words[-2]) if words[0] == b"HMSG" else 0
            reply = f.read(total + 2)[hdr_len:total].decode()
            print(reply)
            return 1 if "error" in (json.loads(reply or "{}")) else 0


if __name__ == "__main__":
    sys.exit(main())
