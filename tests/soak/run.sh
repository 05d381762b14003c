#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Soak test behind `make soak`: runs recd for SOAK_SECONDS under mixed synthetic load (TCP binary,
# TCP NDJSON, UDP; .rec on foot, .rec vehicle, Recap; a few hundred sessions that reconnect every
# round), reloads it every SOAK_HUP_SECONDS (alternately a changed valid config and an invalid one),
# fills the disk under it in the first round (the output root lives on a small tmpfs when the
# soak runs as root; otherwise that phase is skipped), removes and recreates the output root after
# the first round, kills it with SIGKILL half-way and restarts it on the same output root, samples
# its RSS, then stops it and checks the output: no .part left, every file verifies, .recap gzip
# members are intact, nothing escaped the root, retention held. Prints one PASS/FAIL line per check and exits 0
# only when every check passed.
#
# usage: bash tests/soak/run.sh BUILD_DIR      (BUILD_DIR holds daemon/recd and tools/rectool)
# env:   SOAK_SECONDS (600) load time, at least 55 with the defaults below; SOAK_ROUND_SECONDS (10)
#        length of one load round; SOAK_HUP_SECONDS (30) time between reloads; SOAK_KEEP=1 keeps
#        the scratch directory (recd's output root, configs, logs) for inspection.
set -u

build=${1:-}
if [ -z "$build" ] || [ $# -ne 1 ]; then
    echo "usage: bash tests/soak/run.sh BUILD_DIR" >&2
    exit 2
fi
build=$(cd "$build" 2>/dev/null && pwd) || {
    echo "soak: no build directory $1" >&2
    exit 2
}
recd=$build/daemon/recd # absolute: recd runs in its own working directory
rectool=$build/tools/rectool
for bin in "$recd" "$rectool"; do
    if [ ! -x "$bin" ]; then
        echo "soak: $bin is missing or not executable (build first)" >&2
        exit 2
    fi
done
soak_seconds=${SOAK_SECONDS:-600}
round_seconds=${SOAK_ROUND_SECONDS:-10}
hup_seconds=${SOAK_HUP_SECONDS:-30}
for knob in soak_seconds round_seconds hup_seconds; do
    case ${!knob} in
    '' | *[!0-9]*)
        echo "soak: ${knob^^} must be a whole number of seconds" >&2
        exit 2
        ;;
    esac
done
# Below this there is no round for the restarted daemon, and nothing left to check after the kill.
# Reloads come at H/2, 3H/2, ... during rounds: two of them (one valid, one invalid) need
# 3H/2 to fall before the last round starts.
if [ "$soak_seconds" -lt 30 ] || [ "$round_seconds" -lt 3 ] || [ "$hup_seconds" -lt 5 ] ||
    [ "$round_seconds" -gt $((soak_seconds / 3)) ] ||
    [ $((hup_seconds * 3 / 2 + round_seconds)) -gt "$soak_seconds" ]; then
    echo "soak: need SOAK_SECONDS >= 30, 3 <= SOAK_ROUND_SECONDS <= SOAK_SECONDS/3 and" \
        "5 <= SOAK_HUP_SECONDS, SOAK_HUP_SECONDS*3/2 + SOAK_ROUND_SECONDS <= SOAK_SECONDS" >&2
    exit 2
fi

# Limits the checks compare against; both valid configs share the retention limits.
max_files_per_session=4
max_total_mib=4
rss_slack_kib=$((32 * 1024))

# Load of one round: format, transport, sessions, samples per second per session, session prefix.
# The light ones make up the session count; the heavy ones rotate by size or sample time every
# few seconds. Together about 5000 samples/s, a small fraction of one core for recd.
loads=(
    "recap tcp 80 10 rc-tcp"
    "samp-onfoot tcp-ndjson 80 10 foot-tcpnd"
    "samp-vehicle udp 80 10 veh-udp"
    "recap udp 40 5 rc-udp"
    "samp-onfoot udp-ndjson 40 5 foot-udpnd"
    "samp-vehicle tcp 4 400 veh-heavy"
    "recap tcp-ndjson 4 200 rc-heavy"
)

# Layout: disk/out/ is recd's output root, cwd/ its working directory (must stay empty), work/
# ours. disk/ is a small tmpfs when we may mount one: the disk-full phase fills it.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recd-soak.XXXXXX") || exit 1
tmp=$(realpath "$tmp")
disk=$tmp/disk
root=$disk/out
work=$tmp/work
mkdir -p "$tmp/cwd" "$work/logs" "$disk"
config=$work/recd.yaml
disk_mounted=0
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64m recd-soak "$disk" 2>/dev/null; then
    disk_mounted=1
