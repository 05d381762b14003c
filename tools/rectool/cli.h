/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the rectool commands: usage errors and option parsing conventions. */
#ifndef RECTOOL_CLI_H
#define RECTOOL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/synth.h"

/* Prints "rectool CMD: message; see 'rectool CMD --help'" (one line, not the usage text) to
 * stderr; returns RT_EXIT_USAGE. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int rt_usage_error(const char *cmd, const char *usage, const char *fmt, ...);
/* Reads a duration with librecd's parser (recd/units.h); on error prints "OPTION: invalid duration
 * 'TEXT': why" as a usage error and returns RT_EXIT_USAGE. */
/* Lines in a text (the last one may lack its newline): the progress unit for JSON lines and CSV. */
uint64_t rt_count_lines(const uint8_t *p, size_t len);
int rt_parse_duration(const char *cmd, const char *usage, const char *option, const char *text,
                      uint64_t *ms);

/* The exit code for a command's failure rc: RT_EXIT_IO when the cause lies outside the file (no
 * memory, or a library the format needs cannot be loaded: -ELIBACC), RT_EXIT_INVALID otherwise. */
int rt_exit_for_error(int rc);

/* Prints "rectool: message" to stderr. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void rt_error(const char *fmt, ...);

/* Resets getopt so a command can parse its own argv (argv[0] is the command name); opterr is
 * turned off because rt_bad_option() prints our own message. */
void rt_getopt_reset(void);

/* Message for the option getopt_long() just refused ('?' or ':'); returns RT_EXIT_USAGE. */
int rt_bad_option(const char *cmd, const char *usage, char **argv, int ret);

/* Runs fn on each of files[0..n) with a progress bar labelled `label` when there are many files;
 * returns the worst (highest) exit code fn returned. */
int rt_for_each_file(const char *label, char **files, int n,
                     int (*fn)(const char *path, const void *opts), const void *opts);

/* --help: prints usage, then each format's notes for cmd under "Per format:" (the rectool list's
 * entries, in its order; defined in formats.c), to stdout. */
void rt_print_usage(const char *cmd, const char *usage);

/* --format / --scenario values of the synthetic generator, for generate and send: 0 when optarg
 * names one, else the usage error's exit code. A format whose rectool entry makes the sessions
 * (a session-only format) sets *session, and *format to the synth format it takes parameters of;
 * otherwise *session is NULL. */
struct rt_session_synth;
int rt_parse_synth_format(const char *cmd, const char *usage, const char *text,
                          const recd_format **format, const struct rt_session_synth **session);
/* Every format generate and send make (librecd's synth formats, then the session-only formats
 * whose rectool entry makes sessions), in the format list's order, joined by sep. */
void rt_synth_format_names(char *buf, size_t len, const char *sep);
int rt_parse_synth_scenario(const char *cmd, const char *usage, const char *text,
                            recd_synth_scenario *scenario);

/* Lower-case file name extension without the dot ("txt" for "a/b.TXT"), "" when there is none. */
const char *rt_path_ext(const char *path, char *buf, unsigned buflen);
/* The last component of path: what follows its last '/', or path itself. */
const char *rt_base_name(const char *path);

#endif
