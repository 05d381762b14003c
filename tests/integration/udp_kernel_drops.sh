# SPDX-License-Identifier: MIT
# recd counts the datagrams the kernel drops and sizes its UDP buffer from the config
# (udp_kernel_drops.py says how).
set -u
exec python3 "$(dirname "$0")/udp_kernel_drops.py"
