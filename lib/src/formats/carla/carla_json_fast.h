/* SPDX-License-Identifier: MIT */
/* Internal: the tree-free reader for CARLA state lines (CARLA's json fast_state hook). The jansson
 * reader (carla_msg.c) handles everything else and every error. */
#ifndef RECD_CARLA_JSON_FAST_H
#define RECD_CARLA_JSON_FAST_H

#include <stddef.h>

#include "recd/message.h"

/* Reads line (no newline) as a state of a CARLA session without building a tree. Returns 1 with
 * *out filled exactly as the jansson reader would fill it, or 0 when it declines: anything it is
 * not sure of (escapes, record fields out of table order, "raw", other message types or keys,
 * every error, a session format other than CARLA) is left to the jansson reader. */
int carla_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out);

#endif
