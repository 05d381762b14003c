# SPDX-License-Identifier: MIT
# Every source file states its licence in an SPDX line near its top (scripts/spdx-headers.sh).
set -eu
: "${RECD_SOURCE_DIR:?}"
if ! git -C "$RECD_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
    echo "SKIP: $RECD_SOURCE_DIR is not a git checkout; the check lists files through git"
    exit 77
fi
bash "$RECD_SOURCE_DIR/scripts/spdx-headers.sh" --check
echo "spdx_headers: every source file has its SPDX line"
