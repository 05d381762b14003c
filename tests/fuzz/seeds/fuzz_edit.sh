#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Seeds for fuzz_edit into $1: the .rec seeds of fuzz_rec_reader (every layout the probe knows)
# the Recap seeds of fuzz_recap_decoder and the CARLA seeds of fuzz_carla_reader, so the edits see
# every editable format and their variants.
set -euo pipefail
dir=${1:?usage: fuzz_edit.sh DIR}
here="$(dirname "$0")"
bash "$here/fuzz_rec_reader.sh" "$dir"
bash "$here/fuzz_recap_decoder.sh" "$dir"
bash "$here/fuzz_carla_reader.sh" "$dir"
