# SPDX-License-Identifier: MIT
# abidw's options for librecd's ABI baseline, shared by lib/abi/regenerate.sh and
# tests/abi/abi_check.sh so the baseline and each build are described alike: no paths, source
# locations or build directories (they change with every checkout and edit, the ABI does not),
# type ids by hash rather than by order, and only exported functions and the public types
# (lib/include, the generated recd/version.h) they reach.
RECD_ABIDW_OPTIONS=(--no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed
    --type-id-style hash --exported-interfaces-only --drop-private-types)
