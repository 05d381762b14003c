# SPDX-License-Identifier: MIT
# Every metric of a running recd follows Prometheus' naming rules (metric_names.py says which).
set -u
exec python3 "$(dirname "$0")/metric_names.py"
