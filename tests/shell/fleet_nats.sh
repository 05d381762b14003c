# SPDX-License-Identifier: MIT
# Sourced by the fleet tests: a real `nats-server -js` on a free loopback port with its store in
# the test's folder, recd fleet instances on it, and their metrics. Callers set $tmp (scratch
# folder) and source recd_daemon.sh and expect.sh first.

scale=${RECD_TEST_TIME_SCALE:-1}

wait_for() { # SECONDS COMMAND...: polls every 0.1 s, SECONDS scaled for slow builds
    local n=$(($1 * 10 * scale))
    shift
    for _ in $(seq "$n"); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

start_nats_server() { # [PORT] [CONFIG]: any free port by default, or PORT again after a stop (the
    # store in $tmp/js is kept), with a nats-server config file if given; sets nats_pid and port
    : >"$tmp/nats.log"
    nats-server -js -a 127.0.0.1 -p "${1:--1}" -sd "$tmp/js" ${2:+-c "$2"} >"$tmp/nats.log" 2>&1 &
    nats_pid=$!
    wait_for 20 grep -q 'Server is ready' "$tmp/nats.log" || {
        cat "$tmp/nats.log" >&2
        echo "FAIL: nats-server did not start" >&2
        exit 1
    }
    port=$(sed -n 's/.*client connections on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/nats.log" | head -n 1)
}

fleet_config() { # FILE URL ROOT [OUTPUT YAML LINES] [NATS YAML LINES]: a fleet instance's config,
    # $fleet_partitions partitions (4 unless set), leases of $fleet_lease_ttl (3s unless set)
    cat >"$1" <<YAML
listen:
  - $2
output:
  root: $3
${4:-}
metrics:
  enabled: true
  listen: 127.0.0.1:0
flush:
  interval: 100ms
nats:
  partitions: ${fleet_partitions:-4}
  lease_ttl: ${fleet_lease_ttl:-3s}
${5:-}
YAML
}

# DIR NAME URL [OUTPUT YAML LINES]: starts fleet instance NAME on URL (fleet_config), its config,
# ports, log and output root under DIR; sets pid_out.
# Skips the test when recd has no libnats.
start_fleet_instance() {
    mkdir -p "$1"
    fleet_config "$1/$2.yaml" "$3" "$1/out-$2" "${4:-}" "  instance: $2"
    : >"$1/$2.ports" # now: the redirection runs in the child, and a restart must not read old ports
    "$RECD" --config "$1/$2.yaml" --print-ports >"$1/$2.ports" 2>"$1/$2.log" &
    pid_out=$!
    wait_for 20 grep -qs '^metrics ' "$1/$2.ports"
    if grep -q 'without NATS support' "$1/$2.log"; then
        echo "SKIP: recd was built without libnats"
        exit 77
    fi
}

fleet_metric() { # DIR INSTANCE NAME: the value of metric NAME (unlabelled) on that instance
    python3 -c 'import sys, urllib.request
for line in urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode().splitlines():
    if line.startswith(sys.argv[2] + " "): print(line.split()[1])' \
        "$(sed -n 's/^metrics //p' "$1/$2.ports")" "$3" 2>/dev/null
}

show_instance_log() { # LOG LABEL LINES: a sanitizer's report in full if the log has one, then its
    # last LINES lines, each prefixed with LABEL
    sed -n '/ERROR: AddressSanitizer\|runtime error:\|ERROR: LeakSanitizer/,/ABORTING\|SUMMARY:/p' "$1" |
        head -n 60 | sed "s/^/    $2: /" >&2
    tail -n "$3" "$1" | sed "s/^/    $2: /" >&2
}

# Root ignores file permissions, which tests that make a folder unwritable rely on: run as root,
# $RECD becomes a wrapper ($tmp/recd-as-nobody) that runs recd as nobody; the test is skipped when
# setpriv cannot. Call after $tmp exists (mode 755, so nobody can reach it).
recd_as_nobody() {
    local real=$RECD drop=()
    if [ "$(id -u)" = 0 ]; then
        drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
        "${drop[@]}" "$real" --version >/dev/null 2>&1 ||
            { echo "SKIP: cannot run recd as nobody with setpriv"; exit 77; }
    fi
    printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${drop[*]}" "$real" >"$tmp/recd-as-nobody"
    chmod 755 "$tmp/recd-as-nobody"
    RECD=$tmp/recd-as-nobody
}
