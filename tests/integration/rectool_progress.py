# SPDX-License-Identifier: MIT
# rectool on a terminal shows progress with a rate and the time left (generate, export, import,
# send, verify, repair, the editing commands cut, retime, transform, concat, split and diff, and
# plot); on a pipe it stays silent; and SIGINT or SIGTERM in the middle of a command leaves no
# OUT.part behind (generate, import, cut, plot), ending the process by that signal.
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time

RECTOOL = os.environ.get("RECTOOL", "")
if not RECTOOL or not os.access(RECTOOL, os.X_OK):
    print("SKIP: $RECTOOL does not name the rectool binary")
    sys.exit(77)
WAIT = 120.0
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def on_a_terminal(args):
    """Runs rectool with stderr on a pty; returns (exit code, what the terminal showed). The bar
    shows at once (RECTOOL_PROGRESS_DELAY=0): how fast this build is does not decide the test."""
    master, slave = pty.openpty()
    env = dict(os.environ, RECTOOL_PROGRESS_DELAY="0")
    proc = subprocess.Popen([RECTOOL] + args, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    text = b""
    deadline = time.time() + WAIT
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 1.0)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            text += data
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=WAIT), text.decode(errors="replace")


def stopped_while_working(args, outputs, sig, what):
    """Starts a long command with stderr on a pty, signals it once its bar shows (it is working,
    its result still in memory); it must die of the signal, leaving none of outputs nor their
    .part files."""
    master, slave = pty.openpty()
    env = dict(os.environ, RECTOOL_PROGRESS_DELAY="0")
    proc = subprocess.Popen([RECTOOL] + args, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    text = b""
    deadline = time.time() + WAIT
    while b"[" not in text and proc.poll() is None and time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                text += os.read(master, 65536)
            except OSError:
                break
    if proc.poll() is not None:
        fail(f"{what}: finished (exit {proc.returncode}) before it could be stopped")
    else:
        proc.send_signal(sig)
    rc = proc.wait(timeout=WAIT)
    os.close(master)
    if rc != -sig:
        fail(f"{what}: exit {rc}, wanted death by signal {sig}")
    for out in outputs:
        for path in (out, out + ".part"):
            if os.path.exists(path):
                fail(f"{what}: {path} left behind after signal {sig}")


def verifies(path, what):
    piped = subprocess.run([RECTOOL, "verify", "-q", path], capture_output=True, text=True,
                           timeout=WAIT)
    if piped.returncode != 0:
        fail(f"{what}: {path} does not verify: {piped.stderr!r}")


def edits_on_a_terminal(tmp):
    """Every editing command and plot on a terminal: a bar in bytes of the input, then a result that
    verifies. An hour of Recap (about 0.3 MB) takes well under a second each here."""
    rec = os.path.join(tmp, "hour.recap")
    subprocess.run([RECTOOL, "generate", "--format", "recap", "--duration", "1h", "-o", rec],
                   check=True, capture_output=True, timeout=WAIT)
    walk = os.path.join(tmp, "walk10.rec")
    subprocess.run([RECTOOL, "generate", "--format", "samp-onfoot", "--scenario", "walk",
                    "--duration", "10m", "-o", walk], check=True, capture_output=True, timeout=WAIT)
    out = lambda name: os.path.join(tmp, name)
    cases = [
        ("cut", ["cut", rec, "--from", "10m", "--to", "50m", "-o", out("cut.recap")], "cutting",
         [out("cut.recap")]),
        ("retime", ["retime", walk, "--speed", "2", "--rate", "20", "-o", out("fast.rec")],
         "retiming", [out("fast.rec")]),
        ("transform", ["transform", walk, "--translate", "10,20,0", "--rotate-z", "90", "-o",
                       out("moved.rec")], "transforming", [out("moved.rec")]),
        ("concat", ["concat", rec, rec, "-o", out("twice.recap")], "joining", [out("twice.recap")]),
        ("split", ["split", rec, "--at", "20m,40m", "-o", out("piece")], "splitting",
         [out("piece-1.recap"), out("piece-2.recap"), out("piece-3.recap")]),
        ("diff", ["diff", rec, rec], "comparing", []),
        ("plot", ["plot", walk, "-o", out("walk.svg")], "plotting", []),
    ]
    for what, args, label, results in cases:
        rc, shown = on_a_terminal(args)
        if rc != 0 or label + " [" not in shown or "B/s" not in shown or "ETA " not in shown:
            fail(f"{what} on a terminal: exit {rc}, showed {shown[-400:]!r}")
        for path in results:
            verifies(path, what)
    if not os.path.exists(out("walk.svg")) or os.path.getsize(out("walk.svg")) == 0:
        fail("plot on a terminal wrote no SVG")
    # On a pipe the same commands print only their results.
    piped = subprocess.run([RECTOOL, "cut", rec, "--to", "30m", "-q", "-o", out("quiet.recap")],
                           capture_output=True, text=True, timeout=WAIT)
    if piped.returncode != 0 or piped.stderr:
        fail(f"cut on a pipe: exit {piped.returncode}, stderr {piped.stderr!r}")


def wait_for_file(path, proc):
    deadline = time.time() + WAIT
    while not os.path.exists(path):
        if proc.poll() is not None or time.time() > deadline:
            return False
        time.sleep(0.005)
    return True


def interrupted(args, part, sig, what):
    """Starts a long command, signals it once its part file exists; nothing may be left."""
    proc = subprocess.Popen([RECTOOL] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not wait_for_file(part, proc):
        fail(f"{what}: {part} never appeared (exit {proc.poll()})")
        proc.kill()
        proc.wait()
        return
    proc.send_signal(sig)
    rc = proc.wait(timeout=WAIT)
    if rc != -sig:
        fail(f"{what}: exit {rc}, wanted death by signal {sig}")
    if os.path.exists(part):
        fail(f"{what}: {part} left behind after signal {sig}")
    final = part[: -len(".part")]
    if os.path.exists(final):
        fail(f"{what}: {final} exists although the command was stopped")


def main(tmp):
    # generate: about 6 s for a day of Recap here; the bar appears after 0.3 s.
    out = os.path.join(tmp, "day.recap")
    rc, shown = on_a_terminal(["generate", "--format", "recap", "--duration", "24h", "-o", out])
    if rc != 0 or not os.path.exists(out):
        fail(f"generate on a terminal: exit {rc}")
    for want in ["generating [", "x real time", "ETA "]:
        if want not in shown:
            fail(f"generate on a terminal shows no '{want}': {shown[-400:]!r}")
    if os.path.exists(out + ".part"):
        fail("generate left its .part")
    # verify and repair of that day (7 MiB): about half a second each here, through librecd's
    # progress callback; on a pipe they print nothing on stderr.
    rc, shown = on_a_terminal(["verify", out])
    if rc != 0 or "verifying [" not in shown or "B/s" not in shown or "ETA " not in shown:
        fail(f"verify on a terminal: exit {rc}, showed {shown[-400:]!r}")
    fixed = os.path.join(tmp, "fixed.recap")
    rc, shown = on_a_terminal(["repair", out, "-o", fixed])
    if rc != 0 or "repairing [" not in shown or "B/s" not in shown or "ETA " not in shown:
        fail(f"repair on a terminal: exit {rc}, showed {shown[-400:]!r}")
    for args in (["verify", out], ["repair", out, "-o", fixed]):
        piped = subprocess.run([RECTOOL] + args, capture_output=True, text=True, timeout=WAIT)
        if piped.returncode != 0 or piped.stderr:
            fail(f"{args[0]} on a pipe: exit {piped.returncode}, stderr {piped.stderr!r}")
    # export of half an hour on foot: about a second here.
    walk = os.path.join(tmp, "walk.rec")
    subprocess.run([RECTOOL, "generate", "--format", "samp-onfoot", "--scenario", "walk", "--duration",
                    "30m", "-o", walk], check=True, capture_output=True, timeout=WAIT)
    text = os.path.join(tmp, "walk.jsonl")
    rc, shown = on_a_terminal(["export", walk, "--to", "jsonl", "-o", text])
    if rc != 0 or "exporting [" not in shown or "blocks/s" not in shown or "ETA " not in shown:
        fail(f"export on a terminal: exit {rc}, showed {shown[-400:]!r}")
    # import of 250 000 JSON lines on foot (the line reader does about 200 000 a second here);
    # the same file is interrupted below.
    lines = os.path.join(tmp, "many.jsonl")
    state = ('{"type":"state","t":%d,"left_right":0,"up_down":-128,"keys":0,"position":[1730.2,1828.8,35.9],'
             '"rotation":[0.21,0.0,0.0,-0.97],"health":100,"armour":0,"weapon":0,"additional_key":0,'
             '"special_action":0,"velocity":[0.0,0.0,0.0],"surf_offset":[0.0,0.0,0.0],"surf_id":0,'
             '"anim_id":1189,"anim_flags":{"frame_delta":4,"loop":false,"lock_x":false,"lock_y":false,'
             '"freeze":false,"time":8}}\n')
    with open(lines, "w") as f:
        f.write('{"type":"open","format":"samp-onfoot"}\n')
        f.writelines(state % (i * 30) for i in range(250000))
        f.write('{"type":"close"}\n')
    rc, shown = on_a_terminal(["import", lines, "-o", os.path.join(tmp, "again.rec")])
    if rc != 0 or "importing [" not in shown or "lines/s" not in shown or "ETA " not in shown:
        fail(f"import on a terminal: exit {rc}, showed {shown[-400:]!r}")
    piped = subprocess.run([RECTOOL, "generate", "--format", "samp-onfoot", "--scenario", "walk",
                            "--duration", "10m", "-o", os.path.join(tmp, "w.rec")],
                           capture_output=True, text=True, timeout=WAIT)
    if piped.returncode != 0 or piped.stderr:
        fail(f"generate on a pipe: exit {piped.returncode}, stderr {piped.stderr!r}")

    # send: a file replayed on a terminal (to a port nobody listens on is an error before any
    # progress, so use --speed max against a listener of our own).
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def sink():
        c, _ = srv.accept()
        while c.recv(1 << 16):
            pass
        c.close()

    threading.Thread(target=sink, daemon=True).start()
    rc, shown = on_a_terminal(["send", "--synthetic", "--format", "samp-onfoot", "--sessions", "2",
                               "--rate", "50", "--duration", "1500ms", "--to", f"tcp://127.0.0.1:{port}"])
    if rc != 0 or "sending [" not in shown or "samples/s" not in shown or "ETA " not in shown:
        fail(f"send on a terminal: exit {rc}, showed {shown[-400:]!r}")
    srv.close()

    edits_on_a_terminal(tmp)
    # SIGTERM during a cut of the day (seconds of work): nothing is written yet, nothing may stay.
    stopped_while_working(["cut", out, "--from", "1h", "-o", os.path.join(tmp, "cut-day.recap")],
                          [os.path.join(tmp, "cut-day.recap")], signal.SIGTERM, "cut")
    # SIGINT while plot draws the day into an SVG, which cairo writes as it draws (OUT.part).
    svg = os.path.join(tmp, "day.svg")
    interrupted(["plot", out, "-o", svg], svg + ".part", signal.SIGINT, "plot")

    # SIGINT during generate (a Recap week takes half a minute: it is still running).
    week = os.path.join(tmp, "week.recap")
    interrupted(["generate", "--format", "recap", "--duration", "7d", "-o", week], week + ".part",
                signal.SIGINT, "generate")
    # SIGTERM during import of those lines.
    imported = os.path.join(tmp, "many.rec")
    interrupted(["import", lines, "-o", imported], imported + ".part", signal.SIGTERM, "import")


tmp = tempfile.mkdtemp(prefix="rectool_progress.")
try:
    main(tmp)
finally:
    subprocess.run(["rm", "-rf", tmp])
sys.exit(1 if failures else 0)
