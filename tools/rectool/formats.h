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
#include "recd/message.h"
#include "recd/synth.h"

struct option;

/* Synthetic sessions of a session-only format, which librecd's synth module does not make (it
 * writes files): `generate` writes one session as JSON lines, `send --synthetic` sends them. */
typedef struct rt_session_synth {
    const char *base;     /* the synth format whose parameters it takes (duration, sample rate) */
    recd_synth_scenario scenario; /* the scenario it plays, whatever --scenario says */
    const char *summary;  /* generate's word for it instead of a scenario name */
    const char *unit;     /* what generate counts */
    /* One session for seed and duration: 0, -EINVAL or -ENOMEM (*gen set either way). */
    int (*init)(void **gen, uint64_t seed, uint64_t duration_ms);
    /* Fills m (initialised as a state of the format) with the next state: 0, 1 when run dry,
     * or a negative errno. */
    int (*next)(void *gen, recd_msg *m);
    void (*free)(void *gen); /* NULL-safe */
    /* generate: the whole session for p as JSON lines; *units counts what it wrote. */
    int (*write)(const recd_synth_params *p, recd_sink sink, uint64_t *units);
} rt_session_synth;

/* generate's options that only this format takes (its file layout): synopsis, help lines,
 * getopt entries, and the writer that honours them. */
typedef struct rt_generate_options {
    const char *synopsis;          /* "[--actors N] ..." for the usage line */
    const char *help;              /* their lines of `generate --help` */
    const struct option *options;  /* getopt_long entries, ended by an empty one */
    size_t state_size;             /* bytes of the state take and write share */
    void (*defaults)(void *state); /* the layout the format writes without options */
    /* Takes option c's value arg: 0, or the usage error's exit code (cmd and usage for it). */
    int (*take)(void *state, int c, const char *arg, const char *cmd, const char *usage);
    /* Writes the recording for p with the state's layout; *units counts its units. */
    int (*write)(const recd_synth_params *p, const void *state, recd_sink sink, uint64_t *units);
} rt_generate_options;

/* A format's line(s) in a command's --help, printed after the command's own text. */
typedef struct rt_help_note {
    const char *cmd;  /* the command ("cut") */
    const char *text; /* whole lines, each ending in '\n' */
} rt_help_note;

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
    /* Synthetic sessions rectool makes itself, for the entry's formats that librecd's synth module
     * does not generate (session-only ones); NULL: none. */
    const rt_session_synth *session_synth;
    /* generate's options for this format only; NULL: none. */
    const rt_generate_options *generate;
    /* Lines this format adds to a command's --help, ended by an entry without a command. */
    const struct rt_help_note *help_notes;
} rt_format_tool;

/* The list (formats.c), NULL past its end. */
const rt_format_tool *rt_format_tool_at(size_t i);

/* The tool entry of f, or NULL when rectool has nothing format-specific for it. */
const rt_format_tool *rt_format_tool_of(const recd_format *f);

/* The entry (file or session-only, recd/format_list.h) named name, with the tool entry serving
 * it in *tool (NULL when none); NULL when no format has that name. */
const recd_format *rt_format_find_any(const char *name, const rt_format_tool **tool);

/* The names of the table's formats that pick accepts, in table order, as help texts and refusals
 * give them: "a, b and c" (last = " and ") or "a, b or c"; with_ext adds " (.ext)" to each. */
void rt_format_names(char *buf, size_t len, bool (*pick)(const recd_format *f), const char *last,
                     bool with_ext);

#endif
