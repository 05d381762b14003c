# SPDX-License-Identifier: MIT
# No file outside a format's folders names a format (tests/repo/format_names.py, issue 36); the
# self-test first shows that a planted name fails the check.
set -eu
: "${RECD_SOURCE_DIR:?}"
python3 "$RECD_SOURCE_DIR/tests/repo/format_names.py" --self-test
python3 "$RECD_SOURCE_DIR/tests/repo/format_names.py" "$RECD_SOURCE_DIR"
