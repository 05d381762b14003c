/* SPDX-License-Identifier: MIT */
/* Internal: what the message model's encodings share beyond a format's hooks: a message as one
 * JSON object (the CSV rows of JSON-mapped formats reuse it), reading an already parsed object,
 * JSON type names and the error-text helper. The generic text helpers (numbers, base64, JSON
 * strings, UTF-8) are base/text.h's, included here for the encodings' convenience. */
#ifndef RECD_MSG_FIELDS_H
#define RECD_MSG_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/text.h"
#include "base/why.h" /* recd_why: the error text of every reader here */
#include "recd/message.h"

const char *msg_json_type_name(const json_t *j); /* "a string", "an array", ... */

/* A message as one JSON object (no newline); omit drops "type" and/or an event's "tick" (CSV
 * rows carry them in columns). */
#define MSG_OMIT_TYPE 1u
#define MSG_OMIT_TICK 2u
int msg_json_object(const recd_msg *m, recd_buf *out, unsigned omit);
/* recd_msg_from_json on an already parsed object. */
int msg_from_json_value(const json_t *root, recd_msg_format session_format, recd_msg *out,
                        char *err, size_t errlen);


#endif
