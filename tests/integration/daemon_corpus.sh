# SPDX-License-Identifier: MIT
# recd corpus round trip: every standard SA-MP recording of the shared corpus, sent with
# `rectool send` over TCP and over UDP, comes out of the daemon byte-identical.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
require_corpus samp-rec
recd_tmpdir daemon_corpus
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
  - udp://127.0.0.1:0
output:
  root: $tmp/out
metrics:
  enabled: false
flush:
  interval: 100ms
YAML
start_recd "$tmp/log" --config "$tmp/recd.yaml"

sent=0
i=0
for f in "$corpus"/*.rec; do
    # Standard files only: those rectool verifies (legacy and text-mangled ones are refused).
    "$RECTOOL" verify "$f" >/dev/null 2>&1 || continue
    i=$((i + 1))
    for transport in tcp udp; do
        url=$tcp
        [ "$transport" = udp ] && url=$udp
        if ! "$RECTOOL" send "$f" --to "$url" --session "$transport-$i" --speed max >"$tmp/send.out" 2>&1; then
            fail "rectool send $(basename "$f") over $transport: $(cat "$tmp/send.out")"
        fi
        sent=$((sent + 1))
    done
    echo "$i $f" >>"$tmp/sent"
done
[ "$sent" -gt 0 ] || fail "no standard recording in $corpus"

kill -TERM "$recd_pid"
wait "$recd_pid"
code=$?
recd_pid=
[ "$code" -eq 0 ] || fail "recd exited with $code after SIGTERM"
expect_no_parts "$tmp/out"
expect_sent_back "$tmp/sent" "$tmp/out" tcp udp

if [ "$failures" -ne 0 ]; then
    sed 's/^/    recd: /' "$tmp/log" | tail -40 >&2
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "$sent corpus sessions came out byte-identical"
