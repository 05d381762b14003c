/* SPDX-License-Identifier: MIT */
/* rectool's presentation per recording format, reached through the format's librecd table entry:
 * what `info` adds beyond what the entry's hooks say, and the format's own commands. Each entry
 * lives in the format's folder, tools/rectool/formats/<name>/, and is listed once in formats.c.
 * A format without an entry still gets the generic description built from its verify hook. */
#ifndef RECTOOL_FORMATS_H
#define RECTOOL_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "commands.h"
#include "recd/format.h"

typedef struct rt_format_tool {
    const char *const *names; /* the recd_format names it serves, NULL-ended */
    /* Adds the format's keys to the file's `info` description: "valid", "<format>" details,
     * "timing", "anomalies", "problems". show_progress lets a big single file draw its own
     * progress bar (callers walking many files draw one per file set). 0, or a negative errno
     * when the description could not be built (out of memory). NULL: the verify hook's verdict. */
    int (*info)(const uint8_t *buf, size_t len, json_t *out, bool show_progress);
    /* More keys, put under the format's name in the description (`info --json`; show_all is
     * `--all`). NULL when there are none; returns NULL when the file yields none. */
    json_t *(*info_details)(const uint8_t *buf, size_t len, bool show_all);
    /* The text `info` prints instead of the generic description, when the format's users know
     * another tool's exact text (a simulator's own file-info text); an exit code. NULL: generic. */
    int (*info_text)(const char *path, bool show_all);
    /* The format's own commands (`rectool NAME ...`), ended by an entry without a name; NULL:
     * none. `rectool --help` lists them after the general ones, in the list's order. */
    const rt_command *commands;
} rt_format_tool;

/* The list (formats.c), NULL past its end. */
const rt_format_tool *rt_format_tool_at(size_t i);

/* The tool entry of f, or NULL when rectool has nothing format-specific for it. */
const rt_format_tool *rt_format_tool_of(const recd_format *f);

/* The names of the table's formats that pick accepts, in table order, as help texts and refusals
 * give them: "a, b and c" (last = " and ") or "a, b or c"; with_ext adds " (.ext)" to each. */
void rt_format_names(char *buf, size_t len, bool (*pick)(const recd_format *f), const char *last,
                     bool with_ext);

#endif
