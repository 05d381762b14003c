# SPDX-License-Identifier: MIT
"""The benchmark scenarios and their sample budgets. `full` is `make bench` (about 8 minutes on
2 cores, plus about 3 minutes the first time to generate the streams); `quick` is
`make bench-quick` (about a minute, for CI); S8, the JetStream path, adds about two minutes to
`full` and half a minute to `quick` on a busy machine, and CURVE, the cost curve, about five
minutes to `full` (it is not in `quick`). Every stream is generated
from fixed seeds, so each system in a run, and each run, receives identical bytes. S1 and S2 run
five times per system: their recd and raw runs last well under a second, and one run in six to
ten lost most of its speed to the machine (the sender's CPU time rose tenfold, whichever system
received), so a median of three moved with a single such run. `warm`: after each fresh run of a
system, a warm one (warm.py: the same process takes the stream twice and only the second replay
is timed), reported beside the fresh figures. From the rates of the last full run that is about 9
more minutes for `full` on a quiet machine, most of them rsyslog's two 24 s passes per S2 run,
and about half a minute for `quick`."""

TCP_SYSTEMS = ["recd", "rsyslog", "raw", "raw+gzip-1"]

FULL = {
    "S1": dict(kind="tcp", title="{sessions:,} sessions, TCP, binary frames, .rec on foot",
               format="samp-onfoot", sessions=16, samples=5_000_000, input="wire",
               rsyslog_zip=0, rsyslog_cache=256, systems=TCP_SYSTEMS, reps=5),
    "S2": dict(kind="tcp", title="{sessions:,} sessions, TCP, binary frames, .rec on foot",
               format="samp-onfoot", sessions=1000, samples=5_000_000, input="wire",
               rsyslog_zip=0, rsyslog_cache=1100, systems=TCP_SYSTEMS, reps=5, warm=True),
    "S3": dict(kind="tcp", title="{sessions:,} sessions, TCP, Recap walking players (gzip level 1)",
               format="recap", sessions=1000, samples=1_000_000, input="wire", gzip_level=1,
               rsyslog_zip=1, rsyslog_cache=1100, systems=TCP_SYSTEMS, reps=3, warm=True),
    "S4": dict(kind="udp", title="{sessions:,} sessions, UDP, one .rec sample per datagram",
               format="samp-onfoot", sessions=1000, seconds=2,
               rates=[50_000, 100_000, 150_000, 200_000, 250_000, 300_000, 400_000, 500_000,
                      600_000, 800_000, 1_000_000],
               rsyslog_zip=0, rsyslog_cache=1100, systems=["recd", "rsyslog", "raw"],
               profile_rate=300_000),
    "S5": dict(kind="idle", title="{sessions:,} sessions open at {rate} sample/s each for {seconds} s",
               sessions=100_000, rate=1, seconds=30),
    "S6": dict(kind="tcp", title="{sessions:,} sessions, TCP, NDJSON, .rec on foot",
               format="samp-onfoot", sessions=1000, samples=1_000_000, input="ndjson",
               rsyslog_input="sysjson", rsyslog_zip=0, rsyslog_cache=1100,
               systems=TCP_SYSTEMS, reps=3),
    # 100 CARLA episodes of 200 actors at CARLA's 20 frames/s, interleaved by time on one TCP
    # connection and sent as fast as the receiver takes them: frames/s against the raw copy of the
    # same bytes, and against the 2,000 frames/s the episodes produce live.
    "S7": dict(kind="carla", title="{sessions:,} CARLA episodes x {actors} actors at {fps} "
               "frames/s ({seconds} s each), TCP binary frames",
               sessions=100, actors=200, fps=20, seconds=20, seed=1, session_prefix="s7",
               input="wire", systems=["recd", "raw"], reps=3),
    # S2's workload (1,000 .rec sessions, binary frames) published to NATS JetStream, one message
    # per frame, and consumed by 1 and 2 recd fleet instances; recd and raw over TCP take the
    # same stream in the same run. Skipped without nats-server or libnats (fleet.missing).
    "S8": dict(kind="nats", title="{sessions:,} sessions, .rec on foot, through NATS JetStream "
               "({partitions} partitions) into 1 and 2 recd instances",
               format="samp-onfoot", sessions=1000, samples=500_000, input="wire",
               partitions=8, nats_max_in_flight=100_000,
               systems=["recd", "raw", "nats-1", "nats-1p", "nats-2p"], reps=2,
               profile_system="nats-1p"),
    # The cost curve: recd alone, and the raw copy of the same bytes, as the sessions on one TCP
    # connection grow from 1 to 100,000 at a fixed number of samples per run, for each kind of
    # message. Every point is an ordinary TCP run (runs.tcp); see curve_points.
    "CURVE": dict(kind="curve", title="cost curve: recd from 1 to 100,000 sessions on one TCP "
                  "connection, by kind of message",
                  sessions_axis=[1, 100, 10_000, 100_000],
                  messages=[
                      dict(name="on foot", format="samp-onfoot", input="wire",
                           samples=2_000_000),
                      dict(name="vehicle", format="samp-vehicle", scenario="drive",
                           input="wire", samples=2_000_000, reps=1),
                      dict(name="Recap", format="recap", input="wire", samples=500_000,
                           gzip_level=1, reps=1),
                      dict(name="on foot NDJSON", format="samp-onfoot", input="ndjson",
                           samples=200_000, reps=1),
                  ],
                  systems=["recd", "raw"], reps=3),
    # rectool export and import per format beside cat and gzip -dc of the same JSON lines
    # (export.py; about 130-150 MB of JSON lines per format, an eighth in quick).
    "EXPORT": dict(kind="export", title="rectool export and import, against cat and gzip -dc",
                   scale="full"),
}

