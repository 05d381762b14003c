# SPDX-License-Identifier: MIT
# TLS and credentials of the one NATS connection module (recd/nats_connect.h), on both sides: the
# C publisher (`rectool send --to 'nats://...?tls_ca=...'`) and recd's nats:// inputs (the same
# URL grammar, plus the nats.* keys). A recording published through a nats-server that requires
# TLS and verifies clients, into a recd fleet instance consuming over TLS, comes out
# byte-identical; tls_name names the certificate's host on both sides; a wrong CA or name, a
# missing client certificate, tls_key without tls_cert and TLS asked of a plain server all fail
# with a clear error and record nothing. Then a server with an nkey user and user/password users:
# recd comes in with an nkey seed, then with a password, the publisher with both; a wrong seed or
# password is refused. Then a token, for recd and the publisher; a wrong one is refused.
# Certificates come from the openssl CLI, the seeds from the Python client's nkeys.py. Not tested
# here: creds (JWT, operator mode).
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
for tool in nats-server openssl python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"
        exit 77
    fi
done
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet_nats_secure.XXXXXX")
nats_pid=
cleanup() {
    stop_recd_at_exit
    [ -n "$nats_pid" ] && kill -9 "$nats_pid" 2>/dev/null
    [ -n "${KEEP_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
# shellcheck source=../shell/fleet_nats.sh
. "$(dirname "$0")/../shell/fleet_nats.sh"

ssl() { openssl "$@" >>"$tmp/openssl.log" 2>&1 || { cat "$tmp/openssl.log" >&2; echo "FAIL: openssl $*" >&2; exit 1; }; }
make_ca() { # NAME
    ssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/$1.key" \
        -out "$tmp/$1.pem" -days 2 -subj "/CN=recd test $1"
}
make_cert() { # NAME SAN: signed by ca
    echo "subjectAltName=$2" >"$tmp/$1.cnf"
    ssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tmp/$1.key" \
        -out "$tmp/$1.csr" -subj "/CN=$1"
    ssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
        -out "$tmp/$1.pem" -days 2 -extfile "$tmp/$1.cnf"
}

start_server() { start_nats_server -1 "$1"; } # CONFIG: on a free port; sets nats_pid and port
stop_server() {
    kill -TERM "$nats_pid"
    wait "$nats_pid" 2>/dev/null
    nats_pid=
    rm -rf "$tmp/js"
}

start_consumer() { # NAME URL [NATS YAML LINES]: a recd fleet instance owning all 4 partitions
    fleet_config "$tmp/$1.yaml" "$2" "$tmp/out" "" "${3:-}"
    start_recd "$tmp/$1.log" --config "$tmp/$1.yaml"
    if grep -q 'without NATS support' "$tmp/$1.log"; then
        echo "SKIP: recd was built without libnats"
        exit 77
    fi
}
partitions_owned() { # the metric of the running recd
    python3 -c 'import sys, urllib.request
for line in urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=10).read().decode().splitlines():
    if line.startswith("recd_nats_partitions_owned "): print(line.split()[1])' "$metrics" 2>/dev/null
}
owns_all() { [ "$(partitions_owned)" = 4 ]; }
stop_consumer() {
    kill -TERM "$recd_pid"
    wait "$recd_pid" 2>/dev/null
    recd_pid=
}

send() { # SESSION URL: the generated recording; the exit code and rectool's output in $tmp/SESSION.out
    "$RECTOOL" send "$tmp/gen.rec" --to "$2" --partitions 4 --session "$1" --speed max \
        >"$tmp/$1.out" 2>&1
}
send_ok() { # SESSION URL
    send "$1" "$2" || fail "rectool send $1: exit $?: $(cat "$tmp/$1.out")"
}
send_refused() { # SESSION URL EXIT TEXT: fails with that exit code, saying TEXT
    send "$1" "$2"
    local code=$?
    [ "$code" -eq "$3" ] || fail "rectool send $1 exited $code, not $3: $(cat "$tmp/$1.out")"
    grep -qF -- "$4" "$tmp/$1.out" || fail "rectool send $1 does not say '$4': $(cat "$tmp/$1.out")"
}
recorded() { # SESSION: exactly one finalized file for it
    [ "$(find "$tmp/out" -path "*/$1/*" -type f ! -name '*.part' ! -name '*.idx' 2>/dev/null | grep -c .)" -eq 1 ]
}
check_recorded() { # SESSION: byte-identical to what was sent
    wait_for 60 recorded "$1" || { fail "session $1 was not recorded"; return; }
    cmp -s "$tmp/gen.rec" "$(find "$tmp/out" -path "*/$1/*" -type f)" ||
        fail "session $1: the recording differs from what was sent"
}
check_nothing() { # SESSION...: no file at all for these
    for s in "$@"; do
        [ -z "$(find "$tmp/out" -path "*/$s/*" 2>/dev/null)" ] || fail "session $s was recorded"
    done
}

"$RECTOOL" generate --format samp-vehicle --duration 20s --seed 5 -o "$tmp/gen.rec" >/dev/null ||
    { echo "FAIL: rectool generate" >&2; exit 1; }

# 1. TLS: the server requires it and verifies client certificates.
make_ca ca
make_ca other
make_cert server "IP:127.0.0.1,DNS:127.0.0.1,DNS:nats.test" # libnats checks the host as a name
make_cert publisher DNS:publisher
make_cert recd DNS:recd
cat >"$tmp/tls.conf" <<CONF
tls {
  cert_file: "$tmp/server.pem"
  key_file: "$tmp/server.key"
  ca_file: "$tmp/ca.pem"
  verify: true
  timeout: 60 # a handshake on a loaded machine may outlast the default
}
CONF
start_server "$tmp/tls.conf"
base="nats://127.0.0.1:$port/secure"
start_consumer tls "$base?tls_name=nats.test" "  tls_ca: $tmp/ca.pem
  tls_cert: $tmp/recd.pem
  tls_key: $tmp/recd.key"
wait_for 30 owns_all || fail "recd did not claim the 4 partitions over TLS: $(tail -5 "$tmp/tls.log")"
client="tls_cert=$tmp/publisher.pem&tls_key=$tmp/publisher.key"
send_ok tls-ok "$base?tls_ca=$tmp/ca.pem&$client"
send_ok tls-name "$base?tls_ca=$tmp/ca.pem&tls_name=nats.test&$client"
send_refused wrong-name "$base?tls_ca=$tmp/ca.pem&tls_name=other.test&$client" 3 "cannot connect to nats://127.0.0.1:$port: SSL Error"
send_refused wrong-ca "$base?tls_ca=$tmp/other.pem&$client" 3 "cannot connect to nats://127.0.0.1:$port: SSL Error; checked against tls_ca $tmp/other.pem"
send_refused no-client-cert "$base?tls_ca=$tmp/ca.pem" 3 "does the server want a client certificate?"
send_refused no-tls "$base" 3 "cannot connect to nats://127.0.0.1:$port"
send_refused key-alone "$base?tls_ca=$tmp/ca.pem&tls_key=$tmp/publisher.key" 2 "tls_key needs tls_cert"
send_refused missing-ca "$base?tls_ca=$tmp/nowhere.pem" 2 "tls_ca $tmp/nowhere.pem: No such file"
send_refused key-as-cert "$base?tls_ca=$tmp/ca.pem&tls_cert=$tmp/ca.key" 2 "tls_cert $tmp/ca.key: SSL Error"
send_refused not-a-ca "$base?tls_ca=$tmp/gen.rec&$client" 2 "tls_ca $tmp/gen.rec: SSL Error"
send_ok tls-again "$base?tls_ca=$tmp/ca.pem&$client" # after the refusals: they left nothing behind
cat "$tmp/publisher.pem" "$tmp/publisher.key" >"$tmp/publisher-both.pem"
send_ok tls-one-file "$base?tls_ca=$tmp/ca.pem&tls_cert=$tmp/publisher-both.pem" # key beside the cert
check_recorded tls-ok
check_recorded tls-name
check_recorded tls-one-file
check_recorded tls-again
check_nothing wrong-ca wrong-name no-client-cert no-tls key-alone missing-ca key-as-cert not-a-ca
stop_consumer
stop_server

# 2. TLS asked of a server without it: an error, never clear text.
: >"$tmp/plain.conf"
start_server "$tmp/plain.conf"
send_refused plain "nats://127.0.0.1:$port/secure?tls_ca=$tmp/ca.pem" 3 "the server offers none: nothing is sent in clear text"
stop_server

# 3. Credentials: an nkey user and users with a password; recd comes in with the nkey seed (the
# same option as the publisher's), then with a password, which its messages never show.
seeds=$(cd "$repo/clients/python" && python3 -c 'from recd_client.nkeys import generate_user_seed, public_of_seed
for _ in range(2):
    s = generate_user_seed()
    print(s, public_of_seed(s))') || { echo "FAIL: no nkey seed from recd_client/nkeys.py" >&2; exit 1; }
read -r seed pub <<EOF
$(echo "$seeds" | sed -n 1p)
EOF
read -r other_seed _ <<EOF
$(echo "$seeds" | sed -n 2p)
EOF
echo "$seed" >"$tmp/user.nk"
echo "$other_seed" >"$tmp/other.nk"
printf 'not a seed\n' >"$tmp/bad.nk"
cat >"$tmp/auth.conf" <<CONF
authorization {
  users = [
    { nkey: "$pub" }
    { user: alice, password: "s3cret@x" }
    { user: recd, password: "r3cd-pw" }
  ]
}
CONF
start_server "$tmp/auth.conf"
base="nats://127.0.0.1:$port/auth"
start_consumer auth "$base?nkey=$tmp/user.nk"
wait_for 30 owns_all || fail "recd did not claim the 4 partitions with nkey: $(tail -5 "$tmp/auth.log")"
send_ok nkey-ok "$base?nkey=$tmp/user.nk"
send_ok password-ok "nats://alice:s3cret%40x@127.0.0.1:$port/auth"
send_refused nkey-wrong "$base?nkey=$tmp/other.nk" 3 "Authorization Violation"
send_refused nkey-bad "$base?nkey=$tmp/bad.nk" 2 "nkey $tmp/bad.nk: no user seed"
send_refused password-wrong "nats://alice:hunter2@127.0.0.1:$port/auth" 3 "Authorization Violation"
grep -q hunter2 "$tmp/password-wrong.out" && fail "the password shows in rectool's error"
send_refused two-ways "nats://alice:x@127.0.0.1:$port/auth?nkey=$tmp/user.nk" 2 "credentials: give one of"
check_recorded nkey-ok
check_recorded password-ok
check_nothing nkey-wrong nkey-bad password-wrong two-ways
stop_consumer
start_consumer auth-pw "nats://recd:r3cd-pw@127.0.0.1:$port/auth"
wait_for 30 owns_all || fail "recd did not claim the 4 partitions with a password: $(tail -5 "$tmp/auth-pw.log")"
grep -q r3cd-pw "$tmp/auth-pw.log" && fail "the password shows in recd's log"
stop_consumer
fleet_config "$tmp/both.yaml" "nats://recd:x@127.0.0.1:$port/auth?nkey=$tmp/user.nk" "$tmp/out"
"$RECD" --check-config "$tmp/both.yaml" >"$tmp/both.out" 2>&1 && fail "recd took two credentials"
grep -q "credentials: give one of nkey, USER:PASSWORD@" "$tmp/both.out" ||
    fail "recd --check-config does not say why: $(cat "$tmp/both.out")"
grep -q "recd:x@" "$tmp/both.out" && fail "the password shows in recd's error"
fleet_config "$tmp/clash.yaml" "nats://recd:r3cd-pw@127.0.0.1:$port/auth" "$tmp/out" "" "  creds: $tmp/user.nk"
timeout 30 "$RECD" --config "$tmp/clash.yaml" >"$tmp/clash.out" 2>&1 && fail "recd took a password and nats.creds"
grep -qF "cannot listen on nats://***@127.0.0.1:$port/auth: credentials: give one of creds, USER:PASSWORD@" \
    "$tmp/clash.out" || fail "recd does not say why it cannot listen: $(cat "$tmp/clash.out")"
grep -q r3cd-pw "$tmp/clash.out" && fail "the password shows in recd's error"
stop_server

# 4. A token (nats-server takes it as its one credential), for recd and the publisher; a wrong one
# is refused on connecting.
cat >"$tmp/token.conf" <<CONF
authorization {
  token: "t0k/en"
}
CONF
start_server "$tmp/token.conf"
start_consumer token "nats://t0k%2Fen@127.0.0.1:$port/tok"
wait_for 30 owns_all || fail "recd did not claim the 4 partitions with a token: $(tail -5 "$tmp/token.log")"
send_refused token-wrong "nats://nope@127.0.0.1:$port/tok?ack_timeout=2s" 3 "Authorization Violation"
send_ok token-ok "nats://t0k%2Fen@127.0.0.1:$port/tok"
check_recorded token-ok
check_nothing token-wrong
stop_consumer
stop_server

if [ "$failures" -ne 0 ]; then
    for log in tls auth auth-pw token; do
        [ -f "$tmp/$log.log" ] && show_instance_log "$tmp/$log.log" "$log" 20
    done
    exit 1
fi
echo "PASS: TLS (client certificates, wrong CA or name, no TLS), nkey, user/password and token, for rectool send and recd"
