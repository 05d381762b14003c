# SPDX-License-Identifier: MIT
# Runs the Python client's tests (test_python_client.py) against a real recd.
set -u
if [ -z "${RECD:-}" ] || [ ! -x "${RECD:-}" ]; then
    echo "SKIP: \$RECD does not name the recd binary (the daemon is not built)"
    exit 77
fi
: "${RECTOOL:?RECTOOL must point at the rectool binary}"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_python_client.py"