fi
mkdir -p "$root"

recd_pid=
sender_pids=()
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
    for p in "${sender_pids[@]}" $recd_pid; do
        kill -9 "$p" 2>/dev/null
    done
    wait 2>/dev/null
    [ "$disk_mounted" = 1 ] && umount -l "$disk" 2>/dev/null
    if [ "${SOAK_KEEP:-0}" = 1 ]; then
        echo "soak: kept $tmp"
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

checks=0
failures=0
verdict() { # PASS|FAIL NAME DETAIL
    checks=$((checks + 1))
    [ "$1" = FAIL ] && failures=$((failures + 1))
    printf '%s  %-16s %s\n' "$1" "$2" "$3"
}
pass() { verdict PASS "$@"; }
fail() { verdict FAIL "$@"; }

t0=$(date +%s%3N)
elapsed() { echo $((($(date +%s%3N) - t0) / 1000)); }
say() { printf '[%4ss] %s\n' "$(elapsed)" "$*"; }

running() { # PID: alive and not a zombie waiting to be reaped
    local state
    state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

# --- configuration --------------------------------------------------------------------------

# VARIANT a and b are valid and differ in their rotation limits; bad is rejected (decimal unit).
write_config() {
    local max_size=256KiB max_duration=1m idle=3s
    case $1 in
    b) max_size=64KiB max_duration=0 idle=5s ;;
    bad) max_size=100KB ;;
    esac
    cat >"$config.new" <<YAML
# recd soak test, variant $1
listen:
  - tcp://127.0.0.1:0
  - udp://127.0.0.1:0
output:
  root: $root
flush:
  interval: 1s
rotation:
  max_size: $max_size
  max_duration: $max_duration
  idle_timeout: $idle
retention:
  max_files_per_session: $max_files_per_session
  max_total_size: ${max_total_mib}MiB
metrics:
  listen: 127.0.0.1:0
log:
  level: warning
YAML
    mv "$config.new" "$config"
}

# --- recd process ---------------------------------------------------------------------------

instance=0
tcp_url=
udp_url=
metrics_addr=
start_recd() {
    instance=$((instance + 1))
    ports=$work/ports.$instance
    recd_log=$work/recd.$instance.log
    (cd "$tmp/cwd" && exec "$recd" --config "$config" --print-ports) >"$ports" 2>"$recd_log" &
    recd_pid=$!
    for _ in $(seq 300); do
        grep -q '^listen udp://' "$ports" 2>/dev/null && break
        running "$recd_pid" || break
        sleep 0.1
    done
    tcp_url=$(sed -n 's/^listen \(tcp:.*\)/\1/p' "$ports")
    udp_url=$(sed -n 's/^listen \(udp:.*\)/\1/p' "$ports")
    metrics_addr=$(sed -n 's/^metrics //p' "$ports")
    [ -n "$tcp_url" ] && [ -n "$udp_url" ] && running "$recd_pid"
}

# Fetches PATH from the metrics endpoint into $work/metrics (python3, else curl).
scrape() {
    [ -n "$metrics_addr" ] || return 1
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://" + sys.argv[1] + sys.argv[2], timeout=5).read().decode())' \
            "$metrics_addr" "${1:-/metrics}" >"$work/metrics" 2>"$work/metrics.err"
    elif command -v curl >/dev/null 2>&1; then
        curl -fsS --max-time 5 "http://$metrics_addr${1:-/metrics}" >"$work/metrics" 2>"$work/metrics.err"
    else
        return 1
    fi
}
# Sum of the series of metric NAME in the last scrape whose labels contain MATCH.
metric() {
    awk -v n="$1" -v m="${2:-}" '($1 == n || index($1, n "{") == 1) && index($1, m) { s += $NF }
        END { printf "%.0f\n", s }' "$work/metrics"
}
reloads() { scrape && metric recd_config_reloads_total "result=\"$1\""; }

probe() { # one short TCP session: is recd still accepting?
    "$rectool" send --synthetic --format samp-onfoot --sessions 1 --rate 20 --duration 1s \
        --session probe --to "$tcp_url" >"$work/probe.out" 2>&1
}

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
clk_tck=$(getconf CLK_TCK)

