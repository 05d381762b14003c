# SPDX-License-Identifier: MIT
# Reads the lists of a --help text, for the tests that keep the man pages and completions in step
# with the programs (tests/repo/man_pages.sh, tests/repo/completions.sh). Each function reads the
# help text on standard input and prints one word a line.
#
# The shapes they rely on:
#   - a command list follows a line ending in "commands:" or "Commands:" and is the indented lines
#     after it, the name first ("  laps   lap and sector times"). `rectool --help` lists the
#     commands; a command with subcommands (`rectool rf2 --help`: laps) lists them the same way.
#   - options are "--long" words anywhere ("  -o, --output OUT", "[--seed N]") and short options
#     at the start of an indented line before a comma ("  -o, --output").

# The long and short options named in a help text.
help_options() {
    local text
    text=$(cat)
    printf '%s\n' "$text" | grep -oE '(^|[][ ,|(])--[a-z][a-z-]*' | sed 's/^[^-]*//'
    printf '%s\n' "$text" | grep -oE '^ +-[a-zA-Z],' | tr -d ' ,'
    true
}

# The commands (or subcommands) a help text lists.
help_commands() {
    awk '/[Cc]ommands:$/ { on = 1; next } on && /^  +[a-z]/ { print $1; next } { on = 0 }'
}

# The subcommands of `$RECTOOL CMD`, empty for a command without any.
rectool_subcommands() {
    "$RECTOOL" "$1" --help 2>&1 | help_commands
}
