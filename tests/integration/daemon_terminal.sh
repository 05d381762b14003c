# SPDX-License-Identifier: MIT
# recd's log on a terminal and on a pipe (daemon_terminal.py drives recd on a pty).
set -u
exec python3 "$(dirname "$0")/daemon_terminal.py"