part_count() { find "$root" -name '*.part' 2>/dev/null | wc -l; }
bad_count() { find "$root" -name '*.part.bad' 2>/dev/null | wc -l; }

# Adds every finalized file now under the root to the set seen during the run.
record_seen() {
    find "$root" -type f ! -name '*.part' ! -name '*.part.bad' ! -name '*.idx' -printf '%P\n' 2>/dev/null |
        sort -u -o "$work/seen" - "$work/seen"
}
: >"$work/seen"

# Prints "ok" when every session directory holds at most the allowed files and the total fits.
retention_state() {
    find "$root" -type f -printf '%h %s\n' 2>/dev/null |
        awk -v maxf="$max_files_per_session" -v maxb=$((max_total_mib * 1024 * 1024)) '
            { n[$1]++; total += $2 }
            END {
                for (d in n) { dirs++; if (n[d] > maxf) { over++; if (n[d] > worst) worst = n[d] } }
                if (!over && total <= maxb) printf "ok "
                printf "%d session dirs, most files in one %d (limit %d), %d over; total %.1f MiB (limit %d MiB)\n",
                    dirs, (over ? worst : maxf), maxf, over, total / 1048576, maxb / 1048576
            }'
}

# --- reloads --------------------------------------------------------------------------------

valid_variant=a
hup_count=0
hup_valid_ok=0
hup_valid_bad=0
hup_invalid_ok=0
hup_invalid_bad=0
hup_problems=
# Waits until recd counted one more reload with RESULT (ok/failed) than BEFORE; 0 when it did.
await_reload() {
    local result=$1 before=$2 now
    if [ -z "$before" ]; then # no metrics: give it time
        sleep 2
        return 0
    fi
    for _ in $(seq 50); do
        now=$(reloads "$result")
        [ -n "$now" ] && [ "$now" -gt "$before" ] && return 0
        sleep 0.1
    done
    return 1
}
do_reload() {
    hup_count=$((hup_count + 1))
    local ok_before failed_before log_errors_before problem=
    ok_before=$(reloads ok) || ok_before=
    failed_before=$(reloads failed) || failed_before=
    log_errors_before=$(grep -c 'reload failed' "$recd_log")
    if [ $((hup_count % 2)) -eq 1 ]; then
        [ "$valid_variant" = a ] && valid_variant=b || valid_variant=a
        write_config "$valid_variant"
        kill -HUP "$recd_pid"
        await_reload ok "$ok_before" || problem="reload not counted as ok"
        [ "$(grep -c 'reload failed' "$recd_log")" -eq "$log_errors_before" ] || problem="reload failed: $(grep 'reload failed' "$recd_log" | tail -1)"
    else
        write_config bad
        kill -HUP "$recd_pid"
        await_reload failed "$failed_before" || problem="reload not counted as failed"
        [ "$(grep -c 'reload failed' "$recd_log")" -gt "$log_errors_before" ] || problem="${problem:+$problem, }no 'reload failed' log line"
        write_config "$valid_variant" # the operator fixes the file; the next start must work
    fi
    if ! running "$recd_pid"; then
        problem="${problem:+$problem, }recd died"
    elif ! probe; then
        problem="${problem:+$problem, }probe refused: $(tail -1 "$work/probe.out")"
    fi
    local kind="valid, rotation variant $valid_variant" valid=1
    [ $((hup_count % 2)) -eq 0 ] && kind=invalid valid=0
    if [ -z "$problem" ]; then
        say "SIGHUP $hup_count ($kind): handled, recd alive and accepting"
        [ "$valid" -eq 1 ] && hup_valid_ok=$((hup_valid_ok + 1)) || hup_invalid_ok=$((hup_invalid_ok + 1))
    else
        say "SIGHUP $hup_count ($kind): $problem"
        [ "$valid" -eq 1 ] && hup_valid_bad=$((hup_valid_bad + 1)) || hup_invalid_bad=$((hup_invalid_bad + 1))
        hup_problems="${hup_problems:+$hup_problems; }#$hup_count $problem"
    fi
}

# --- kill -9 and restart --------------------------------------------------------------------

