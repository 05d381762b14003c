# SPDX-License-Identifier: MIT
# Shell completion for rectool and recd (completions/): the bash scripts register with
# `complete`, offer exactly the commands of `rectool --help` and every option of each command's
# --help (and of `recd --help`), and complete a few words as a user would type them. The zsh
# scripts parse and name the same commands and options. A command with subcommands (rf2: laps)
# is checked the same way for each subcommand, `rectool CMD SUB --help` against the bash key
# "CMD SUB" and the zsh 'SUB:description' entries (see the comments atop the scripts).
set -u
: "${RECD_SOURCE_DIR:?}" "${RECTOOL:?}"
comp="$RECD_SOURCE_DIR/completions"
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=../shell/help_text.sh
. "$RECD_SOURCE_DIR/tests/shell/help_text.sh"
same_set() { [ "$(printf '%s\n' $1 | sort -u)" = "$(printf '%s\n' $2 | sort -u)" ]; }

# Completes the words given (the last one being typed) and prints COMPREPLY, one a line.
complete_words() {
    local fn=$1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    "$fn"
    printf '%s\n' "${COMPREPLY[@]}"
}

# shellcheck source=/dev/null
. "$comp/bash/rectool" || fail "sourcing completions/bash/rectool failed"
complete -p rectool 2>/dev/null | grep -q -- '-F _rectool' || fail "bash: rectool has no completion function"

"$RECTOOL" --help >"$tmp/help" 2>&1
commands=$(help_commands <"$tmp/help")
[ -n "$commands" ] || fail "no command list in rectool --help"
same_set "$commands" "$_rectool_commands" ||
    fail "bash: commands '$_rectool_commands' differ from rectool --help's '$(echo $commands)'"
# check_options KEY ARGS...: bash's options for KEY and zsh's are those of `rectool ARGS... --help`.
check_options() {
    local key=$1 expected opt
    shift
    "$RECTOOL" "$@" --help >"$tmp/cmd" 2>&1
    expected=$(help_options <"$tmp/cmd")
    same_set "$expected" "$(_rectool_options "$key")" ||
        fail "bash: options of '$key' '$(_rectool_options "$key")' differ from rectool $* --help's '$(printf '%s\n' $expected | sort -u | tr '\n' ' ')'"
    for opt in $expected; do
        case "$opt" in --*) grep -qF -- "$opt[" "$comp/zsh/_rectool" || grep -qF -- ",$opt}" "$comp/zsh/_rectool" ||
            fail "zsh: _rectool does not offer $opt (rectool $* --help has it)" ;;
        esac
    done
}
for cmd in $commands; do
    check_options "$cmd" "$cmd"
    grep -qE "^ +'$cmd:" "$comp/zsh/_rectool" || fail "zsh: _rectool does not list the command $cmd"
    subs=$(rectool_subcommands "$cmd")
    same_set "$subs" "$(_rectool_subcommands "$cmd")" ||
        fail "bash: subcommands of $cmd '$(_rectool_subcommands "$cmd")' differ from rectool $cmd --help's '$(echo $subs)'"
    for sub in $subs; do
        check_options "$cmd $sub" "$cmd" "$sub"
        grep -qE "^ +'$sub:" "$comp/zsh/_rectool" || fail "zsh: _rectool does not list the subcommand $cmd $sub"
        grep -qF "'$cmd $sub')" "$comp/zsh/_rectool" || fail "zsh: _rectool has no '$cmd $sub') branch"
    done
done

got=$(complete_words _rectool rectool exp)
[ "$got" = export ] || fail "bash: 'rectool exp<TAB>' gave '$got', not export"
got=$(complete_words _rectool rectool generate --format r)
[ "$got" = recap ] || fail "bash: 'rectool generate --format r<TAB>' gave '$got', not recap"
# generate --format offers every format `rectool generate --help` lists (carla included), in bash
# and zsh.
gen_formats=$("$RECTOOL" generate --help 2>&1 | sed -n 's/^ *--format FORMAT *//p' | sed 's/ *(.*//' | tr -d '|' | xargs)
[ -n "$gen_formats" ] || fail "no format list in rectool generate --help"
got=$(complete_words _rectool rectool generate --format "")
same_set "$gen_formats" "$got" ||
    fail "bash: 'rectool generate --format <TAB>' gave '$(echo $got)', not '$(echo $gen_formats)'"
