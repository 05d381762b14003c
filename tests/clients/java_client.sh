# SPDX-License-Identifier: MIT
# Builds the Java client with javac/jar and runs its tests (test_java_client.py) against a real recd.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
if ! command -v javac >/dev/null || ! command -v jar >/dev/null; then
    echo "SKIP: javac/jar not found: the Java client is not tested (scripts/install-deps.sh installs openjdk-17-jdk-headless)"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_java_client.py"