killed=0
restart_detail=
restart_ok=1
decode_errors_before_kill=
kill_recd() {
    if scrape; then
        decode_errors_before_kill=$(metric recd_decode_errors_total)
        reloads_before_kill="ok=$(metric recd_config_reloads_total 'result="ok"') failed=$(metric recd_config_reloads_total 'result="failed"')"
    fi
    kill -9 "$recd_pid"
    wait "$recd_pid" 2>/dev/null
    recd_pid=
    killed=1
    parts_left_by_kill=$(part_count)
    say "kill -9 under load: $parts_left_by_kill .part files left behind"
}
restart_recd() {
    local began now_parts now_bad
    began=$(date +%s%3N)
    if ! start_recd; then
        restart_detail="recd did not come back: $(tail -3 "$recd_log" | tr '\n' ' ')"
        kill -9 "$recd_pid" 2>/dev/null
        wait "$recd_pid" 2>/dev/null
        recd_pid=
        return
    fi
    now_parts=$(part_count)
    now_bad=$(bad_count)
    say "restarted recd (pid $recd_pid) in $(($(date +%s%3N) - began)) ms: $tcp_url $udp_url metrics ${metrics_addr:-none}"
    if [ "$parts_left_by_kill" -eq 0 ]; then
        restart_detail="the kill left no .part file: recovery was not exercised"
    elif [ "$now_parts" -ne 0 ] || [ "$now_bad" -ne 0 ]; then
        restart_detail="after recovery $now_parts .part and $now_bad .part.bad files remain"
    elif ! probe; then
        restart_detail="restarted recd refused a probe: $(tail -1 "$work/probe.out")"
    else
        restart_ok=0
        restart_detail="kill -9 under load left $parts_left_by_kill .part files; recd came back on new ports, recovered them all (0 .part, 0 .part.bad) and accepted a probe"
    fi
}

# --- disk full and a removed output root (first process only: /healthz fails a minute after) --

disk_full_detail="skipped: the output root is not on a tmpfs (needs root and mount)"
disk_full_ok=skip
# Fills the tmpfs under the root for 3 s while senders run, then frees it: recd must keep every
# byte (senders are paused, writes retried), lose none, and go on.
fill_disk() {
    local before after lost
    scrape && before=$(metric recd_write_errors_total)
    dd if=/dev/zero of="$disk/filler" bs=64k 2>/dev/null
    say "disk full: $(df -k --output=avail "$disk" | tail -1 | tr -d ' ') KiB free for 3 s"
    sleep 3
    rm -f "$disk/filler"
    sleep 1
    if ! scrape; then
        disk_full_ok=1 disk_full_detail="cannot scrape the metrics after the disk-full phase"
        return
    fi
    after=$(metric recd_write_errors_total)
    lost=$(metric recd_lost_bytes_total)
    if [ "$after" -gt "${before:-0}" ] && [ "$lost" -eq 0 ]; then
        disk_full_ok=0
        disk_full_detail="$((after - ${before:-0})) writes failed while the disk was full, all retried, 0 bytes lost (recd_lost_bytes_total)"
    else
        disk_full_ok=1
        disk_full_detail="write errors ${before:-?} -> $after (expected more), bytes lost $lost (expected 0)"
    fi
}

root_deleted_ok=skip
root_deleted_detail="the phase did not run"
# Between two rounds, once every part is finalized (idle timeout): rm -rf the root, make it again.
# The next round must be written into the new directory.
delete_root() {
    for _ in $(seq 300); do
        [ "$(part_count)" -eq 0 ] && break
        sleep 0.1
    done
    record_seen
    rm -rf "$root"
    sleep 1.5 # recd checks its root twice a second
    mkdir -p "$root"
    root_deleted_ok=pending
    say "output root removed and made again"
}
# After the round that followed delete_root().
check_root_deleted() {
    local n
    n=$(find "$root" -type f | wc -l)
    if ! grep -Eq 'output root .* was (removed|replaced)' "$recd_log"; then
        root_deleted_ok=1 root_deleted_detail="recd did not log that its output root was removed"
    elif [ "$n" -eq 0 ]; then
        root_deleted_ok=1 root_deleted_detail="nothing was written into the recreated output root"
    else
        root_deleted_ok=0 root_deleted_detail="recd noticed the removal and wrote $n files into the recreated root in the next round"
    fi
}

# --- rounds ---------------------------------------------------------------------------------

round=0
crashed=
sender_runs=0
sender_failed=0
sender_cut=0
sender_problems=
rss_first=()
rss_second=()
cpu_percents=()
next_hup=$((hup_seconds / 2))
half=$((soak_seconds / 2))

