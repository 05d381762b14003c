# SPDX-License-Identifier: MIT
# Builds the Java client and runs its JetStream publishing tests (test_java_nats.py) against a
# real nats-server and recd; skipped without a JDK, and the server-bound tests skip themselves
# when nats-server is missing.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
if ! command -v javac >/dev/null || ! command -v jar >/dev/null || ! command -v java >/dev/null; then
    echo "SKIP: javac/jar/java not found: the Java client's NATS publisher is not tested (scripts/install-deps.sh installs openjdk-17-jdk-headless)"
    exit 77
fi
if ! command -v nats-server >/dev/null; then
    echo "SKIP: nats-server is not installed (scripts/install-deps.sh installs it): the Java client's JetStream publishing is not tested"
    exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_java_nats.py"
