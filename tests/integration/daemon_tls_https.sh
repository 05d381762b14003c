# SPDX-License-Identifier: MIT
# metrics.tls: HTTPS for the HTTP endpoint (daemon_tls_https.py says how).
set -u
exec python3 "$(dirname "$0")/daemon_tls_https.py"
