#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark driver: prepares the fixed-seed streams, runs every scenario against recd, rsyslog and
the raw socket-to-file limit (loopback only, every run bounded in time), prints the tables and
writes them to bench/results/. Started by bench/run.sh (`make bench`, `make bench-quick`)."""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import carla  # noqa: E402
import export  # noqa: E402
import fleet  # noqa: E402
import prepared  # noqa: E402
import procs  # noqa: E402
import readback  # noqa: E402
import perf_profile  # noqa: E402
import report  # noqa: E402
import runs  # noqa: E402
import scenarios  # noqa: E402
import warm  # noqa: E402


class Env:
    def __init__(self, src, build, work):
        self.src, self.build, self.work = src, build, work
        self.benchgen = os.path.join(build, "bench", "benchgen")
        self.recd = os.path.join(build, "daemon", "recd")
        self.rectool = os.path.join(build, "tools", "rectool")
        self.rsyslogd = shutil.which("rsyslogd") or "/usr/sbin/rsyslogd"
        self.socat = shutil.which("socat") or "/usr/bin/socat"
        self.gzip = shutil.which("gzip") or "/bin/gzip"
        self.have_recd = os.access(self.recd, os.X_OK)


SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def machine():
    def first(path, prefix, sep=":"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(prefix):
                        return line.split(sep, 1)[1].strip()
        except OSError:
            pass
        return "?"

    def cmd(argv):
        try:
            lines = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   timeout=10).stdout.decode().strip().splitlines()
            return " ".join(lines) if argv[0] == "sh" else lines[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "?"

    mem_kib = int(first("/proc/meminfo", "MemTotal").split()[0])
    return {
        "nproc": os.cpu_count(), "cpu": first("/proc/cpuinfo", "model name"),
        "memory_gib": round(mem_kib / 1024 / 1024, 1), "kernel": platform.release(),
        "os": first("/etc/os-release", "PRETTY_NAME", "=").strip('"'),
        "rsyslog": cmd(["rsyslogd", "-v"]).replace(" compiled with:", "").strip(),
        "socat": cmd(["sh", "-c", "socat -V 2>/dev/null | grep 'socat version'"]),
        "zlib": cmd(["sh", "-c", "dpkg-query -W -f='${Version}' zlib1g"]),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
        "source": cmd(["sh", "-c", "cd '" + SRC + "' && git rev-parse --short HEAD 2>/dev/null && "
                       "git status --porcelain 2>/dev/null | grep -q . && echo dirty"]),
    }


def log(msg):
    print(msg, flush=True)


def _prepare_samples(env, sid, sc, mode):
    return prepared.ensure(env, f"{sid}-{mode}", sc["format"], sc["sessions"],
                           scenarios.prepared_samples(sc), scenarios.encodings(sc),
                           prefix=sid.lower() + "-", scenario=sc.get("scenario", "walk"), log=log)


def _prepare_curve(env, sid, sc, mode):
    """One prepared stream per point of the cost curve (session keys cv-000001...)."""
    return {pid: prepared.ensure(env, f"{sid}-{pid}-{mode}", p["format"], p["sessions"],
                                 p["samples"], scenarios.encodings(p), prefix="cv-",
                                 scenario=p["scenario"], log=log)
            for pid, p in scenarios.curve_points(sc).items()}


def _prepare_carla(env, sid, sc, mode):
    return carla.ensure(env, f"{sid}-{mode}", sc, log=log)


# What differs between the kinds of scenario that send a stream ("idle" sends none): how its
# streams are made, the run of one system over TCP (None: UDP rate steps), the unit it counts,
# and its report table.
KINDS = {
    "tcp": {"prepare": _prepare_samples, "one": runs.tcp, "unit": "samples", "digits": 0,
            "table": report.tcp_table},
    "carla": {"prepare": _prepare_carla, "one": carla.run, "unit": "frames", "digits": 2,
              "table": report.carla_table},
    "nats": {"prepare": _prepare_samples, "one": fleet.run, "unit": "samples", "digits": 0,
             "table": report.nats_table},
    "udp": {"prepare": _prepare_samples, "one": None, "table": report.udp_table},
    "curve": {"prepare": _prepare_curve, "one": None, "table": report.curve_table},
}


def prepare(env, sid, sc, mode):
    """Scenario sid's fixed-seed streams for mode (full or quick), written once and cached."""
    return KINDS[sc["kind"]]["prepare"](env, sid, sc, mode)