run_round() { # DURATION
    local d=$1 kill_at=-1 full_at=-1 spec fmt kind n rate prefix url i began ticks_before ticks_after wall
    round=$((round + 1))
    if [ "$round" -eq 1 ] && [ "$disk_mounted" = 1 ]; then
        full_at=$(($(elapsed) + d / 3))
    fi
    # The first round that reaches past the half-way point is cut by kill -9 in its middle, once
    # it has .part files open (on a loaded machine the senders may start late); a round that
    # never had any leaves the kill to the next one.
    if [ "$killed" -eq 0 ] && [ $(($(elapsed) + d)) -gt "$half" ]; then
        kill_at=$(($(elapsed) + d / 2))
    fi
    touch "$work/round-start"
    began=$(date +%s%3N)
    ticks_before=$(cpu_ticks "$recd_pid")
    sender_pids=()
    local names=()
    for spec in "${loads[@]}"; do
        read -r fmt kind n rate prefix <<<"$spec"
        case $kind in
        tcp) url=$tcp_url ;;
        tcp-ndjson) url="$tcp_url?encoding=ndjson" ;;
        udp) url=$udp_url ;;
        udp-ndjson) url="$udp_url?encoding=ndjson" ;;
        esac
        "$rectool" send --synthetic --format "$fmt" --sessions "$n" --rate "$rate" --duration "${d}s" \
            --seed 1 --session "$prefix" --to "$url" >"$work/logs/round$round-$prefix.log" 2>&1 &
        sender_pids+=($!)
        names+=("$prefix")
    done
    local deadline=$(($(elapsed) + d + 60)) busy
    while :; do
        busy=0
        for i in "${!sender_pids[@]}"; do running "${sender_pids[$i]}" && busy=1; done
        [ "$busy" -eq 0 ] && break
        if [ "$(elapsed)" -ge "$deadline" ]; then
            say "round $round: senders still running 60 s after their duration; killing them"
            for i in "${!sender_pids[@]}"; do kill -9 "${sender_pids[$i]}" 2>/dev/null; done
            break
        fi
        if [ "$full_at" -ge 0 ] && [ "$(elapsed)" -ge "$full_at" ]; then
            fill_disk
            full_at=-1
        elif [ "$kill_at" -ge 0 ] && [ "$(elapsed)" -ge "$kill_at" ] && [ "$(part_count)" -gt 0 ]; then
            kill_recd # only once parts are open: senders slow to start must not leave none to recover
            kill_at=-1
        elif [ -n "$recd_pid" ] && [ "$(elapsed)" -ge "$next_hup" ]; then
            do_reload
            next_hup=$((next_hup + hup_seconds))
        fi
        sleep 1
    done
    local cut=0 code failed_here=0
    [ -z "$recd_pid" ] && cut=1
    for i in "${!sender_pids[@]}"; do
        wait "${sender_pids[$i]}"
        code=$?
        sender_runs=$((sender_runs + 1))
        if [ "$cut" -eq 1 ]; then
            sender_cut=$((sender_cut + 1)) # talking to a killed daemon: failure expected
        elif [ "$code" -ne 0 ]; then
            sender_failed=$((sender_failed + 1))
            failed_here=$((failed_here + 1))
            sender_problems="${sender_problems:+$sender_problems; }round $round ${names[$i]} exit $code: $(tail -1 "$work/logs/round$round-${names[$i]}.log")"
        fi
    done
    sender_pids=()
    if [ "$cut" -eq 1 ]; then
        say "round $round (${d}s): cut by kill -9; restarting recd on the same root"
        restart_recd
        return
    fi
    if ! running "$recd_pid"; then
        wait "$recd_pid"
        local status=$?
        crashed="recd (pid $recd_pid) exited with $status during round $round: $(tail -3 "$recd_log" | tr '\n' ' ')"
        recd_pid=
        return
    fi
    ticks_after=$(cpu_ticks "$recd_pid")
    wall=$(($(date +%s%3N) - began))
    local cpu=$(((ticks_after - ticks_before) * 100000 / clk_tck / wall))
    cpu_percents+=("$cpu")
    local rss
    rss=$(rss_kib "$recd_pid")
    if [ "$killed" -eq 0 ]; then rss_first+=("$rss"); else rss_second+=("$rss"); fi
    record_seen
    say "round $round (${d}s): $failed_here sender(s) failed; recd pid $recd_pid RSS $((rss / 1024)) MiB, CPU $cpu% of one core; $(find "$root" -type f | wc -l) files"
}

# --- run ------------------------------------------------------------------------------------

