# SPDX-License-Identifier: MIT
# Who may read the web console (metrics.console, docs/http-api.md): with `token` a loopback client
# needs auth.token too (403 without, 200 with), a reload to `off` takes the console away (404) and
# one to `open` lets any client read; /metrics and /healthz answer whatever it says. A client from
# another address cannot be tested here: the test machine has only loopback.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v curl >/dev/null || { echo "SKIP: curl is needed"; exit 77; }
recd_tmpdir console_access
token=console-access-token-0123456789
write_config() {
    cat >"$tmp/recd.yaml" <<YAML
listen:
  - tcp://127.0.0.1:0
output:
  root: $tmp/out
auth:
  token: $token
metrics:
  listen: 127.0.0.1:0
  console: ${1}
YAML
}
fail() { echo "FAIL: $*"; tail -20 "$tmp/log"; exit 1; }
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
mkdir -p "$tmp/out"
write_config token
start_recd "$tmp/log" --config "$tmp/recd.yaml"
trap 'stop_recd_at_exit; rm -rf "$tmp"' EXIT
api="http://$metrics/api/sessions"

[ "$(status "$api")" = 403 ] || fail "console: token answered a loopback client without the token"
[ "$(status -H "Authorization: Bearer wrong-token-0123456789" "$api")" = 403 ] || fail "a wrong token was let in"
[ "$(status -H "Authorization: Bearer $token" "$api")" = 200 ] || fail "the token was refused"
[ "$(status "http://$metrics/")" = 403 ] || fail "the pages answered without the token"
[ "$(status "http://$metrics/metrics")" = 200 ] || fail "/metrics depends on metrics.console"
[ "$(status "http://$metrics/healthz")" = 200 ] || fail "/healthz depends on metrics.console"

# A reload changes it.
reload_to() {
    write_config "$1"
    kill -HUP "$recd_pid"
    for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do
        [ "$(status "$api")" = "$2" ] && return 0
        sleep 0.05
    done
    fail "after a reload to console: $1, /api/sessions answers $(status "$api"), not $2"
}
reload_to off 404
[ "$(status -H "Authorization: Bearer $token" "$api")" = 404 ] || fail "console: off still answers with the token"
[ "$(status "http://$metrics/")" = 404 ] || fail "console: off still serves the pages"
[ "$(status "http://$metrics/healthz")" = 200 ] || fail "/healthz went with the console"
reload_to open 200
[ "$(status "http://$metrics/")" = 200 ] || fail "console: open does not serve the pages"
reload_to loopback 200
echo PASS