def run_tcp(env, sid, sc, prep, work, **kw):
    kind = KINDS[sc["kind"]]
    one = kind["one"]
    results = {s: [] for s in sc["systems"]}
    warm_runs = {s: [] for s in sc["systems"]} if sc.get("warm") else None
    for rep in range(sc["reps"]):
        order = sc["systems"][rep % len(sc["systems"]):] + sc["systems"][:rep % len(sc["systems"])]
        for system in order:
            if system == "recd" and not env.have_recd:
                results[system].append({"error": "recd binary not built yet"})
                continue
            try:
                r = one(env, sc, prep, system, os.path.join(work, "run"), **kw)
                unit, digits = kind["unit"], kind["digits"]
                log(f"  {sid} rep {rep + 1} {system:11s} {r['samples_per_s'] / 1e3:9.{digits}f} k {unit}/s"
                    f"  cpu {r['cpu_s']:6.2f} s  hwm {(r['hwm_kib'] or 0) / 1024:6.0f} MiB"
                    f"  {r['bytes_per_sample']:6.1f} B/{unit[:-1]}  lost {r.get('lost')}"
                    + (f"  identical {r['identical']}/{r['identical_of']}" if "identical" in r else ""))
            except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
                r = {"error": str(e)[:300]}
                log(f"  {sid} rep {rep + 1} {system}: FAILED {r['error']}")
            results[system].append(r)
            if warm_runs is not None:  # the same system warm, right after its fresh run
                warm_runs[system].append(warm.run(env, sid, sc, prep, system, work, log,
                                                  f"rep {rep + 1} warm"))
    out = {"runs": results, "summary": report.summarize_tcp(results)}
    if warm_runs is not None:
        out["warm"] = {"runs": warm_runs, "summary": report.summarize_tcp(warm_runs)}
    return out


def run_curve(env, sid, sc, preps, work):
    """The cost curve: every point is one TCP scenario run like S1 (run_tcp), recd and raw. Each
    run's files are emptied but kept until the curve ends: ext4 without a journal makes a file
    creation skip every inode freed in the last minutes whose inode-table block is cached, so
    deleting one run's 100,000 files made the next run's creations, not recd, the cost measured
    (docs/performance.md, "Cost curve")."""
    kept, keep_inodes = _curve_keeper(work)
    points = {}
    try:
        for pid, p in scenarios.curve_points(sc).items():
            log(f"  {sid} {pid}: {scenarios.title(p)}, {p['samples']:,} samples")
            r = run_tcp(env, f"{sid} {pid}", p, preps[pid], work, discard=keep_inodes)
            meta = preps[pid].meta
            r["message_bytes"] = meta["bytes"][p["input"]]["body"] / preps[pid].body_lines()
            points[pid] = r
    finally:
        shutil.rmtree(kept, ignore_errors=True)
    return {"points": points, "summary": report.summarize_curve(sc, points)}


def _curve_keeper(work):
    """(directory, discard) for runs.tcp: discard empties a run's files and moves them there."""
    kept = os.path.join(work, "curve-kept")
    shutil.rmtree(kept, ignore_errors=True)
    os.makedirs(kept)

    def keep_inodes(run_dir):
        for path in readback.walk_files(run_dir):
            os.truncate(path, 0)
        os.rename(run_dir, os.path.join(kept, str(len(os.listdir(kept)))))
    return kept, keep_inodes


def run_udp(env, sid, sc, prep, work):
    steps = {}
    for system in sc["systems"]:
        steps[system] = []
        if system == "recd" and not env.have_recd:
            steps[system].append({"error": "recd binary not built yet"})
            continue
        for rate in sc["rates"]:
            try:
                r = runs.udp_step(env, sc, prep, system, rate, os.path.join(work, "run"))
                log(f"  {sid} {system:8s} {rate / 1e3:6.0f} k/s: sent {r['sent']:,} (achieved "
                    f"{r['rate_achieved'] / 1e3:.0f} k/s), on disk {r['on_disk']:,}, lost {r['lost']:,}")
            except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
                r = {"error": str(e)[:300], "rate_target": rate}
                log(f"  {sid} {system} {rate}: FAILED {r['error']}")
            steps[system].append(r)
            if "error" in r or r["lost"] != 0 or r["rate_achieved"] < 0.95 * rate:
                break  # the first failing step ends this system's search
    return {"steps": steps, "summary": report.summarize_udp(steps)}


def run_idle(env, sid, sc, work):
    if not env.have_recd:
        return {"run": {"error": "recd binary not built yet"}}
    try:
        r = runs.idle_sessions(env, sc, os.path.join(work, "run"))
        log(f"  {sid}: {r['sessions']:,} sessions, peak RSS {r['hwm_kib'] / 1024:.0f} MiB, "
            f"{r['kib_per_session']:.2f} KiB/session, lost {r['lost']:,}")
    except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
        r = {"error": str(e)[:300]}
        log(f"  {sid}: FAILED {r['error']}")
    return {"run": r}


