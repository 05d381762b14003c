# SPDX-License-Identifier: MIT
# Runs the Python client's JetStream publishing tests (test_python_nats.py) against a real
# nats-server and recd; the server-bound tests skip themselves when nats-server is missing.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_python_nats.py"