echo "soak: recd $("$recd" --version 2>/dev/null | head -1), ${soak_seconds}s of load in ${round_seconds}s rounds, reload every ${hup_seconds}s, scratch $tmp"
write_config a
if ! "$recd" --check-config "$config" >/dev/null 2>"$work/check.err"; then
    fail start "the soak config is invalid: $(cat "$work/check.err")"
    exit 1
fi
if start_recd; then
    pass start "recd pid $recd_pid listens on $tcp_url and $udp_url, metrics ${metrics_addr:-not served}"
else
    fail start "recd did not start: $(tail -5 "$recd_log" | tr '\n' ' ')"
    exit 1
fi

while [ -n "$recd_pid" ]; do
    left=$((soak_seconds - $(elapsed)))
    [ "$left" -lt 3 ] && break
    run_round $((left < round_seconds ? left : round_seconds))
    if [ "$root_deleted_ok" = pending ]; then
        check_root_deleted
    elif [ "$round" -eq 1 ] && [ "$killed" -eq 0 ] && [ -n "$recd_pid" ]; then
        delete_root
    fi
done
last_round=$round

if [ -n "$crashed" ]; then
    fail alive "$crashed"
    echo "soak: FAIL: recd is not running; $failures of $checks checks failed"
    exit 1
elif [ -z "$recd_pid" ]; then
    fail restart "$restart_detail"
    echo "soak: FAIL: recd is not running; $failures of $checks checks failed"
    exit 1
fi

# Verdicts on what happened during the load.
if [ "$sender_failed" -eq 0 ]; then
    pass senders "$((sender_runs - sender_cut)) sender runs exited 0 ($sender_cut cut by the kill not counted)"
else
    fail senders "$sender_failed of $((sender_runs - sender_cut)) sender runs failed: $sender_problems"
fi
if [ "$hup_count" -lt 2 ]; then
    fail reload "only $hup_count SIGHUP(s) sent: make SOAK_HUP_SECONDS smaller than SOAK_SECONDS/2"
else
    if [ "$hup_valid_bad" -eq 0 ]; then
        pass reload-valid "$hup_valid_ok changed valid configs applied, recd kept accepting"
    else
        fail reload-valid "$hup_valid_bad of $((hup_valid_ok + hup_valid_bad)) valid reloads went wrong: $hup_problems"
    fi
    if [ "$hup_invalid_bad" -eq 0 ]; then
        pass reload-invalid "$hup_invalid_ok invalid configs rejected and logged, recd kept running and accepting"
    else
        fail reload-invalid "$hup_invalid_bad of $((hup_invalid_ok + hup_invalid_bad)) invalid reloads went wrong: $hup_problems"
    fi
fi
case $disk_full_ok in
0) pass disk-full "$disk_full_detail" ;;
skip) echo "SKIP  disk-full        $disk_full_detail" ;;
*) fail disk-full "$disk_full_detail" ;;
esac
if [ "$root_deleted_ok" = 0 ]; then
    pass root-deleted "$root_deleted_detail"
else
    fail root-deleted "$root_deleted_detail"
fi
if [ "$killed" -eq 1 ]; then
    if [ "$restart_ok" -eq 0 ]; then pass restart "$restart_detail"; else fail restart "$restart_detail"; fi
else
    fail restart "no round reached the half-way point: recd was never killed"
fi

# Leak check on the restarted process: its first loaded round is the warm-up.
series() { local s="" v; for v in "$@"; do s="$s $((v / 1024))"; done; echo "${s# }"; }
echo "      RSS MiB per round, first process: $(series "${rss_first[@]}"); after the restart: $(series "${rss_second[@]}")"
if [ "${#rss_second[@]}" -eq 0 ]; then
    fail rss "no round ran on the restarted recd: nothing to compare"
else
    warm=${rss_second[0]}
    end=${rss_second[-1]}
    limit=$((warm * 3 / 2 + rss_slack_kib))
    if [ "$end" -le "$limit" ]; then
        pass rss "RSS after warm-up $((warm / 1024)) MiB, at the end $((end / 1024)) MiB (limit $((limit / 1024)) MiB, ${#rss_second[@]} rounds)"
    else
        fail rss "RSS grew from $((warm / 1024)) MiB after warm-up to $((end / 1024)) MiB (limit $((limit / 1024)) MiB)"
    fi
fi
cpu_sum=0
cpu_max=0
for c in "${cpu_percents[@]}"; do
    cpu_sum=$((cpu_sum + c))
    [ "$c" -gt "$cpu_max" ] && cpu_max=$c
