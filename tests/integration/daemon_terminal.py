# SPDX-License-Identifier: MIT
# recd's log as a person at a terminal sees it (stderr on a pty): timestamped plain lines, the
# absolute output path, how to stop, what a stop waits for, and a second Ctrl-C that stops at
# once. With stderr on a pipe (journald, scripts) the lines keep their <N> priority prefixes.
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

RECD = os.environ.get("RECD", "")
if not RECD or not os.access(RECD, os.X_OK):
    print("SKIP: $RECD does not name the recd binary (the daemon is not built)")
    sys.exit(77)
# Generous: the CI box is busy and sanitizer builds are slow; nothing here waits on a timer.
WAIT = 60.0
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


class Pty:
    """Reads what recd writes to its terminal, line by line."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        self.text = ""

    def wait_for(self, pattern):
        deadline = time.time() + WAIT
        while not re.search(pattern, self.text, re.M):
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.master], [], [], left)
            if r:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    return None
                if not data:
                    return None
                self.text += data.decode(errors="replace").replace("\r\n", "\n")
        return re.search(pattern, self.text, re.M)


def start(tmp, stderr):
    return subprocess.Popen([RECD, "--listen", "tcp://127.0.0.1:0", "--output", "rec", "--metrics",
                             "127.0.0.1:0", "--print-ports"],
                            cwd=tmp, stdout=subprocess.PIPE, stderr=stderr, text=True)


def listen_port(proc):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("listen tcp://"):
            return int(line.strip().rsplit(":", 1)[1])
    return None


def on_a_terminal(tmp):
    term = Pty()
    proc = start(tmp, term.slave)
    os.close(term.slave)
    try:
        port = listen_port(proc)
        if port is None:
            fail("recd printed no listen port")
            return
        out = os.path.realpath(os.path.join(tmp, "rec"))
        if not term.wait_for(r"recd \S+ ready \(output " + re.escape(out) + r"\)$"):
            fail(f"no 'ready (output {out})' line:\n{term.text}")
        if not term.wait_for(r"Ctrl-C to stop \(twice to stop at once\)$"):
            fail(f"no Ctrl-C line:\n{term.text}")
        for line in term.text.splitlines():
            if line and not STAMP.match(line):
                fail(f"a line without a timestamp: {line!r}")
            if re.match(r"^<\d>", line) or "> <" in line:
                fail(f"a <N> prefix on a terminal: {line!r}")
        client = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.2)  # not needed for correctness: the drain message counts what is open
        proc.send_signal(signal.SIGINT)
        if not term.wait_for(r"shutting down: waiting for 1 connection to finish \(up to 10s\); "
                             r"Ctrl-C again to stop at once$"):
            fail(f"the drain does not say what it waits for:\n{term.text}")
        # Every 2 s it says again what it waits for (the drain itself may take up to 10 s).
        if not term.wait_for(r"shutting down: still waiting for 1 connection to finish \(\d+s left\)$"):
            fail(f"the drain does not keep saying what it waits for:\n{term.text}")
        proc.send_signal(signal.SIGINT)
        if not term.wait_for(r"second stop signal: closing 1 connection now$"):
            fail(f"no answer to the second Ctrl-C:\n{term.text}")
        try:
            rc = proc.wait(timeout=WAIT)
            if rc != 0:
                fail(f"recd exited {rc} after two Ctrl-C")
        except subprocess.TimeoutExpired:
            fail("recd still runs after the second Ctrl-C")
        client.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(term.master)


def on_a_pipe(tmp):
    proc = start(tmp, subprocess.PIPE)
    try:
        if listen_port(proc) is None:
            fail("recd printed no listen port (pipe)")
            return
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT)
        lines = [l for l in err.splitlines() if l]
        if not lines or any(not re.match(r"^<[0-7]>", l) for l in lines):
            fail(f"stderr on a pipe must keep <N> prefixes:\n{err}")
        if "Ctrl-C" in err:
            fail("the Ctrl-C hint is for terminals only")
        if not re.search(r"^<5>recd \S+ ready \(output /", err, re.M):
            fail(f"no absolute output path on a pipe:\n{err}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


tmp = tempfile.mkdtemp(prefix="daemon_terminal.")
try:
    on_a_terminal(tmp)
    on_a_pipe(tmp)
finally:
    subprocess.run(["rm", "-rf", tmp])
sys.exit(1 if failures else 0)
