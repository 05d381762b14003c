# SPDX-License-Identifier: MIT
# Publisher of fleet_nats_dedup.sh: states FIRST..LAST (seq = state number) of session "dd" with
# the Python client, packed. MODE: open (the open, seq 0, then the states), again (the states as
# one packed message, as a publisher sending them twice would), one-frame (pack_bytes=0, an
# older publisher), close (the states, then the close). Prints the JetStream messages published.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))

from recd_client import Client  # noqa: E402
from test_python_client import onfoot  # noqa: E402

url, mode, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
query = "?partitions=1&linger=10s&" + ("pack_bytes=0" if mode == "one-frame" else
                                       "pack_bytes=512KiB" if mode == "again" else "pack_bytes=1KiB")
with Client(url + query) as c:
    if mode == "open":
        c.send({"type": "open", "session": "dd", "format": "samp-onfoot",
                "start_time": 1763213398000, "seq": 0})
    else:
        c._formats["dd"] = "samp-onfoot"  # opened by the first publisher
    for i in range(first, last + 1):
        c.send(dict(onfoot(i), type="state", session="dd", seq=i))
    if mode == "close":
        c.send({"type": "close", "session": "dd", "seq": last + 1})
print(c._nats.published)
