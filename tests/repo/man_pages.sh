# SPDX-License-Identifier: MIT
# The man pages (docs/man/*.scd) stay in sync with the programs and the configuration reference:
# every option of `recd --help` is in recd(8); every command of `rectool --help`, and every option
# of `rectool COMMAND --help`, is in that command's section of rectool(1); every key of
# `recd --print-config` and of docs/configuration.md's option table is in recd.yaml(5), and every
# key recd.yaml(5) describes still exists. Each page renders with scdoc and man without warnings.
# A command with subcommands (`rectool rf2 --help` lists laps) has a '## rf2' section and one
# '## rf2 laps' section per subcommand holding that subcommand's options (scdoc has only two
# heading levels), so adding a command or a subcommand is adding its section.
set -u
: "${RECD_SOURCE_DIR:?}" "${RECTOOL:?}"
man_dir="$RECD_SOURCE_DIR/docs/man"
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=../shell/help_text.sh
. "$RECD_SOURCE_DIR/tests/shell/help_text.sh"

# recd(8)
if [ -n "${RECD:-}" ]; then
    "$RECD" --help >"$tmp/recd.help" 2>&1
    for opt in $(help_options <"$tmp/recd.help" | sort -u); do
        grep -qF -- "*$opt*" "$man_dir/recd.8.scd" || fail "recd.8.scd does not describe $opt (recd --help has it)"
    done
else
    echo "note: RECD not set (no daemon in this build); recd(8) and --print-config not checked"
fi

# recd(8)'s NAME line names every format recd records (rectool import --format's list).
name_line=$(awk '/^# NAME/ { on = 1; next } on && NF { print; exit }' "$man_dir/recd.8.scd")
recorded=$("$RECTOOL" import --help 2>&1 | awk 'index($0, "-f, --format FORMAT") { getline; print; exit }' | tr -d ',' | sed 's/ or / /')
[ -n "$recorded" ] || fail "no format list in rectool import --help"
for f in $recorded; do
    case "$f" in
    samp-*) word=.rec ;;
    recap) word=Recap ;;
    carla) word=CARLA ;;
    *) word=$f ;;
    esac
    case "$name_line" in
    *"$word"*) ;;
    *) fail "recd.8.scd's NAME line does not name $f ($word): '$name_line'" ;;
    esac
done

# rectool(1): one '## COMMAND' section per command (and '## COMMAND SUB' per subcommand), holding
# each of its options.
rectool_section() {
    awk -v c="## $1" '$0 == c { on = 1; next } /^#/ { on = 0 } on' "$man_dir/rectool.1.scd"
}
# check_section NAME ARGS...: the section NAME describes every option of `rectool ARGS... --help`.
check_section() {
    local name=$1 section opt
    shift
    section=$(rectool_section "$name")
    if [ -z "$section" ]; then
        fail "rectool.1.scd has no '## $name' section"
        return
    fi
    "$RECTOOL" "$@" --help >"$tmp/cmd.help" 2>&1
    for opt in $(help_options <"$tmp/cmd.help" | sort -u); do
        [ "$opt" = --help ] || [ "$opt" = -h ] && continue   # under COMMON OPTIONS
        [[ $section == *"*$opt*"* ]] ||
            fail "rectool.1.scd's '$name' section does not describe $opt (rectool $* --help has it)"
    done
}
"$RECTOOL" --help >"$tmp/rectool.help" 2>&1
commands=$(help_commands <"$tmp/rectool.help")
[ -n "$commands" ] || fail "no command list in rectool --help"
# Sets and lookups below are bash's own: a grep per option or key made this test a few hundred
# processes.
declare -A sections   # every section name the help texts call for
for cmd in $commands; do
    check_section "$cmd" "$cmd"
    sections[$cmd]=1
    for sub in $(rectool_subcommands "$cmd"); do
        check_section "$cmd $sub" "$cmd" "$sub"
        sections["$cmd $sub"]=1
    done
done
while IFS= read -r sec; do
    [ -n "${sections[$sec]:-}" ] ||
        fail "rectool.1.scd describes '$sec', which rectool --help (or its command's --help) does not list"
done < <(sed -n 's/^## //p' "$man_dir/rectool.1.scd")

# recd.yaml(5): the keys the daemon prints and the keys the reference documents.
described=$(sed -n 's/^\*\([a-z_.]*\)\* (default.*/\1/p' "$man_dir/recd.yaml.5.scd" | sort -u)
[ -n "$described" ] || fail "recd.yaml.5.scd describes no option"
documented=$(awk '/^## Options/ { on = 1; next } /^## / { on = 0 } on' "$RECD_SOURCE_DIR/docs/configuration.md" |
    sed -n 's/^| `\([a-z_.]*\)` |.*/\1/p' | sort -u)
[ -n "$documented" ] || fail "no option table found in docs/configuration.md"
declare -A is_described is_documented is_printed
for key in $described; do is_described[$key]=1; done
for key in $documented; do is_documented[$key]=1; done
for key in $documented; do
    [ -n "${is_described[$key]:-}" ] || fail "recd.yaml.5.scd does not describe $key (docs/configuration.md has it)"
done
for key in $described; do
    [ -n "${is_documented[$key]:-}" ] || fail "recd.yaml.5.scd describes $key, which docs/configuration.md does not"
done
if [ -n "${RECD:-}" ]; then
    # Dotted paths of the scalar keys in the effective configuration (nested mappings, 2-space indent).
    "$RECD" --print-config >"$tmp/config.yaml" 2>/dev/null || fail "recd --print-config failed"
    printed=$(awk '
        /^[[:space:]]*#/ || /^[[:space:]]*-/ || !NF { next }
        match($0, /^ *[a-z_]+:/) {
            indent = match($0, /[^ ]/) - 1
            key = $0; sub(/^ */, "", key); sub(/:.*/, "", key)
            level = indent / 2
            path[level] = key
            full = path[0]
            for (i = 1; i <= level; i++) full = full "." path[i]
            if (full !~ /\.\./) print full   # not the keys of list entries (url, encoding)
        }' "$tmp/config.yaml" | sort -u)
    for key in $printed; do
        # A mapping (output, flush, ...) is a prefix of its keys: it is not a leaf.
        parent=$key
        while [[ $parent == *.* ]]; do
            parent=${parent%.*}
            is_printed[$parent]=mapping
        done
    done
    for key in $printed; do
        # Only leaves must be described.
        [ "${is_printed[$key]:-}" = mapping ] && continue
        [ -n "${is_described[$key]:-}" ] || fail "recd.yaml.5.scd does not describe $key (recd --print-config prints it)"
    done
fi

# Each page renders.
if command -v scdoc >/dev/null 2>&1; then
    for src in "$man_dir"/*.scd; do
        page=$(basename "$src" .scd)
        scdoc <"$src" >"$tmp/$page" 2>"$tmp/scdoc.err" || { fail "scdoc $page: $(cat "$tmp/scdoc.err")"; continue; }
        if command -v man >/dev/null 2>&1; then
            warnings=$(MANWIDTH=80 man --warnings -l "$tmp/$page" 2>&1 >/dev/null)
            [ -z "$warnings" ] || fail "man warns about $page: $warnings"
        fi
    done
else
    echo "note: scdoc not installed (scripts/install-deps.sh installs it); pages not rendered"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "man_pages: recd(8), rectool(1) and recd.yaml(5) cover every option, command and config key; all pages render"
