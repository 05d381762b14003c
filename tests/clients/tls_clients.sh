# SPDX-License-Identifier: MIT
# The same session through each client (C/rectool send, Python, Java) over TLS and over plain
# TCP gives byte-identical files; a wrong CA, a wrong server name and a missing client
# certificate make each client fail with a clear error and nothing recorded (test_tls_clients.py).
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl is not installed (scripts/install-deps.sh)"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_tls_clients.py"
