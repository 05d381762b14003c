# SPDX-License-Identifier: MIT
# daemon_carla_actors.sh's sender: one CARLA session over TCP that adds N actors with BP-byte
# blueprints and never deletes them (or, with "churn", deletes each right after its add, all in
# one frame), reading replies meanwhile. Prints the number of error replies
# and the first one; waits for recd to close the connection (or for the sender's EOF).
import json, socket, sys, threading
host, port = sys.argv[1].rsplit(":", 1)
n, bp = int(sys.argv[2]), int(sys.argv[3])
churn = len(sys.argv) > 4 and sys.argv[4] == "churn"
s = socket.create_connection((host, int(port)))
s.settimeout(300)
replies = bytearray()
def read_replies():
    try:
        while True:
            b = s.recv(1 << 16)
            if not b:
                return
            replies.extend(b)
    except OSError:
        return
reader = threading.Thread(target=read_replies)
reader.start()
head = [{"type": "open", "session": "actors", "format": "carla", "carla": {"map": "Town01"}},
        {"type": "state", "session": "actors", "frame": 1, "elapsed": 0.0}]
lines = [json.dumps(m) for m in head]
blueprint = "vehicle." + "x" * (bp - 8)
template = ('{"type":"event","session":"actors","kind":"add","id":%d,"actor_type":1,'
            '"location":[0,0,0],"rotation":[0,0,0],"uid":%d,"blueprint":"' + blueprint +
            '","attributes":[]}')
try:
    s.sendall(("\n".join(lines) + "\n").encode())
    chunk = []
    for i in range(1, n + 1):
        chunk.append(template % (i, i))
        if churn:
            chunk.append('{"type":"event","session":"actors","kind":"delete","id":%d}' % i)
        if len(chunk) == 1000 or i == n:
            s.sendall(("\n".join(chunk) + "\n").encode())
            chunk = []
    if not churn:  # a close would write the frame held back, and free it
        s.sendall(b'{"type":"close","session":"actors"}\n')
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass  # recd refused a message and closed the connection after its drain
reader.join()
text = replies.decode(errors="replace").splitlines()
print(len(text))
print(text[0] if text else "")
