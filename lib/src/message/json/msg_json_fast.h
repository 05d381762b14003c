/* SPDX-License-Identifier: MIT */
/* Internal: the tree-free reader for the hot JSON line (a .rec state) and its number parser, and
 * the jansson reader kept as the reference that handles everything else and every error. */
#ifndef RECD_MSG_JSON_FAST_H
#define RECD_MSG_JSON_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

/* Reads line (no newline) as a samp-onfoot or samp-vehicle state without building a tree.
 * Returns 1 with *out filled exactly as the jansson reader would fill it, or 0 when it declines:
 * anything it is not sure of (escapes, non-ASCII strings, line breaks, other message types, every
 * error) is left to the jansson reader, which then gives the documented error message. */
int msg_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                        recd_msg *out);

/* A JSON number token s[0..len): the same contract and results as msg_parse_number (strtod for
 * reals), with short decimals converted exactly without strtod. */
bool msg_json_fast_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d);

/* recd_msg_from_json through jansson only: the reference the fast reader is fuzzed against. */
int msg_from_json_jansson(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out, char *err, size_t errlen);

#endif
