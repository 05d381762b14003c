# SPDX-License-Identifier: MIT
# Runs the Python JetStream publisher's TLS and credentials tests (test_python_nats_secure.py):
# Ed25519 and nkeys offline, then real nats-servers (TLS, nkey users) and a recd consuming over
# TLS; the server-bound tests skip themselves when nats-server or openssl is missing.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_python_nats_secure.py"
