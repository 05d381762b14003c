# SPDX-License-Identifier: MIT
# The benchmark report renders without a benchmark run: fresh and warm targets apart, and every
# kept results JSON again (tests/repo/bench_report.py).
set -eu
: "${RECD_SOURCE_DIR:?}"
python3 -B "$RECD_SOURCE_DIR/tests/repo/bench_report.py" "$RECD_SOURCE_DIR"
