# SPDX-License-Identifier: MIT
# The chaos harness's 60-second form (tests/chaos/chaos.py; docs/reliability.md, "Round 3: chaos
# harness"): honest senders of every format over TCP, UDP and Unix next to a seeded mix of hostile
# peers; their files must come out as sent, loop lag and RSS within bounds, every refusal counted.
# The hostile classes are chaos.py's DEFAULT_CLASSES (those current main survives) unless
# CHAOS_CLASSES says otherwise; CHAOS_SEED repeats a run.
set -u
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
command -v python3 >/dev/null || { echo "SKIP: python3 is needed for the chaos harness"; exit 77; }
exec python3 "$(dirname "$0")/../chaos/chaos.py" --recd "$RECD" --rectool "$RECTOOL" \
    --seconds 60 ${CHAOS_SEED:+--seed "$CHAOS_SEED"}