QUICK = {
    "S1": dict(FULL["S1"], samples=2_000_000, reps=1),
    "S2": dict(FULL["S2"], samples=1_000_000, reps=1, systems=["recd", "rsyslog"]),
    "S3": dict(FULL["S3"], samples=100_000, reps=1, systems=["recd", "rsyslog"]),
    "S4": dict(FULL["S4"], seconds=1, rates=[100_000, 200_000], systems=["recd"]),
    "S5": dict(FULL["S5"], sessions=10_000, seconds=10),
    "S6": dict(FULL["S6"], samples=200_000, reps=1, systems=["recd", "rsyslog"]),
    "S7": dict(FULL["S7"], seconds=5, reps=1),
    "S8": dict(FULL["S8"], samples=200_000, reps=1),
    "EXPORT": dict(FULL["EXPORT"], scale="quick"),
}


def title(sc):
    return sc["title"].format(**sc)


def curve_points(sc):
    """{point id: TCP scenario} of the cost curve: each kind of message at each session count,
    with the same samples per run at every session count."""
    points = {}
    for msg in sc["messages"]:
        for n in sc["sessions_axis"]:
            pid = f"{msg['name'].replace(' ', '-').lower()}-{n}"
            points[pid] = dict(kind="tcp", title=f"{{sessions:,}} sessions, {msg['name']}",
                               message=msg["name"], format=msg["format"],
                               scenario=msg.get("scenario", "walk"), input=msg["input"],
                               sessions=n, samples=msg["samples"],
                               gzip_level=msg.get("gzip_level", 6), encodings=[msg["input"]],
                               systems=sc["systems"], reps=msg.get("reps", sc["reps"]),
                               # a /metrics scrape walks the heap (mallinfo2), 10 ms of the loop
                               # at 100,000 sessions: polled every 5 ms it took a quarter of
                               # recd's time there
                               finalize_poll_s=0.005 if n <= 1000 else 0.05 if n <= 10_000
                               else 0.25)
    return points


def encodings(sc):
    """What benchgen must prepare for a scenario."""
    if "encodings" in sc:
        return sc["encodings"]
    if sc["kind"] == "udp":
        return ["wire", "syslog"]
    if sc["kind"] == "nats":
        return ["wire"]
    return sorted({sc["input"], sc.get("rsyslog_input", "syslog")})


def prepared_samples(sc):
    if sc["kind"] == "carla":
        return sc["sessions"] * sc["seconds"] * sc["fps"]
    if sc["kind"] == "udp":
        return max(sc["rates"]) * sc["seconds"]
    return sc["samples"]
