# SPDX-License-Identifier: MIT
# recd, run as an unprivileged user (nobody), with an output root it may not create files in
# (docs/reliability.md, "Round 3: accepted means written"). At start: /healthz says why, a session
# sent with rectool send is refused (exit 1, the reason on stderr, counted as an "unwritable"
# decode error) instead of being taken and lost. Once the root may be written again sessions are
# taken; made unwritable later, new sessions are refused again once recd has noticed. A session
# taken before the root turned unwritable, whose file was never created, is lost at shutdown, and
# the stop message names no .part file that does not exist.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to hold a session open"; exit 77; }
recd_tmpdir daemon_unwritable_root
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

# Root ignores file permissions: recd runs as nobody then (setpriv); another user runs it as itself.
real_recd=$RECD
if [ "$(id -u)" = 0 ]; then
    drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
    if ! "${drop[@]}" "$real_recd" --version >/dev/null 2>&1; then
        echo "SKIP: cannot run recd as nobody with setpriv (needs setpriv, user nobody, group nogroup)"
        exit 77
    fi
else
    drop=()
fi
chmod 755 "$tmp"
root="$tmp/rec"
mkdir "$root"
chmod 555 "$root"
if [ "$(id -u)" != 0 ] && touch "$root/x" 2>/dev/null; then
    echo "SKIP: this user may write a folder of mode 555 (a capability?)"
    exit 77
fi

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $root
metrics:
  listen: 127.0.0.1:0
flush:
  interval: 1h
  buffer_size: 1MiB
YAML
RECD=${drop[0]:-$real_recd}
if [ ${#drop[@]} -gt 0 ]; then
    start_recd "$tmp/log" "${drop[@]:1}" "$real_recd" --config "$tmp/recd.yaml"
else
    start_recd "$tmp/log" --config "$tmp/recd.yaml"
fi
RECD=$real_recd
scale=${RECD_TEST_TIME_SCALE:-1}
deadline_s=$(awk -v s="$scale" 'BEGIN { printf "%d", 30 * (s < 1 ? 1 : s) }')

health() { curl -s -o "$tmp/health" -w '%{http_code}' "http://$metrics/healthz"; }
metric() {
    curl -s "http://$metrics/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}
# wait_health CODE: polls /healthz until it answers CODE.
wait_health() {
    local end=$((SECONDS + deadline_s))
    while [ "$(health)" != "$1" ]; do
        if [ $SECONDS -ge $end ]; then
            fail "/healthz did not answer $1 within ${deadline_s}s: $(cat "$tmp/health")"
            return 1
        fi
        sleep 0.1
    done
}

expect 0 "$RECTOOL" generate --format recap --scenario mixed --duration 2s --seed 5 -o "$tmp/a.recap"

# 1. Unwritable from the start.
[ "$(health)" = 503 ] || fail "/healthz answers $(health) with an unwritable root"
grep -q "cannot create files under its output root" "$tmp/health" ||
    fail "/healthz does not say why: $(cat "$tmp/health")"
expect 1 "$RECTOOL" send "$tmp/a.recap" --session first --to "$tcp" --speed max
grep -q "cannot create files under its output root" "$tmp/err" ||
    fail "rectool send does not say why: $(cat "$tmp/err")"
grep -q "^sent" "$tmp/out" && fail "rectool send says sent: $(cat "$tmp/out")"
[ "$(metric 'recd_decode_errors_total{reason="unwritable"}')" = 1 ] ||
    fail "the refusal is not counted as unwritable"
grep -q "cannot create files under the output root" "$tmp/log" || fail "the log does not say why"

# 2. The root may be written again: sessions are taken.
chmod 777 "$root"
wait_health 200
expect 0 "$RECTOOL" send "$tmp/a.recap" --session second --to "$tcp" --speed max
grep -q "^sent" "$tmp/out" || fail "rectool send did not send: $(cat "$tmp/err")"

# 3. Unwritable again while recd runs: refused once recd has noticed.
chmod 555 "$root"
wait_health 503
expect 1 "$RECTOOL" send "$tmp/a.recap" --session third --to "$tcp" --speed max
grep -q "cannot create files under its output root" "$tmp/err" ||
    fail "rectool send does not say why: $(cat "$tmp/err")"

# 4. A session taken while the root could be written, with nothing written yet (flush.interval is
# 1h, flush.buffer_size 1 MiB), then the root turns unwritable: at shutdown its bytes are lost and said to be; no .part file
# is named that does not exist.
chmod 777 "$root"
wait_health 200
"$RECTOOL" export "$tmp/a.recap" --to jsonl >"$tmp/a.jsonl"
cat >"$tmp/hold.py" <<'PY'
import json, socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
out = b""
for m in lines:
    if m["type"] == "close":
        break
    if m["type"] == "flush": # nothing is written before the root turns unwritable
        continue
    m["session"] = "held"
    out += json.dumps(m).encode() + b"\n"
s.sendall(out)
sys.stdout.write("sent\n")
sys.stdout.flush()
sys.stdin.readline()
s.close()
PY
exec 3> >(python3 "$tmp/hold.py" "${tcp#tcp://}" "$tmp/a.jsonl" >"$tmp/hold.out")
taken() { metric 'recd_samples_total{transport="tcp",format="recap"}'; }
want=$(($(taken) + $(grep -c '"type":"\(state\|event\)"' "$tmp/a.jsonl")))
end=$((SECONDS + deadline_s))
until [ "$(taken)" = "$want" ] ||
    [ $SECONDS -ge $end ]; do
    sleep 0.1
done
[ "$(taken)" = "$want" ] || fail "the held session's samples were not all taken: $(taken) of $want"
find "$root" -type d -exec chmod 555 {} + # the folders the output template made, too
echo >&3
exec 3>&-
kill -TERM "$recd_pid"
wait "$recd_pid"
code=$?
recd_pid=
[ "$code" = 1 ] || fail "recd exited $code after losing bytes, wanted 1"
parts=$(find "$root" -name '*.part' | wc -l)
[ "$parts" = 0 ] || fail "$parts .part files were created: $(find "$root" -name '*.part')"
grep -q "stopped with write errors: $parts files left as .part" "$tmp/log" ||
    fail "the stop message does not say $parts files left as .part: $(grep 'stopped with' "$tmp/log")"
grep -q "[1-9][0-9]* accepted bytes never written" "$tmp/log" || fail "the lost bytes are not said"

if [ "$failures" -ne 0 ]; then
    sed 's/^/    /' "$tmp/log" | tail -40 >&2
fi
[ "$failures" -eq 0 ]
