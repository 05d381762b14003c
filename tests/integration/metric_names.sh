# SPDX-License-Identifier: MIT
# Every metric of a running recd follows Prometheus' naming rules (metric_names.py says which).
set -u
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to read the metrics"; exit 77; }
exec python3 "$(dirname "$0")/metric_names.py"
