#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_tls_handshake: real ClientHellos (TLS 1.2 and 1.3, from Python's ssl), each
# behind the two bytes the target reads first (context and piece size), and a few broken ones.
set -euo pipefail
dir=${1:?usage: fuzz_tls_handshake.sh DIR}
mkdir -p "$dir"
python3 - "$dir" <<'PY'
import os, ssl, sys
d = sys.argv[1]
for i, (lo, hi) in enumerate([(ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3),
                              (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2),
                              (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)]):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.minimum_version, ctx.maximum_version = lo, hi
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    hello = out.read()
    for j, head in enumerate([b"\x00\xff", b"\x01\x07", b"\x03\x00"]):
        open(os.path.join(d, f"hello-{i}-{j}"), "wb").write(head + hello)
    open(os.path.join(d, f"cut-{i}"), "wb").write(b"\x00\xff" + hello[: len(hello) // 2])
open(os.path.join(d, "http"), "wb").write(b"\x00\xffGET / HTTP/1.1\r\nHost: x\r\n\r\n")
open(os.path.join(d, "sslv2"), "wb").write(b"\x00\xff\x80\x2e\x01\x00\x02\x00\x15\x00\x00\x00\x10")
PY
