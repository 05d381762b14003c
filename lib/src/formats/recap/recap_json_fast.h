/* SPDX-License-Identifier: MIT */
/* Internal: the tree-free reader for Recap state lines (Recap's json fast_state hook). The jansson
 * reader (recap_json.c) handles everything else and every error. */
#ifndef RECD_RECAP_JSON_FAST_H
#define RECD_RECAP_JSON_FAST_H

#include <stddef.h>

#include "recd/message.h"

/* Reads line (no newline) as a state of a Recap session without building a tree. Returns 1 with
 * *out filled exactly as the jansson reader would fill it, or 0 when it declines: anything it is
 * not sure of (escapes, non-ASCII strings, other message types or keys, every error, a session
 * format other than Recap) is left to the jansson reader. */
int recap_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out);

#endif