def _profile_curve(env, sid, sc, preps, work, results_dir):
    """The cost curve's first kind of message at each session count: profile-CURVE-<point>.txt."""
    kept, keep_inodes = _curve_keeper(work)
    try:
        for pid, p in scenarios.curve_points(sc).items():
            if p["message"] != sc["messages"][0]["name"]:
                continue
            prof = perf_profile.Profiler(os.path.join(results_dir, f"profile-{sid}-{pid}.txt"))
            try:
                runs.tcp(env, p, preps[pid], "recd", os.path.join(work, "run"), profiler=prof,
                         discard=keep_inodes)
                log(f"  {sid} {pid}: profile in {prof.out_txt}")
            except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
                log(f"  {sid} {pid}: profile run FAILED {str(e)[:300]}")
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def run_profiles(env, specs, preps, work, results_dir):
    """--profile: one recd run per selected scenario under perf; numbers are not reported."""
    for sid, sc in specs.items():
        if sc["kind"] not in KINDS or not env.have_recd:
            continue
        if sc["kind"] == "curve":
            _profile_curve(env, sid, sc, preps[sid], work, results_dir)
            continue
        if sc["kind"] == "nats" and fleet.missing(env):
            log(f"  {sid}: profile SKIPPED: {fleet.missing(env)}")
            continue
        prof = perf_profile.Profiler(os.path.join(results_dir, f"profile-{sid}.txt"))
        try:
            one = KINDS[sc["kind"]]["one"]
            if one:
                one(env, sc, preps[sid], sc.get("profile_system", "recd"),
                    os.path.join(work, "run"), profiler=prof)
            else:
                rate = sc.get("profile_rate", sc["rates"][-1])
                runs.udp_step(env, sc, preps[sid], "recd", rate, os.path.join(work, "run"),
                              profiler=prof)
            log(f"  {sid}: profile in {prof.out_txt}")
        except (procs.BenchError, subprocess.SubprocessError, OSError) as e:
            log(f"  {sid}: profile run FAILED {str(e)[:300]}")