done
[ "${#cpu_percents[@]}" -gt 0 ] &&
    echo "      recd CPU per loaded round: average $((cpu_sum / ${#cpu_percents[@]}))% of one core, highest $cpu_max%"

# Rotation: without it a session gets one part per round (the killed round's included), so more
# parts than that means rotation. The seen set undercounts (parts deleted between two looks).
heavy_sessions=0
for spec in "${loads[@]}"; do
    read -r fmt kind n rate prefix <<<"$spec"
    case $prefix in *-heavy) heavy_sessions=$((heavy_sessions + n)) ;; esac
done
heavy_parts=$(grep -c -- '-heavy-[0-9]*/' "$work/seen")
if [ "$heavy_parts" -gt $((heavy_sessions * round)) ]; then
    pass rotation "$heavy_parts parts seen for $heavy_sessions heavy sessions in $round rounds"
else
    fail rotation "only $heavy_parts parts seen for $heavy_sessions heavy sessions in $round rounds: no rotation"
fi

# Quiesce: every client closed its sessions, so every part gets finalized.
for _ in $(seq 150); do
    [ "$(part_count)" -eq 0 ] && break
    sleep 0.1
done
record_seen
find "$root" -type f ! -name '*.part' ! -name '*.part.bad' ! -name '*.idx' -printf '%P\n' | sort >"$work/now"
deleted_during_run=$(comm -23 "$work/seen" "$work/now" | wc -l)
if [ "$deleted_during_run" -gt 0 ]; then
    pass retention-run "$deleted_during_run finalized files seen during the run were deleted by retention"
else
    fail retention-run "no finalized file seen during the run was deleted: retention did not act"
fi

# A final valid reload runs retention now; a reload during a periodic pass skips it, so retry.
for _ in 1 2 3; do
    before=$(reloads ok) || before=
    write_config "$valid_variant"
    kill -HUP "$recd_pid"
    await_reload ok "$before"
    for _ in $(seq 50); do
        case $(retention_state) in ok*) break 2 ;; esac
        sleep 0.2
    done
done

# Metrics of the running daemon (and of the killed one, scraped just before the kill).
if ! command -v python3 >/dev/null 2>&1 && ! command -v curl >/dev/null 2>&1; then
    echo "SKIP  metrics          neither python3 nor curl is installed: decode errors not checked"
elif scrape; then
    decode_errors=$(metric recd_decode_errors_total)
    echo "      metrics: samples $(metric recd_samples_total), files finalized $(metric recd_files_finalized_total), udp gaps $(metric recd_udp_gaps_total), backpressure $(metric recd_backpressure_events_total), heap $(($(metric recd_heap_bytes) / 1048576)) MiB, reloads ok=$(metric recd_config_reloads_total 'result="ok"') failed=$(metric recd_config_reloads_total 'result="failed"') (before the kill: ${reloads_before_kill:-not scraped})"
    total_errors=$((decode_errors + ${decode_errors_before_kill:-0}))
    if [ "$total_errors" -eq 0 ]; then
        pass decode-errors "no decode errors (restarted recd: 0, killed recd: ${decode_errors_before_kill:-not scraped})"
    else
        fail decode-errors "decode errors: restarted recd $decode_errors ($(grep '^recd_decode_errors_total' "$work/metrics" | grep -v ' 0$' | tr '\n' ' ')), killed recd ${decode_errors_before_kill:-not scraped}"
    fi
    if scrape /healthz && grep -q ok "$work/metrics"; then
        pass healthz "/healthz says ok"
    else
        fail healthz "/healthz did not say ok: $(cat "$work/metrics" "$work/metrics.err" 2>/dev/null | head -3 | tr '\n' ' ')"
    fi
else
    fail metrics "cannot fetch http://${metrics_addr:-?}/metrics: $(head -3 "$work/metrics.err" 2>/dev/null)"
fi

# Stop: SIGTERM, exit 0 within the drain timeout and some slack.
kill -TERM "$recd_pid"
for _ in $(seq 400); do
    running "$recd_pid" || break
    sleep 0.1
done
if running "$recd_pid"; then
    kill -9 "$recd_pid"
    wait "$recd_pid" 2>/dev/null
    fail stop "recd still running 40 s after SIGTERM (killed)"
else
    wait "$recd_pid"
    code=$?
    if [ "$code" -eq 0 ]; then
        pass stop "recd exited 0 after SIGTERM"
    else
        fail stop "recd exited $code after SIGTERM"
    fi
