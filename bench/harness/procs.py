# SPDX-License-Identifier: MIT
"""Process plumbing for the benchmark harness: starting children as an unprivileged user, reading
their CPU time and peak memory from /proc, waiting on ports and conditions with a deadline, and
stopping them by pid (never by name)."""

import os
import signal
import socket
import subprocess
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
UNPRIVILEGED = ("nobody", "nogroup")


class BenchError(Exception):
    """A run that could not be measured (a daemon that did not start, a timeout)."""


def free_port(kind=socket.SOCK_STREAM):
    """A port the kernel just considered free on 127.0.0.1 (for daemons without port 0)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def give_to_unprivileged(path):
    """Hands a directory we created to the unprivileged user the daemons run as."""
    if os.geteuid() == 0:
        import grp
        import pwd
        os.chown(path, pwd.getpwnam(UNPRIVILEGED[0]).pw_uid, grp.getgrnam(UNPRIVILEGED[1]).gr_gid)


def spawn(argv, log_path, stdout_path=None, unprivileged=True, env=None):
    """Starts argv with stderr (and stdout unless stdout_path is given) in log_path."""
    log = open(log_path, "ab")
    out = open(stdout_path, "wb") if stdout_path else log
    kwargs = {}
    if unprivileged and os.geteuid() == 0:
        kwargs = {"user": UNPRIVILEGED[0], "group": UNPRIVILEGED[1], "extra_groups": []}
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=log,
                                env=env, close_fds=True, **kwargs)
    finally:
        log.close()
        if stdout_path:
            out.close()


def _stat_fields(pid, tid=None):
    """The fields of /proc/PID/stat (or of one thread's) after the command name, from state on."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path) as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid, tid=None):
    """utime + stime of a live process, or of one of its threads (tid == pid: the main thread,
    recd's loop), in seconds."""
    fields = _stat_fields(pid, tid)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def minor_faults(pid, tid=None):
    """Minor page faults (first touches of anonymous memory, mostly) of a process or thread."""
    return int(_stat_fields(pid, tid)[7])


def status_kib(pid, key):
    """A /proc/PID/status value in KiB (VmHWM = peak RSS, VmRSS = current RSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _sockets(proto):
    rows = []
    for path in (f"/proc/net/{proto}", f"/proc/net/{proto}6"):
        try:
            with open(path) as f:
                next(f)
                rows += [line.split() for line in f]
        except FileNotFoundError:
            pass
    return rows


def listening(port, proto="tcp"):
    """True when something is bound to the port (TCP: in LISTEN state)."""
    for row in _sockets(proto):
        local_port = int(row[1].rsplit(":", 1)[1], 16)
        if local_port == port and (proto != "tcp" or row[3] == "0A"):
            return True
    return False


def wait_for(predicate, timeout, interval=0.01):
    """Polls predicate until it is true or timeout seconds have passed; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def stop(proc, timeout=60.0, sig=signal.SIGTERM):
    """Signals one child by its pid and waits; SIGKILL after timeout. Returns (exit code, seconds)."""
    t0 = time.monotonic()
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    return proc.returncode, time.monotonic() - t0


def wait_exit_rusage(proc, timeout):
    """Waits for a child to exit by itself; returns (monotonic exit time, rusage) or raises."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return time.monotonic(), usage
        time.sleep(0.002)
    raise BenchError(f"pid {proc.pid} did not exit within {timeout:.0f} s")


def udp_counters():
    """Kernel-wide UDP counters (/proc/net/snmp): drops show up in RcvbufErrors."""
    with open("/proc/net/snmp") as f:
        lines = [line.split() for line in f if line.startswith("Udp:")]
    return dict(zip(lines[0][1:], map(int, lines[1][1:])))


def run_json(argv, timeout):
    """Runs a helper that prints one JSON line (benchgen); returns the parsed object."""
    import json
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if res.returncode not in (0, 1) or not res.stdout.strip():
        raise BenchError(f"{os.path.basename(argv[0])} failed ({res.returncode}): "
                         f"{res.stderr.decode(errors='replace').strip()[-300:]}")
    out = json.loads(res.stdout.decode().strip().splitlines()[-1])
    out["stderr"] = res.stderr.decode(errors="replace").strip()
    return out
