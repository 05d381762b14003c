/* SPDX-License-Identifier: MIT */
/* What the editing commands (cmd_edit_*.c) share: reading inputs, times and coordinates from the
 * command line, and writing a result only once it verifies (OUT.part, then rename). */
#ifndef RECTOOL_EDIT_UTIL_H
#define RECTOOL_EDIT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "file_io.h"
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

/* Checks data with its format's verify hook and writes it to path (OUT.part + rename). An output
 * that does not verify is not written: "rectool CMD: internal error: ..." and RT_EXIT_INVALID.
 * Returns an exit code; prints "path: ok (summary)" unless quiet. */
int rt_edit_write(const char *cmd, const char *path, const recd_buf *data, bool quiet);

/* The exit code for a librecd edit error rc (with its reason in err), after printing it. */
int rt_edit_fail(const char *cmd, int rc, const char *err);

#endif
