# SPDX-License-Identifier: MIT
# rectool's progress on a terminal and its cleanup on SIGINT / SIGTERM (rectool_progress.py).
set -u
exec python3 "$(dirname "$0")/rectool_progress.py"
