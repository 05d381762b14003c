# SPDX-License-Identifier: MIT
# recd never prints a listen URL's credentials (user:password@, token@, an nkey seed) in its
# errors: --listen given twice, a malformed URL, a refused query.
set -u
if [ -z "${RECD:-}" ] || [ ! -x "${RECD:-}" ]; then
    echo "SKIP: \$RECD does not name the recd binary (the daemon is not built)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/daemon_cli_redact.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"

secret=s3cretPW
no_secret() { # $1: what was run
    grep -q "$secret" "$tmp/out" "$tmp/err" && fail "$1 printed the secret: $(cat "$tmp/err")"
    grep -q '\*\*\*' "$tmp/err" || fail "$1 did not show the redacted URL: $(cat "$tmp/err")"
}

url="nats://alice:$secret@127.0.0.1:4222/rec"
expect 1 "$RECD" --print-config --listen "$url" --listen "$url"
grep -q "is given twice" "$tmp/err" || fail "no duplicate error: $(cat "$tmp/err")"
no_secret "--listen twice"
grep -q "'nats://\*\*\*@127.0.0.1:4222/rec' is given twice" "$tmp/err" || fail "shown: $(cat "$tmp/err")"

expect 1 "$RECD" --print-config --listen "tcp://bob:$secret@127.0.0.1:7070/path"
no_secret "a tcp URL with a path"
expect 1 "$RECD" --print-config --listen "tcp://bob:$secret@127.0.0.1:7070?encoding=ndjson"
no_secret "a tcp URL with a query"
expect 1 "$RECD" --print-config --listen "udp://$secret@127.0.0.1:7070/x"
no_secret "a udp URL with a token"

[ "$failures" -eq 0 ]
