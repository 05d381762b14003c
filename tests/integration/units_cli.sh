# SPDX-License-Identifier: MIT
# recd.yaml, recd's flags and rectool's options (generate, send, and the editing commands' times)
# read durations with the one parser in librecd (recd/units.h): the same text is accepted or
# refused everywhere, with the same message.
set -u
if [ -z "${RECD:-}" ] || [ ! -x "${RECD:-}" ] || [ -z "${RECTOOL:-}" ]; then
    echo "SKIP: \$RECD or \$RECTOOL is not built"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/units_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

bare="invalid duration '10': a number alone is not a duration: add a unit, ms, s, m, h or d (e.g. 30s)"
unit="invalid duration '1h30': expected a unit after each number: ms, s, m, h or d (e.g. 250ms, 30s, 1h30m)"

expect 1 "$RECD" --print-config --flush-interval 10
grep -qF -- "--flush-interval: $bare" "$tmp/err" || fail "recd flag: $(cat "$tmp/err")"
printf 'shutdown:\n  drain_timeout: 10\n' >"$tmp/bare.yaml"
expect 1 "$RECD" --check-config "$tmp/bare.yaml"
grep -qF "bare.yaml:2:18: shutdown.drain_timeout: $bare" "$tmp/err" || fail "recd.yaml: $(cat "$tmp/err")"
expect 2 "$RECTOOL" generate --format recap --duration 10 -o "$tmp/x.recap"
grep -qF "rectool generate: --duration: $bare" "$tmp/err" || fail "rectool generate: $(cat "$tmp/err")"
expect 2 "$RECTOOL" send --synthetic --format recap --sessions 1 --rate 1 --duration 10 tcp://127.0.0.1:1
grep -qF "rectool send: --duration: $bare" "$tmp/err" || fail "rectool send: $(cat "$tmp/err")"

expect 1 "$RECD" --print-config --flush-interval 1h30
grep -qF -- "--flush-interval: $unit" "$tmp/err" || fail "recd flag: $(cat "$tmp/err")"
expect 2 "$RECTOOL" generate --format recap --duration 1h30 -o "$tmp/x.recap"
grep -qF "rectool generate: --duration: $unit" "$tmp/err" || fail "rectool generate: $(cat "$tmp/err")"

# Compound durations work everywhere.
expect 0 "$RECD" --print-config --flush-interval 1m30s
grep -q "  interval: 90s" "$tmp/out" || fail "recd --flush-interval 1m30s: $(grep interval "$tmp/out")"
printf 'shutdown:\n  drain_timeout: 1m30s\n' >"$tmp/ok.yaml"
expect 0 "$RECD" --check-config "$tmp/ok.yaml"
expect 0 "$RECTOOL" generate --format samp-onfoot --scenario walk --duration 1m30s -o "$tmp/x.rec"
[ -s "$tmp/x.rec" ] || fail "rectool generate --duration 1m30s wrote nothing"

# The editing commands: a number alone is a position in the file's unit; anything else is a
# duration read by the same parser.
expect 0 "$RECTOOL" cut "$tmp/x.rec" --from 1m --to 1m20s500ms -q -o "$tmp/cut.rec"
expect 0 "$RECTOOL" cut "$tmp/x.rec" --from 60000 --to 80500 -q -o "$tmp/cut2.rec"
cmp -s "$tmp/cut.rec" "$tmp/cut2.rec" || fail "cut --from 1m --to 1m20s500ms differs from 60000..80500"
expect 2 "$RECTOOL" cut "$tmp/x.rec" --from 1.5s -o "$tmp/bad.rec"
grep -qF "rectool cut: --from: invalid time '1.5s': fractions are not allowed; use a smaller unit (e.g. 1500ms, 90m) (a number alone counts milliseconds)" "$tmp/err" ||
    fail "cut --from 1.5s: $(head -1 "$tmp/err")"
# plot: a number alone is seconds, anything else a duration.
expect 2 "$RECTOOL" plot "$tmp/x.rec" --from 1x -o "$tmp/p.svg"
grep -qF "rectool plot: --from: invalid time '1x': expected a unit after each number: ms, s, m, h or d (e.g. 250ms, 30s, 1h30m) (a number alone counts seconds)" "$tmp/err" ||
    fail "plot --from 1x: $(head -1 "$tmp/err")"
[ "$failures" -eq 0 ]
