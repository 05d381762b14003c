# SPDX-License-Identifier: MIT
# Runs the CARLA recording example against a stand-in world (test_carla_example.py); needs no recd.
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$(dirname "$0")/test_carla_example.py"
