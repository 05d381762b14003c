# SPDX-License-Identifier: MIT
# recd command line and packaging: --help, --version, --check-config (exit 0 / file:line:col and
# exit 1), --print-config with overrides, usage errors, startup failure on an unusable listener,
# and the systemd unit's hardening score (skipped when systemd-analyze is not installed).
set -u
if [ -z "${RECD:-}" ] || [ ! -x "${RECD:-}" ]; then
    echo "SKIP: \$RECD does not name the recd binary (the daemon is not built)"
    exit 77
fi
: "${RECD_SOURCE_DIR:?RECD_SOURCE_DIR must point at the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/daemon_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

expect 0 "$RECD" --help
grep -q -- "--check-config FILE" "$tmp/out" || fail "--help does not describe --check-config"
expect 0 "$RECD" --version
grep -Eq '^recd [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out" || fail "--version printed: $(cat "$tmp/out")"
expect 2 "$RECD" --no-such-option
grep -q "unknown option" "$tmp/err" || fail "no message for an unknown option"
expect 2 "$RECD" --config

# --check-config: the shipped file is valid; errors name file:line:column.
expect 0 "$RECD" --check-config "$RECD_SOURCE_DIR/config/recd.yaml"
[ -s "$tmp/out" ] && fail "--check-config printed something for a valid file"
printf 'flush:\n  interval: 1x\n' >"$tmp/bad.yaml"
expect 1 "$RECD" --check-config "$tmp/bad.yaml"
grep -q "bad.yaml:2:13: flush.interval" "$tmp/err" || fail "check-config error: $(cat "$tmp/err")"
printf 'flush:\n  intervall: 1s\n' >"$tmp/typo.yaml"
expect 1 "$RECD" --check-config "$tmp/typo.yaml"
grep -q "typo.yaml:2:3: .*did you mean 'interval'" "$tmp/err" || fail "no suggestion: $(cat "$tmp/err")"
expect 1 "$RECD" --check-config "$tmp/missing.yaml"

# --print-config: defaults without a file, flags on top.
expect 0 "$RECD" --print-config
grep -q "tcp://127.0.0.1:7070" "$tmp/out" || fail "defaults do not listen on tcp://127.0.0.1:7070"
grep -q "udp://127.0.0.1:7070" "$tmp/out" || fail "defaults do not listen on udp://127.0.0.1:7070"
expect 0 "$RECD" --print-config --listen tcp://127.0.0.1:7171 --listen "udp://[::1]:7172" \
    --output "$tmp/rec" --metrics 127.0.0.1:9999 --flush-interval 250ms --log-level debug
for want in "tcp://127.0.0.1:7171" "udp://\[::1\]:7172" "$tmp/rec" "127.0.0.1:9999" "250ms" "debug"; do
    grep -q -- "$want" "$tmp/out" || fail "--print-config lacks $want"
done
grep -q "7070" "$tmp/out" && fail "--listen did not replace the default listeners"
expect 1 "$RECD" --print-config --flush-interval 5x
grep -q -- "--flush-interval" "$tmp/err" || fail "bad --flush-interval not named: $(cat "$tmp/err")"
expect 1 "$RECD" --print-config --metrics 10.1.2.3:9464
expect 1 "$RECD" --print-config --listen ftp://127.0.0.1:1

# A listener that cannot be bound fails the start (exit 1, says why) and leaves no socket behind.
printf 'listen:\n  - unix://%s/nodir/in.sock\noutput:\n  root: %s/recordings\nmetrics:\n  enabled: false\n' \
    "$tmp" "$tmp" >"$tmp/unbindable.yaml"
expect 1 timeout 20 "$RECD" --config "$tmp/unbindable.yaml"
grep -q "cannot listen on unix://" "$tmp/err" || fail "no startup error: $(cat "$tmp/err")"

# A TCP port in use: the error names the URL once, then says why.
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(600)' >"$tmp/hold.port" &
    holder=$!
    for _ in $(seq 300); do [ -s "$tmp/hold.port" ] && break; sleep 0.1; done
    port=$(cat "$tmp/hold.port")
    if [ -n "$port" ]; then
        expect 1 timeout 20 "$RECD" --listen "tcp://127.0.0.1:$port" --output "$tmp/recordings" \
            --metrics 127.0.0.1:0
        line=$(grep "cannot listen on" "$tmp/err")
        [ "$(printf '%s' "$line" | grep -o "tcp://127.0.0.1:$port" | wc -l)" -eq 1 ] ||
            fail "the port-in-use error does not name the URL exactly once: '$line'"
        printf '%s' "$line" | grep -qi "address already in use" || fail "the port-in-use error does not say why: '$line'"
    else
        fail "could not hold a TCP port for the port-in-use check"
    fi
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
else
    echo "note: python3 not installed; the port-in-use message was not checked"
fi

# The hardened unit: systemd-analyze scores it at most 2.0.
# (systemd/recd.service.in is the template that install fills in; tests/integration/package_deb.sh
# checks the installed unit.)
[ -f "$RECD_SOURCE_DIR/systemd/recd.service.in" ] || fail "systemd/recd.service.in is missing"
unit="$tmp/recd.service"
sed -e 's|@RECD_BINDIR@|/usr/bin|' -e 's|@RECD_CONFDIR@|/etc/recd|' -e 's|@RECD_DOCDIR@|/usr/share/doc/recd|' \
    "$RECD_SOURCE_DIR/systemd/recd.service.in" >"$unit"
[ -f "$RECD_SOURCE_DIR/systemd/recd.socket" ] || fail "systemd/recd.socket is missing"
if command -v systemd-analyze >/dev/null 2>&1; then
    score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null |
        sed -n 's/.*Overall exposure level for recd.service: \([0-9.]*\).*/\1/p')
    if [ -z "$score" ]; then
        echo "note: systemd-analyze could not score the unit offline; check skipped"
    elif ! awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
        fail "systemd-analyze security scores recd.service $score (> 2.0)"
    else
        echo "recd.service exposure: $score"
    fi
    # TLS certificates through LoadCredential= (systemd/recd-tls.conf) keep the same score.
    tls_unit="$tmp/tls/recd.service"
    mkdir -p "$tmp/tls"
    grep -v '^#' "$RECD_SOURCE_DIR/systemd/recd-tls.conf" | grep -v '^\[Service\]' >"$tmp/tls/extra"
    sed -e '/^\[Service\]/r '"$tmp/tls/extra" "$unit" >"$tls_unit"
    grep -q '^LoadCredential=recd.key:/etc/recd/tls/recd.key' "$tls_unit" ||
        fail "systemd/recd-tls.conf was not merged into the unit"
    tls_score=$(systemd-analyze security --offline=true "$tls_unit" 2>/dev/null |
        sed -n 's/.*Overall exposure level for recd.service: \([0-9.]*\).*/\1/p')
    if [ -n "$score" ] && [ "$tls_score" != "$score" ]; then
        fail "with systemd/recd-tls.conf recd.service scores ${tls_score:-nothing}, not $score"
    fi
else
    echo "note: systemd-analyze not installed; unit score not checked"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "all daemon CLI checks passed"
