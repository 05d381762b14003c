# SPDX-License-Identifier: MIT
# Runs file_circles.py: no two librecd files may depend on each other, by #include or by calls.
set -eu
: "${RECD_SOURCE_DIR:?}" "${RECD_LIB_OBJECTS:?set by tests/CMakeLists.txt to the list of librecd objects}"
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
exec python3 "$RECD_SOURCE_DIR/tests/lib/file_circles.py" "$RECD_SOURCE_DIR/lib" "$RECD_LIB_OBJECTS"
