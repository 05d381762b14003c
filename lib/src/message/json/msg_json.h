/* SPDX-License-Identifier: MIT */
/* Internal: a message as one JSON object, written and read, shared by the JSON lines encoding and
 * the CSV rows of JSON-mapped formats (written in msg_json_write.c, read in msg_json_read.c). */
#ifndef RECD_MSG_JSON_H
#define RECD_MSG_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "recd/message.h"

/* A message as one JSON object (no newline); omit drops "type" and/or an event's "tick" (CSV
 * rows carry them in columns). */
#define MSG_OMIT_TYPE 1u
#define MSG_OMIT_TICK 2u
int msg_json_object(const recd_msg *m, recd_buf *out, unsigned omit);
/* recd_msg_from_json on an already parsed object. */
int msg_from_json_value(const json_t *root, recd_msg_format session_format, recd_msg *out,
                        char *err, size_t errlen);

#endif
