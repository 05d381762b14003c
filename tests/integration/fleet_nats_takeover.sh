# SPDX-License-Identifier: MIT
# Session takeover in a two-instance recd fleet on a real `nats-server -js`: sessions are published
# at their recordings' pace (half of them in packed messages, half one frame per message, by two
# publishers) while the instance owning half of the partitions goes away, killed
# with SIGKILL in a first round (200 sessions) and stopped with SIGTERM in a second (24). The other one takes
# its sessions over from their records in the sessions bucket: every state of every session is in
# the two instances' parts, in order, the survivor's part numbers continue the first one's, and
# what is there twice is only a stretch the dead instance had written but not yet acknowledged
# (docs/fleet.md, "Failover"). Parts are named {part}-{instance}: each names the recd that wrote it.
# With output.part_manifest every finalized part has its manifest, none of a .part (a .part may have
# an in-progress one, NAME.part.json, that holds no more than the file): sorted by part,
# the manifests of both instances give each session's sequence numbers in order, without a gap
# (after SIGTERM without a repeat either), and their counts match the parts.
# FLEET_TAKEOVER_SESSIONS (200) sets the first round's sessions: `make soak` runs it with 2,000.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v nats-server >/dev/null || { echo "SKIP: nats-server is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_takeover.XXXXXX")
a_pid= b_pid= nats_pid= send_pid= single_pid=
cleanup() {
    for p in $send_pid $single_pid $a_pid $b_pid $nats_pid; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"
start_nats_server
generate() { # SESSIONS SECONDS: the recordings of a round, gen-1.rec .. gen-SESSIONS.rec
    files=()
    for i in $(seq "$1"); do
        "$RECTOOL" generate --format samp-vehicle --duration "$2" --seed "$i" -o "$tmp/gen-$i.rec" \
            >/dev/null || fail "rectool generate"
        files+=("$tmp/gen-$i.rec")
    done
}

start_instance() { # NAME; sets pid_out
    start_fleet_instance "$run" "$1" "$url" '  path_template: "{format}/{session}/{part}-{instance}.{ext}"
  rebase_parts: false
  part_manifest: true'
}
metric() { fleet_metric "$run" "$1" "$2"; } # INSTANCE NAME
owns() { [ "$(metric "$1" recd_nats_partitions_owned)" = "$2" ]; }

round() { # SIGNAL SESSIONS SECONDS: one round, a leaving with that signal
    signal=$1 sessions=$2
    generate "$2" "$3"
    run=$tmp/$signal
    url="nats://127.0.0.1:$port/recd.$signal"
    start_instance a
    a_pid=$pid_out
    wait_for 30 owns a 4 || fail "instance a did not claim the 4 partitions"
    start_instance b
    b_pid=$pid_out
    balanced() { owns a 2 && owns b 2; }
    wait_for 30 balanced || fail "no rebalance after b joined"

    # Sessions t-1 .. t-N (named after their files), interleaved at the recordings' own pace
    # (about 11 states/s each): the odd ones in packed messages, the even ones by a publisher that
    # sends one frame per message (pack_bytes=0, as publishers before packing did).
    packed=() single=()
    for i in $(seq "$sessions"); do
        ln -sf "$tmp/gen-$i.rec" "$run/t-$i.rec"
        if [ $((i % 2)) -eq 1 ]; then packed+=("$run/t-$i.rec"); else single+=("$run/t-$i.rec"); fi
    done
    "$RECTOOL" send "${packed[@]}" --to "$url" --partitions 4 --speed 1 >"$run/send.out" 2>&1 &
    send_pid=$!
    "$RECTOOL" send "${single[@]}" --to "$url?pack_bytes=0" --partitions 4 --speed 1 \
        >"$run/send-single.out" 2>&1 &
    single_pid=$!

    # a goes once it has written something of several sessions (a .part left behind).
    a_parts() { [ "$(find "$run/out-a" -name '*.part' 2>/dev/null | wc -l)" -ge 4 ]; }
    wait_for 30 a_parts || fail "instance a wrote nothing of its sessions"
    sleep 0.5 # not for correctness: a little more of a's sessions in flight when it dies
    kill "-$signal" "$a_pid"
    wait "$a_pid" 2>/dev/null
    a_pid=
    wait_for 20 owns b 4 || fail "b did not take the partitions over"
    wait "$send_pid"
    code=$?
    send_pid=
    [ "$code" -eq 0 ] || fail "rectool send (packed) exited with $code: $(cat "$run/send.out")"
    wait "$single_pid"
    code=$?
    single_pid=
    [ "$code" -eq 0 ] || fail "rectool send (one frame a message) exited with $code: $(cat "$run/send-single.out")"
    # Every session ends with a close: b finalizes each (none is left as .part in b's root).
    all_closed() {
        [ "$(find "$run/out-b" -name '*.rec' ! -name '*.part' | sed 's|/[^/]*$||' | sort -u | wc -l)" -ge "$sessions" ] &&
            [ -z "$(find "$run/out-b" -name '*.part')" ]
    }
    # nats-server 2.9 serves a consumer's backlog slowly once it is no longer in its cache (a few
    # hundred messages a second here; docs/fleet.md, "Failover"): b's catch-up takes a while.
    wait_for 90 all_closed || fail "b did not finalize every session"
    taken=$(metric b recd_nats_sessions_taken_over_total)
    dropped=$(metric b recd_nats_duplicates_dropped_total)
    kill -TERM "$b_pid"
    wait "$b_pid"
    code=$?
    b_pid=
    [ "$code" -eq 0 ] || fail "b exited with $code after SIGTERM"

    # Every state of every session, in order, across a's parts (left as .part after a SIGKILL: read
    # up to the last whole block, as recovery would) and b's; part numbers unique (but for the
    # documented restart) and b's after a's; repeats only at the start of b's first part of a
    # session, none after SIGTERM.
    python3 - "$tmp" "$run" "$sessions" "${taken:-0}" "$signal" <<'PY' >"$run/check.out" 2>&1 || fail "$signal: $(cat "$run/check.out")"
import glob, json, os, sys
tmp, run, n, taken = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(float(sys.argv[4]))
graceful = sys.argv[5] == "TERM" # every record carries its last sequence: nothing twice
HEAD, BLOCK = 8, 67
def blocks(path, partial):
    data = open(path, "rb").read()
    body = data[HEAD:]
    if partial:
        body = body[: len(body) // BLOCK * BLOCK]
    elif len(body) % BLOCK:
        raise SystemExit("%s: not whole blocks" % path)
    return [body[i:i + BLOCK] for i in range(0, len(body), BLOCK)]
bad, moved, repeated, restarts, manifests, bases = [], 0, 0, 0, 0, set()
def check_manifests(i, parts, orig):
    # parts: (num, who, path, partial); every finalized part has NAME.json, no .part has one.
    global manifests
    ms = []
    for num, who, f, partial in parts:
        mf = (f[: -len(".part")] if partial else f) + ".json"
        if partial:
            if os.path.exists(mf):
                bad.append("t-%d: %s is not finalized but has a manifest" % (i, f))
            # Its in-progress manifest, when a flush stored one, holds no more than the file.
            if os.path.exists(f + ".json"):
                m = json.load(open(f + ".json"))
                if (m.get("in_progress") is not True or m.get("session") != "t-%d" % i or
                        m.get("instance") != who or m.get("part") != num or
                        m.get("samples", 0) > len(blocks(f, True)) or
                        m["last_seq"] - m["first_seq"] + 1 != m["samples"]):
                    bad.append("t-%d: %s.json: %r" % (i, f, m))
            continue
        if not os.path.exists(mf):
            bad.append("t-%d: %s has no manifest" % (i, f))
            continue
        m = json.load(open(mf))
        manifests += 1
        rel = os.path.relpath(f, "%s/out-%s" % (run, who))
        want = {"session": "t-%d" % i, "instance": who, "part": num, "file": rel,
                "samples": len(blocks(f, False))}
        for k, v in want.items():
            if m.get(k) != v:
                bad.append("t-%d: %s: %s is %r, not %r" % (i, mf, k, m.get(k), v))
        if m.get("last_seq") is None or m["last_seq"] - m["first_seq"] + 1 != m["samples"]:
            bad.append("t-%d: %s: sequence numbers %r..%r for %d samples" % (i, mf, m.get("first_seq"), m.get("last_seq"), m["samples"]))
        ms.append(m)
    if not ms:
        return
    ms.sort(key=lambda m: (m["part"], m["first_seq"]))
    base = ms[-1]["last_seq"] - len(orig) + 1 # the session's first state's sequence number
    bases.add(base)
    if not any(p[3] for p in parts): # no .part: the manifests cover the whole session
        if ms[0]["first_seq"] != base:
            bad.append("t-%d: the first manifest starts at %d, not %d" % (i, ms[0]["first_seq"], base))
    for prev, m in zip(ms, ms[1:]):
        if m["first_seq"] > prev["last_seq"] + 1:
            bad.append("t-%d: sequence numbers %d..%d are in no manifest" % (i, prev["last_seq"] + 1, m["first_seq"] - 1))
        elif m["first_seq"] <= prev["last_seq"] and graceful:
            bad.append("t-%d: parts %d and %d both hold sequence number %d after SIGTERM" % (i, prev["part"], m["part"], m["first_seq"]))
for i in range(1, n + 1):
    orig = blocks("%s/gen-%d.rec" % (tmp, i), False)
    parts = []
    for who in "ab":
        for f in glob.glob("%s/out-%s/*/t-%d/*" % (run, who, i)):
            if f.endswith(".json"):
                continue
            name = os.path.basename(f)
            num, inst = name.split(".")[0].split("-", 1)
            if inst != who:
                bad.append("t-%d: %s, written by %s, names instance %s" % (i, f, who, inst))
            parts.append((int(num), who, f, name.endswith(".part")))
    parts.sort()
    nums = [p[0] for p in parts]
    restarted = False
    if len(set(nums)) != len(nums):
        # The documented case (docs/fleet.md, "Failover"): a died after starting the session's
        # part and before storing its record, so b started it again under the same number; the
        # instance in the name keeps the two files apart.
        dup = [x for x in set(nums) if nums.count(x) > 1]
        if graceful or len(dup) != 1 or [p[1] for p in parts if p[0] == dup[0]] != ["a", "b"]:
            bad.append("t-%d: part numbers used twice: %s" % (i, parts))
            continue
        restarted = True
        restarts += 1
    whos = [p[1] for p in parts]
    if "a" in whos and "b" in whos and not restarted:
        moved += 1
        if whos != sorted(whos):
            bad.append("t-%d: b's parts do not come after a's: %s" % (i, parts))
    j, seen = 0, set()
    for num, who, f, partial in parts:
        first_b = who == "b" and "a" in whos and num == min(p[0] for p in parts if p[1] == "b")
        for k, blk in enumerate(blocks(f, partial)):
            if j < len(orig) and blk == orig[j]:
                seen.add(blk)
                j += 1
            elif blk in seen and first_b:
                repeated += 1
            else:
                bad.append("t-%d: %s block %d is out of order or unknown" % (i, f, k))
                break
    if j != len(orig):
        bad.append("t-%d: %d of %d states recorded" % (i, j, len(orig)))
    check_manifests(i, parts, orig)
if len(bases) > 1:
    bad.append("the sessions' first sequence numbers differ: %s" % sorted(bases))
if graceful and manifests < n:
    bad.append("%d manifests after SIGTERM, fewer than the %d sessions" % (manifests, n))
if graceful and repeated:
    bad.append("%d states written twice after a graceful stop" % repeated)
if moved == 0:
    bad.append("no session was continued on b")
if taken < moved:
    bad.append("recd_nats_sessions_taken_over_total is %d, but %d sessions moved" % (taken, moved))
if bad:
    print("\n".join(bad[:20]))
    sys.exit(1)
print("%d sessions, %d continued on b, %d started again on b, %d states written twice, %d part "
      "manifests" % (n, moved, restarts, repeated, manifests))
PY
    result="$result$signal: $(cat "$run/check.out"), $taken sessions taken over, ${dropped:-0} redeliveries dropped as duplicates. "

}
result=
round KILL "${FLEET_TAKEOVER_SESSIONS:-200}" 3s
[ "$failures" -eq 0 ] && round TERM 24 8s

if [ "$failures" -ne 0 ]; then
    show_instance_log "$run/a.log" a 20
    show_instance_log "$run/b.log" b 30
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "$result"
