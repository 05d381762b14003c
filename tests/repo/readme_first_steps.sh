# SPDX-License-Identifier: MIT
# Every ```sh block of README.md works as written, in order, from a fresh clone's root, and the
# whole sequence works a second time from the root without cleaning up: every file a command
# reads was made by an earlier command, every command exits as its comment says (0 unless it
# says "exit 1"), and recd records the car. A block is skipped only when the line before it is
# "<!-- readme-test: skip (why) -->" (it needs the user's own files, servers or sudo). recd runs
# as `make run` starts it (recording into ./recordings), but on free ports; the examples'
# 127.0.0.1:7070 is replaced by the port it bound.
set -u
: "${RECD_SOURCE_DIR:?}" "${RECTOOL:?}"
# shellcheck source=../shell/recd_daemon.sh
. "$(dirname "$0")/../shell/recd_daemon.sh"
require_recd
recd_tmpdir readme_first_steps

mkdir -p "$tmp/repo/scratch"
start_recd "$tmp/recd.log" --output "$tmp/repo/recordings" --listen tcp://127.0.0.1:0 \
    --listen udp://127.0.0.1:0 --metrics 127.0.0.1:0

# The shell lines of the README's ```sh blocks, continuation lines joined; a block after a
# skip marker is left out.
awk '
    /^```sh/ { block = 1; skip = (prev ~ /^<!-- readme-test: skip/); text = ""; next }
    block && /^```/ { block = 0; if (!skip) printf "%s", text; prev = $0; next }
    block { text = text $0 "\n"; next }
    /[^ ]/ { prev = $0 }
' "$RECD_SOURCE_DIR/README.md" | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' >"$tmp/lines"
[ -s "$tmp/lines" ] || { echo "FAIL: no shell blocks found in README.md" >&2; exit 1; }
grep -q -- '--format samp-player' "$tmp/lines" || { echo "FAIL: the player-session block is not run" >&2; exit 1; }

# One script: each line runs in order in the same shell, its output to a file (the redirection
# goes before the line's comment), followed by a check of its exit code.
{
    echo 'failures=0'
    while IFS= read -r line; do
        case "$line" in
            '' | '#'*) continue ;;
            R=*) printf 'R=%q\n' "$RECTOOL"; continue ;;
        esac
        expected=0
        case "$line" in *'# exit 1'*) expected=1 ;; esac
        line=${line//tcp:\/\/127.0.0.1:7070/$tcp}
        line=${line//udp:\/\/127.0.0.1:7070/$udp}
        command=${line%%  #*}
        printf '%s >"$OUT" 2>&1\n' "$command"
        printf 'rc=$?; [ $rc -eq %d ] || { echo "FAIL: exit $rc, not %d:" %q >&2; cat "$OUT" >&2; failures=$((failures + 1)); }\n' \
            "$expected" "$expected" "$command"
        # recd finalizes a closed session's file (renames it from .part) after send returns.
        case "$command" in
            *'$R send '*) echo 'for _ in $(seq $((100 * ${RECD_TEST_TIME_SCALE:-1}))); do [ -n "$(find ../recordings -type f 2>/dev/null)" ] && [ -z "$(find ../recordings -name "*.part" 2>/dev/null)" ] && break; sleep 0.1; done' ;;
        esac
    done <"$tmp/lines"
    echo 'exit $((failures > 255 ? 255 : failures))' # an exit code wraps at 256
} >"$tmp/run.sh"

# Twice in a row, each from the repository root, as a user who runs the README again would.
failures=0
for pass in 1 2; do
    (cd "$tmp/repo" && OUT="$tmp/out" bash "$tmp/run.sh")
    rc=$?
    [ $rc -eq 0 ] || echo "FAIL: pass $pass: $rc command(s) failed" >&2
    failures=$((failures + rc))
done
ls "$tmp/repo/recordings/samp-vehicle/car/"*.rec >/dev/null 2>&1 ||
    { echo "FAIL: recd recorded no recordings/samp-vehicle/car/*.rec" >&2; failures=$((failures + 1)); }
manifest=$tmp/repo/recordings/samp-player/p7/p7.json
{ grep -q '"type":"onfoot"' "$manifest" && grep -q '"type":"vehicle","start_ms"' "$manifest"; } 2>/dev/null ||
    { echo "FAIL: generate --format samp-player and send recorded no walking and driving parts in p7.json" >&2; failures=$((failures + 1)); }
extra=$(ls -A "$tmp/repo" | grep -vx -e scratch -e recordings)
[ -z "$extra" ] || { echo "FAIL: the README's commands left files outside scratch/ and recordings/: $extra" >&2; failures=$((failures + 1)); }
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "readme_first_steps: every README block not marked skip runs as written, twice, inside scratch/ and recordings/"