def render(mode, info, specs, results, have_recd=True):
    """The markdown report of one run; info holds the machine and the run's end (see main)."""
    out = [f"# recd benchmark results ({mode})", "",
           f"Generated by `make bench{'-quick' if mode == 'quick' else ''}` on "
           f"{info['generated']} in {info['elapsed_s'] / 60:.1f} minutes. "
           "Method: docs/performance.md.", "",
           f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory_gib']} GiB RAM, kernel "
           f"{info['kernel']}, {info['os']}; {info['rsyslog']}; zlib {info['zlib']}. "
           f"Load average at start: {' '.join(info['loadavg_start'])}; at end: "
           f"{' '.join(info['loadavg_end'])}. Source: commit "
           f"{info['source'].replace(' dirty', ' with uncommitted changes')}.", ""]
    if not have_recd:
        out += ["**recd was not built when this ran** (build-bench/daemon/recd missing): the "
                "recd rows are empty and only the baselines were measured.", ""]
    rows = report.targets(results) + export.target_rows(results.get("EXPORT"))
    if rows:
        out += ["## Targets", ""] + report.target_table(rows) + [""]
    out += report.half_raw_budget(results, info["nproc"])
    out += ["## Scenarios", ""]
    for sid, sc in specs.items():
        r = results.get(sid)
        if not r:
            continue
        if "skipped" in r:
            out += [f"### {sid}: {scenarios.title(sc)}", "", f"Skipped: {r['skipped']}.", ""]
            continue
        if sc["kind"] == "export":
            out += export.table(r, sid)
        elif sc["kind"] in KINDS:
            out += KINDS[sc["kind"]]["table"](sid, sc, r["summary"])
            if "warm" in r:
                out += [""] + report.warm_table(sid, sc, r["warm"]["summary"])
        else:
            out += report.idle_table(sid, sc, r["run"])
        out.append("")
    out += ["Columns: samples/s = samples / (first byte sent -> last sample on disk: every recd "
            "file finalized, rsyslog's in-stream sentinel written, socat/gzip exited). "
            "`recd / this` = recd's median over this system's median. CPU and peak RSS (VmHWM) "
            "are the receiving process's (raw: socat plus gzip). page faults per 1M samples: "
            "recd's minor faults (first touches of memory), every thread, from the sender's "
            "first byte to the last file finalized; measured for recd only. bytes/sample = output bytes / "
            "samples. lost = samples sent minus samples read back from the files (rsyslog: "
            "lines). flush p99 = upper bound of the recd_flush_latency_seconds bucket holding "
            "the 99th percentile.", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mode", choices=["full", "quick"], default="full")
    ap.add_argument("--only", help="comma-separated scenario ids, e.g. S1,S4")
    ap.add_argument("--src", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True, help="markdown file to write")
    ap.add_argument("--systems", help="comma-separated systems to run, e.g. recd,raw (default all)")
    ap.add_argument("--profile", action="store_true",
                    help="profile recd with perf in each selected scenario instead of measuring")
    ap.add_argument("--rerender", metavar="JSON",
                    help="write --results again from a run's saved JSON with the current report "
                         "code (verdicts, tables) instead of measuring")
    a = ap.parse_args()
    if a.rerender:
        with open(a.rerender) as f:
            saved = json.load(f)
        missing = [k for k in ("generated", "elapsed_s", "loadavg_end") if k not in saved["machine"]]
        if missing:
            sys.exit(f"bench: {a.rerender} was written before runs recorded their end "
                     f"({', '.join(missing)} missing): run `make bench` again instead")
        specs = scenarios.FULL if saved["mode"] == "full" else scenarios.QUICK
        specs = {k: v for k, v in specs.items() if k in saved["results"]}
        for sid, sc in specs.items():  # summaries again too: the report code may read more of the runs
            saved_sc = saved["results"][sid]
            if KINDS.get(sc["kind"], {}).get("one") and "runs" in saved_sc:
                saved_sc["summary"] = report.summarize_tcp(saved_sc["runs"])
            if "warm" in saved_sc:
                saved_sc["warm"]["summary"] = report.summarize_tcp(saved_sc["warm"]["runs"])
        with open(a.results, "w") as f:
            f.write(render(saved["mode"], saved["machine"], specs, saved["results"]) + "\n")
        print(f"rewrote {a.results} from {a.rerender}")
        return 0

    env = Env(a.src, a.build, a.work)
    specs = dict(scenarios.FULL if a.mode == "full" else scenarios.QUICK)
    if a.only:
        keep = a.only.upper().split(",")
        specs = {k: v for k, v in specs.items() if k in keep}
    if a.systems:
        want = a.systems.lower().split(",")
        specs = {k: dict(v, systems=[s for s in v["systems"] if s in want]) if "systems" in v else v
                 for k, v in specs.items()}
        for k in [k for k, v in specs.items() if "systems" in v and not v["systems"]]:
            log(f"{k}: none of --systems {a.systems} runs in it in this mode: left out")
            del specs[k]
    os.makedirs(a.work, exist_ok=True)
    os.chmod(a.work, 0o755)
    info = machine()
    t0 = time.monotonic()
    log(f"bench ({a.mode}): {', '.join(specs)}; work dir {a.work}"
        + ("" if env.have_recd else "; recd NOT built: baselines only"))

    preps = {sid: prepare(env, sid, sc, a.mode) for sid, sc in specs.items()
             if sc["kind"] in KINDS}
    if a.profile:
        os.makedirs(os.path.dirname(os.path.abspath(a.results)), exist_ok=True)
        run_profiles(env, specs, preps, a.work, os.path.dirname(os.path.abspath(a.results)))
        return 0
    results = {}
    for sid, sc in specs.items():
        log(f"{sid}: {scenarios.title(sc)}")
        why = fleet.missing(env) if sc["kind"] == "nats" else None
        if why:
            log(f"  {sid}: SKIPPED: {why}")
            results[sid] = {"skipped": why}
        elif sc["kind"] in KINDS and KINDS[sc["kind"]]["one"]:
            results[sid] = run_tcp(env, sid, sc, preps[sid], a.work)
        elif sc["kind"] == "udp":
            results[sid] = run_udp(env, sid, sc, preps[sid], a.work)
        elif sc["kind"] == "curve":
            results[sid] = run_curve(env, sid, sc, preps[sid], a.work)
        elif sc["kind"] == "export":
            results[sid] = export.run(env.rectool, a.work, sc["scale"], log=log, gzip=env.gzip)
        else:
            results[sid] = run_idle(env, sid, sc, a.work)

    info["generated"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info["elapsed_s"] = time.monotonic() - t0
    info["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    text = render(a.mode, info, specs, results, env.have_recd)
    os.makedirs(os.path.dirname(os.path.abspath(a.results)), exist_ok=True)
    with open(a.results, "w") as f:
        f.write(text + "\n")
    with open(os.path.splitext(a.results)[0] + ".json", "w") as f:
        json.dump({"machine": info, "mode": a.mode, "results": results}, f, indent=1,
                  default=str)
    print()
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
