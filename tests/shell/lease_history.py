# SPDX-License-Identifier: MIT
# The lease history of a recd fleet, for the fleet tests, over the plain NATS protocol (standard
# library only).
#   record PORT STREAM OUT: follows the lease bucket's stream (an ephemeral push consumer from its
#     first message) and appends each stored write to OUT as a JSON line: stream sequence,
#     server time (ns), key, operation (PUT, DEL, PURGE) and value. Runs until killed.
#   check OUT TTL_MS: fails when a partition's lease went to another instance while the previous
#     owner's lease was neither released nor expired, i.e. when two instances held it at once.
import json
import socket
import sys


def record(port, stream, out):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    f.readline()  # INFO
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n')
    s.sendall(b"SUB _LH.deliver 1\r\nSUB _LH.reply 2\r\n")
    req = json.dumps({"stream_name": stream,
                      "config": {"deliver_subject": "_LH.deliver", "deliver_policy": "all",
                                 "ack_policy": "none", "replay_policy": "instant"}}).encode()
    s.sendall(b"PUB $JS.API.CONSUMER.CREATE.%s _LH.reply %d\r\n%s\r\n" % (stream.encode(), len(req), req))
    with open(out, "a") as log:
        while True:
            line = f.readline()
            if not line:
                return
            words = line.split()
            if not words:
                continue
            if words[0] == b"PING":
                s.sendall(b"PONG\r\n")
                continue
            if words[0] not in (b"MSG", b"HMSG"):
                continue
            total = int(words[-1])
            hdr_len = int(words[-2]) if words[0] == b"HMSG" else 0
            body = f.read(total + 2)[:total]
            if words[2] != b"1":  # not a stored write (sid 1) but the API's reply (sid 2)
                reply = json.loads(body[hdr_len:] or b"{}")
                if "error" in reply:
                    print("lease_history: %s" % reply["error"], file=sys.stderr)
                    return
                continue
            ack = words[3].decode().split(".")  # the write keeps its own subject, $KV.<bucket>.<key>
            # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>, or with a domain
            # and an account hash after ACK and a token at the end (newer servers).
            if len(ack) == 9:
                sseq, ts = int(ack[5]), int(ack[7])
            else:
                sseq, ts = int(ack[7]), int(ack[9])
            op = "PUT"
            for h in body[:hdr_len].decode("latin-1").split("\r\n")[1:]:
                if h.lower().startswith("kv-operation:"):
                    op = h.split(":", 1)[1].strip()
            key = words[1].decode().split(".", 2)[2]
            log.write(json.dumps({"seq": sseq, "ts": ts, "key": key, "op": op,
                                  "value": body[hdr_len:].decode("latin-1")}) + "\n")
            log.flush()


def check(out, ttl_ms):
    events = [json.loads(l) for l in open(out) if l.strip()]
    events.sort(key=lambda e: e["seq"])
    ttl_ns = ttl_ms * 1000000
    owner, since, bad, handovers = {}, {}, [], 0
    for e in events:
        k = e["key"]
        if not k.startswith("p"):
            continue  # i.<instance>: the live-instance count
        if e["op"] != "PUT":
            owner.pop(k, None)
            continue
        prev = owner.get(k)
        if prev is not None and prev != e["value"]:
            if e["ts"] - since[k] < ttl_ns:
                bad.append("%s: %s claimed it %.3f s after %s renewed it (TTL %d ms), without a "
                           "release" % (k, e["value"], (e["ts"] - since[k]) / 1e9, prev, ttl_ms))
            handovers += 1
        elif prev is None and k in since:
            handovers += 1
        owner[k] = e["value"]
        since[k] = e["ts"]
    if bad:
        print("\n".join(bad[:20]))
        sys.exit(1)
    print("%d lease writes, %d hand-overs, never two owners" % (len(events), handovers))


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        check(sys.argv[2], int(sys.argv[3]))
