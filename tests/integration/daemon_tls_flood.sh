# SPDX-License-Identifier: MIT
# 1,000 idle TLS connections do not lock out a good sender (daemon_tls_flood.py says how).
set -u
exec python3 "$(dirname "$0")/daemon_tls_flood.py"