fi
recd_pid=

# The output.
parts=$(part_count)
bads=$(bad_count)
if [ "$parts" -eq 0 ] && [ "$bads" -eq 0 ]; then
    pass no-part "no .part or .part.bad file under the root"
else
    fail no-part "$parts .part and $bads .part.bad files left: $(find "$root" -name '*.part*' | head -3 | tr '\n' ' ')"
fi

files=$(find "$root" -type f | wc -l)
find "$root" -type f -print0 | xargs -0 -r "$rectool" verify -q >"$work/verify.out" 2>&1
code=$?
if [ "$code" -eq 0 ] && [ "$files" -gt 0 ]; then
    pass verify "rectool verify: all $files files complete and valid"
else
    fail verify "rectool verify failed (exit $code, $files files): $(head -3 "$work/verify.out" | tr '\n' ' ')"
fi

# A .recap is a 7-byte preamble with the big-endian header length L, the header, then gzip members.
recaps=0
bad_recaps=0
: >"$work/gzip.out"
while IFS= read -r -d '' f; do
    recaps=$((recaps + 1))
    read -r hi lo < <(od -An -tu1 -j5 -N2 "$f")
    if ! tail -c +$((8 + hi * 256 + lo)) "$f" | gzip -t 2>>"$work/gzip.out"; then
        bad_recaps=$((bad_recaps + 1))
        echo "$f" >>"$work/gzip.out"
    fi
done < <(find "$root" -type f -name '*.recap' -print0)
if [ "$bad_recaps" -eq 0 ] && [ "$recaps" -gt 0 ]; then
    pass gzip "gzip -t: the members of all $recaps .recap files are intact"
else
    fail gzip "gzip -t failed on $bad_recaps of $recaps .recap files: $(tail -2 "$work/gzip.out" | tr '\n' ' ')"
fi

# Nothing written outside the root: no links or odd files in it, every path resolves inside it,
# recd's working directory is still empty, and the scratch directory holds only what we made.
real_root=$(realpath "$root")
escaped=$(find "$root" -type f -print0 | xargs -0 -r realpath -e -- | grep -vc "^$real_root/")
odd=$(find "$root" ! -type f ! -type d | wc -l)
stray=$(find "$tmp/cwd" -mindepth 1 | wc -l)
top=$(find "$tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ')
if [ "$escaped" -eq 0 ] && [ "$odd" -eq 0 ] && [ "$stray" -eq 0 ] && [ "$top" = "cwd disk work " ]; then
    pass confinement "all $files files resolve under $real_root; no links; recd's working directory is empty"
else
    fail confinement "outside the root: $escaped files resolve elsewhere, $odd links or special files, $stray entries in recd's cwd, scratch holds: $top"
fi

state=$(retention_state)
if [ "${state#ok }" != "$state" ]; then
    pass retention "${state#ok }"
else
    fail retention "over the limits: $state"
fi

# Every session of the last round has a file written during it.
for spec in "${loads[@]}"; do
    read -r fmt kind n rate prefix <<<"$spec"
    for i in $(seq "$n"); do echo "$fmt/$prefix-$i"; done
done | sort >"$work/expected"
find "$root" -type f -newer "$work/round-start" -printf '%h\n' | sed "s|^$root/||" | sort -u >"$work/written"
missing=$(comm -23 "$work/expected" "$work/written")
if [ -z "$missing" ]; then
    pass last-round "all $(wc -l <"$work/expected") sessions of round $last_round have a file from that round"
else
    fail last-round "$(printf '%s\n' "$missing" | grep -c .) sessions of round $last_round have no file from it: $(printf '%s\n' "$missing" | head -5 | tr '\n' ' ')"
fi

warnings=$(cat "$work"/recd.*.log | grep -v 'reload failed' | grep -c .)
if [ "$warnings" -gt 0 ]; then
    echo "      recd logged $warnings other warning/error lines, the last ones:"
    cat "$work"/recd.*.log | grep -v 'reload failed' | tail -5 | sed 's/^/        /'
fi

took=$(elapsed)
if [ "$failures" -eq 0 ]; then
    echo "soak: PASS: all $checks checks passed in ${took}s"
    exit 0
fi
echo "soak: FAIL: $failures of $checks checks failed (${took}s)"
for f in "$work"/recd.*.log; do
    sed "s|^|    $(basename "$f"): |" "$f" | tail -20
done
exit 1
