# SPDX-License-Identifier: MIT
# A certificate renewed under load by SIGHUP loses no sample (daemon_tls_reload.py says how).
set -u
exec python3 "$(dirname "$0")/daemon_tls_reload.py"
