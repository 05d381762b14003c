# SPDX-License-Identifier: MIT
"""Nothing outside a format's own folder names a format (issue 36): the message model, wire codec,
synthetic data, editing, storage, the daemon's session layer and rectool reach every format
through its descriptor. Code and string literals count, comments do not (they may give examples).

Allowed: a format's folders (lib/src/formats/NAME/, daemon/record/formats/NAME/,
tools/rectool/formats/NAME/, and lib/internal/recd/formats/NAME/ for the private interfaces its
library and daemon folders share), a format's own public header (recd/NAME.h), the registration
lists (each names every format once), and the released public ABI listed in PUBLIC_ABI.

usage: format_names.py SOURCE_DIR        check the tree; lists every offending line
       format_names.py --self-test       shows that the check fails on a planted name
"""
import os
import re
import sys
import tempfile

SCOPES = ("lib/src", "lib/include", "lib/internal", "daemon", "tools")
FORMAT_FOLDER = re.compile(
    r"^(lib/src/formats|lib/internal/recd/formats|daemon/record/formats|tools/rectool/formats)/[^/]+/")
REGISTRATION_LISTS = {
    "lib/src/formats/format_table.c",
    "daemon/record/session_formats.c",
    "tools/rectool/formats.c",
}
FORMAT_HEADERS = {"lib/include/recd/recap.h", "lib/include/recd/carla.h", "lib/include/recd/samp_rec.h"}
# Public ABI that embedders compile against, kept as it was released: the message model's enum of
# formats and recd_msg's payload union (one value and one member per recorded format, the step
# "Adding a format" in docs/architecture.md names), and edit.h's kind of track (a walker).
PUBLIC_ABI = {
    "lib/include/recd/message.h": None,
    "lib/include/recd/edit.h": re.compile(r"\bRECD_TRACK_ONFOOT\b"),
}
NAMES = re.compile(r"(?i)(recap|carla|samp(?![a-z])|sc2|rf2|onfoot|RECD_MSG_FMT_(?!NONE\b)\w+)")


def code_of(text):
    """text with comments blanked out (line breaks kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def allowed(rel):
    return bool(FORMAT_FOLDER.match(rel)) or rel in REGISTRATION_LISTS or rel in FORMAT_HEADERS \
        or (rel in PUBLIC_ABI and PUBLIC_ABI[rel] is None)


def public_abi_line(rel, line):
    names = PUBLIC_ABI.get(rel)
    return names is not None and names.search(line) is not None


def offences(root):
    found = []
    for scope in SCOPES:
        for d, _, files in os.walk(os.path.join(root, scope)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if allowed(rel):
                    continue
                with open(path, errors="replace") as fh:
                    lines = code_of(fh.read()).split("\n")
                for number, line in enumerate(lines, 1):
                    m = NAMES.search(line)
                    if m and not public_abi_line(rel, line):
                        found.append(f"{rel}:{number}: names '{m.group(1)}': {line.strip()[:100]}")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "lib/src/message"))
        os.makedirs(os.path.join(root, "lib/src/formats/recap"))
        with open(os.path.join(root, "lib/src/formats/recap/recap_msg.c"), "w") as f:
            f.write('int recap_open(void) { return strcmp(kind, "recap"); }\n')
        with open(os.path.join(root, "lib/src/message/msg.c"), "w") as f:
            f.write("/* e.g. a Recap tick */\nint open(void) { return 0; }\n")
        if offences(root):
            print("self-test: a clean tree was reported", file=sys.stderr)
            return 1
        with open(os.path.join(root, "lib/src/message/msg.c"), "a") as f:
            f.write('int kind_is(const char *k) { return strcmp(k, "recap") == 0; }\n')
        if len(offences(root)) != 1:
            print("self-test: the planted name was not reported", file=sys.stderr)
            return 1
    print("format_names self-test: a planted name fails the check, a comment does not")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    found = offences(sys.argv[1])
    for line in found:
        print(line)
    if found:
        print(f"format_names: {len(found)} lines outside the format folders name a format",
              file=sys.stderr)
        return 1
    print("format_names: no file outside the format folders names a format")
    return 0


if __name__ == "__main__":
    sys.exit(main())
