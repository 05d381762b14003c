# SPDX-License-Identifier: MIT
# tls:// listeners, client certificate identities and auth.token_file (daemon_tls.py says how).
set -u
exec python3 "$(dirname "$0")/daemon_tls.py"
