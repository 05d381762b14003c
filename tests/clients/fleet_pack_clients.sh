# SPDX-License-Identifier: MIT
# Packed JetStream messages are byte-identical from librecd (rectool send), the Python client and
# the Java client's FleetPack (test_fleet_pack_clients.py); skips without nats-server.
set -u
[ -x "${RECTOOL:-}" ] || { echo "SKIP: $RECTOOL does not name rectool"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_fleet_pack_clients.py"
