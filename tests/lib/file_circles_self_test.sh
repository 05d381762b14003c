# SPDX-License-Identifier: MIT
# Shows file_circles.py can fail: a call circle that only a header's static inline helper closes.
set -eu
: "${RECD_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
exec python3 "$RECD_SOURCE_DIR/tests/lib/file_circles.py" --self-test