zsh_gen=$(sed -n 's/^generate_formats=(\(.*\))$/\1/p' "$comp/zsh/_rectool" |
    sed "s/\$formats/$(sed -n 's/^formats=(\(.*\))$/\1/p' "$comp/zsh/_rectool")/")
same_set "$gen_formats" "$zsh_gen" || fail "zsh: generate --format offers '$zsh_gen', not '$(echo $gen_formats)'"
got=$(complete_words _rectool rectool generate --scenario t)
[ "$got" = traffic ] || fail "bash: 'rectool generate --scenario t<TAB>' gave '$got', not traffic"
got=$(complete_words _rectool rectool export x.rec --to j)
[ "$got" = jsonl ] || fail "bash: 'rectool export x.rec --to j<TAB>' gave '$got', not jsonl"
got=$(complete_words _rectool rectool verify --w)
[ "$got" = --warnings ] || fail "bash: 'rectool verify --w<TAB>' gave '$got', not --warnings"
got=$(complete_words _rectool rectool rf2 l)
[ "$got" = laps ] || fail "bash: 'rectool rf2 l<TAB>' gave '$got', not laps"
got=$(complete_words _rectool rectool rf2 laps --c)
[ "$got" = --csv ] || fail "bash: 'rectool rf2 laps --c<TAB>' gave '$got', not --csv"
got=$(complete_words _rectool rectool cut x.rec --from "")
[ -z "$got" ] || fail "bash: 'rectool cut x.rec --from <TAB>' gave '$got', not nothing (a time comes next)"
touch "$tmp/walk.rec"
got=$(cd "$tmp" && complete_words _rectool rectool info wa)
[ "$got" = walk.rec ] || fail "bash: 'rectool info wa<TAB>' gave '$got', not the file walk.rec"
got=$(cd "$tmp" && complete_words _rectool rectool rf2 laps wa)
[ "$got" = walk.rec ] || fail "bash: 'rectool rf2 laps wa<TAB>' gave '$got', not the file walk.rec"

. "$comp/bash/recd" || fail "sourcing completions/bash/recd failed"
complete -p recd 2>/dev/null | grep -q -- '-F _recd' || fail "bash: recd has no completion function"
if [ -n "${RECD:-}" ]; then
    "$RECD" --help >"$tmp/recd" 2>&1
    expected=$(help_options <"$tmp/recd")
    same_set "$expected" "$_recd_option_list" ||
        fail "bash: recd options '$_recd_option_list' differ from recd --help's '$(printf '%s\n' $expected | sort -u | tr '\n' ' ')'"
    for opt in $expected; do
        case "$opt" in --*) grep -qF -- "$opt[" "$comp/zsh/_recd" || grep -qF -- ",$opt}" "$comp/zsh/_recd" ||
            fail "zsh: _recd does not offer $opt (recd --help has it)" ;;
        esac
    done
fi
got=$(complete_words _recd recd --log-level deb)
[ "$got" = debug ] || fail "bash: 'recd --log-level deb<TAB>' gave '$got', not debug"

if command -v zsh >/dev/null 2>&1; then
    for f in "$comp"/zsh/_*; do
        zsh -n "$f" 2>"$tmp/zsh.err" || fail "zsh cannot parse $(basename "$f"): $(cat "$tmp/zsh.err")"
        head -n 1 "$f" | grep -q "^#compdef $(basename "$f" | cut -c2-)\$" || fail "$(basename "$f") lacks its #compdef line"
    done
else
    echo "note: zsh not installed; the zsh scripts were not parsed"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "completions: bash and zsh complete every rectool command and option and every recd option"
