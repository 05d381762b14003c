/* SPDX-License-Identifier: MIT */
/* Internal: the JSON lines hooks of a format (struct recd_format_json, hung off its descriptor as
 * `json`): the open's own key, how a state or event object is read and written, and how a line
 * says its format when the session's is not known. Each format defines its hooks beside its JSON
 * code; msg_json_read.c and msg_json_write.c find them through the format list. */
#ifndef RECD_MSG_JSON_FORMATS_H
#define RECD_MSG_JSON_FORMATS_H

#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "base/json_text.h"
#include "recd/format.h"
#include "recd/message.h"

struct recd_format_json {
    /* The open's key holding the format's header (its name, say), NULL: none. open_read reads
     * it (or reports it missing) from the open object into out; open_write appends it (with its
     * leading comma). 0, -EBADMSG with err, -EINVAL (cannot be written), -ENOMEM. */
    const char *open_key;
    int (*open_read)(const json_t *root, recd_msg *out, char *err, size_t errlen);
    int (*open_write)(const recd_msg *m, recd_buf *out);
    /* A state object into out (setting out->format), and a state's keys appended, each with a
     * leading comma. state_write NULL: the format's states are not written as JSON. */
    int (*state_read)(const json_t *root, recd_msg *out, char *err, size_t errlen);
    int (*state_write)(const recd_msg *m, recd_buf *out);
    /* The same for events; NULL: the format has no events. with_tick: write the event's tick. */
    int (*event_read)(const json_t *root, recd_msg *out, char *err, size_t errlen);
    int (*event_write)(const recd_msg *m, bool with_tick, recd_buf *out);
    /* Without a session format: true when a state / event object is this format's by its keys.
     * Asked in the format list's order (formats/format_table.c), so a format whose keys are a
     * subset of another's comes after it. NULL: never. */
    bool (*state_sniff)(const json_t *root);
    bool (*event_sniff)(const json_t *root);
    /* A state object no format claims by its keys is this format's. One format says so. */
    bool state_fallback;
    /* Optional: reads the hot line (no newline) without building a tree. Returns 1 with *out
     * filled exactly as the jansson reader would fill it, or 0 to decline (anything unsure, and
     * every error): the jansson reader then reads the line. Asked for lines of its format's
     * sessions and, when its format is the state fallback, for lines without a session format
     * (it then tells the formats apart itself, and declines a line of any other). */
    int (*fast_state)(const char *line, size_t len, recd_msg_format session_format, recd_msg *out);
};

typedef int (*msg_json_fast_fn)(const char *line, size_t len, recd_msg_format session_format,
                                recd_msg *out);
/* The fast reader for lines of session_format (NONE included), or NULL. Constant time: the wire
 * asks it for every NDJSON line. */
msg_json_fast_fn msg_json_fast_reader(recd_msg_format session_format);

/* The descriptor of f when it has JSON hooks, or NULL. */
const recd_format *msg_json_format_of(recd_msg_format f);
/* The i-th format with JSON hooks from the end of the format list down (the order in which opens
 * check their format keys), NULL past the first. */
const recd_format *msg_json_format_back(size_t i);
/* The descriptor that writes m: its format's, or for an event without a format the one that owns
 * such events (msg_formats.h). */
const recd_format *msg_json_format_of_msg(const recd_msg *m);
/* Without a session format: the format of a state or event object, by its keys; a state nobody
 * claims is the fallback's, an event the owner's of unformatted events. */
const recd_format *msg_json_state_sniff(const json_t *root);
const recd_format *msg_json_event_sniff(const json_t *root);

/* recd_msg_from_json through jansson only: the reference the fast readers are fuzzed against. */
int msg_from_json_jansson(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out, char *err, size_t errlen);

/* Keys every message may have. */
#define MSG_JSON_COMMON_KEYS "type", "session", "seq", "save"

#endif
