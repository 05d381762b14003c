/* SPDX-License-Identifier: MIT */
/* Internal: the tree-free reader for the hot JSON line (a .rec state), the .rec entries' json
 * fast_state hook, and its number parser. The jansson reader (message/json/msg_json_formats.h)
 * handles everything else and every error. */
#ifndef RECD_REC_JSON_FAST_H
#define RECD_REC_JSON_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

/* Reads line (no newline) as a samp-onfoot or samp-vehicle state without building a tree (the
 * fast_state hook; NONE: a state of either, told apart by its keys).
 * Returns 1 with *out filled exactly as the jansson reader would fill it, or 0 when it declines:
 * anything it is not sure of (escapes, non-ASCII strings, line breaks, other message types, every
 * error) is left to the jansson reader, which then gives the documented error message. */
int rec_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                        recd_msg *out);

/* A JSON number token s[0..len): the same contract and results as text_parse_number (strtod for
 * reals), with short decimals converted exactly without strtod. */
bool rec_json_fast_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d);

#endif
