/* SPDX-License-Identifier: MIT */
/* What the editing commands (cmd_edit_*.c) share: reading inputs, times and coordinates from the
 * command line, and writing a result only once it verifies (OUT.part, then rename). */
#ifndef RECTOOL_EDIT_UTIL_H
#define RECTOOL_EDIT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "file_io.h"
#include "progress.h"
#include "recd/edit.h"

/* Opens path; prints the error and returns RT_EXIT_IO on failure, else 0. */
int rt_edit_open(const char *cmd, const char *path, rt_input *in);
recd_edit_input rt_edit_input_of(const rt_input *in);

/* A time in the edit unit of format f (recd_edit_time_unit(): "ms", "tick"): a bare integer is in
 * that unit; anything else is a duration for librecd's parser (recd/units.h: "90s", "1m30s",
 * "1500ms"), converted to whole units of recd_edit_unit_ms(f) (rounded). 0, or -EINVAL / -ERANGE
 * with *why saying what is wrong. */
int rt_edit_parse_time(const char *text, const recd_format *f, int64_t *out, const char **why);
/* Seconds for plot: a number alone is seconds (5, 12.5); anything else is a duration for
 * librecd's parser (1m30s). 0, or -EINVAL / -ERANGE with *why saying what is wrong. */
int rt_edit_parse_seconds(const char *text, double *out, const char **why);
/* f's edit unit in words, for messages: "milliseconds", or "ticks of 50 ms" (written into buf). */
const char *rt_edit_unit_words(const recd_format *f, char *buf, size_t n);
/* "X,Y,Z" as three finite numbers. 0 or -EINVAL. */
int rt_edit_parse_vec3(const char *text, double out[3]);
/* A finite number. 0 or -EINVAL. */
int rt_edit_parse_number(const char *text, double *out);

/* The format of the file in in, or NULL (with a message) when it cannot be edited. */
const recd_format *rt_edit_format(const char *cmd, const rt_input *in);

/* One progress bar for an editing command, in bytes of its inputs: librecd's edit (or plot's
 * reading) fills the first part, the checks of the result (or plot's drawing) the rest. */
typedef struct rt_edit_progress {
    rt_progress bar;
    uint64_t first_part; /* bar units of the edit; the rest is the second part */
    uint64_t second_total; /* work units of the second part (bytes checked, points drawn) */
    uint64_t second_done;  /* of them, by finished steps */
} rt_edit_progress;

/* input_bytes: the inputs' size. first_share: the edit's share of the bar in percent (100 when
 * nothing follows it). */
void rt_edit_progress_start(rt_edit_progress *p, const char *label, uint64_t input_bytes,
                            unsigned first_share);
/* The watcher to give librecd's edit call. */
recd_progress rt_edit_progress_watch(rt_edit_progress *p);
/* The second part is total units long; rt_edit_progress_second(p, done, total) is a recd_progress_fn
 * for one step of it, and rt_edit_progress_step_done(p, n) moves on past a step of n units. */
void rt_edit_progress_second_part(rt_edit_progress *p, uint64_t total);
/* A recd_progress_fn whose done of total is the whole second part's. */
void rt_edit_progress_second_fraction(void *p, uint64_t done, uint64_t total);
/* Erases the bar (before an error or result on the terminal). */
void rt_edit_progress_finish(rt_edit_progress *p);

/* rt_edit_write's two halves, for commands that check several results before writing any: the
 * check (0, or RT_EXIT_INVALID after the message; v gets the verdict) and the write of a checked
 * result (an exit code). */
int rt_edit_check(const char *cmd, const char *path, const recd_buf *data, recd_format_verdict *v,
                  rt_edit_progress *progress);
int rt_edit_put(const char *cmd, const char *path, const recd_buf *data,
                const recd_format_verdict *v, bool quiet);

/* The edit's share of the bar when its result is checked after it (the check reads the result
 * once; the edit reads the input and writes the result). */
#define RT_EDIT_SHARE 70u

/* After librecd's edit returned rc (err: its reason): the exit code of rt_edit_fail, or of
 * rt_edit_write of result to path with progress' bar going on; the bar is finished either way. */
int rt_edit_conclude(const char *cmd, int rc, const char *err, const char *path,
                     const recd_buf *result, bool quiet, rt_edit_progress *progress);

/* The exit code for a librecd edit error rc (with its reason in err), after printing it. */
int rt_edit_fail(const char *cmd, int rc, const char *err);

#endif
