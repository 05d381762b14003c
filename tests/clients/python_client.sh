# SPDX-License-Identifier: MIT
# Runs the Python client's tests (test_python_client.py) against a real recd.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_python_client.py"
