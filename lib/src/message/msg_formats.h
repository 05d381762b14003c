/* SPDX-License-Identifier: MIT */
/* Internal: the message model's hooks of a format (struct recd_format_model, hung off its
 * descriptor as `model`): what an open, state or event of the format owns beyond the message
 * itself, and how it is freed and deep-copied. Each format defines its hooks in its folder;
 * msg.c finds them through the format list (recd/format_list.h), never by naming a format. */
#ifndef RECD_MSG_FORMATS_H
#define RECD_MSG_FORMATS_H

#include <stdbool.h>

#include "recd/format.h"
#include "recd/message.h"

struct recd_format_model {
    /* The open's member of the format (NULL: it has none). open_free releases it whatever the
     * open's format (a builder may leave the format unset); open_copy replaces dst's member, a
     * plain copy of src's so far, with a deep copy, or with NULL when out of memory (-ENOMEM). */
    void (*open_free)(recd_msg *m);
    int (*open_copy)(recd_msg *dst, const recd_msg *src);
    /* What a STATE or EVENT of the format owns; NULL: nothing (for events: the format has none).
     * *_free releases it; *_copy deep-copies it from src into dst, a plain copy of src so far:
     * 0, or -ENOMEM with dst's pointer set to NULL. */
    void (*state_free)(recd_msg *m);
    int (*state_copy)(recd_msg *dst, const recd_msg *src);
    void (*event_free)(recd_msg *m);
    int (*event_copy)(recd_msg *dst, const recd_msg *src);
    /* An event whose format is unset is this format's (events came from one format's sessions
     * only before others had them, and a builder may leave the format unset). One format says so. */
    bool owns_unformatted_events;
};

/* The descriptor of f (session-only formats included), or NULL for NONE and unknown values. */
const recd_format *msg_format_of(recd_msg_format f);
/* The descriptor that owns m's payload: its format's, or for an event without a format the one
 * whose model owns unformatted events. */
const recd_format *msg_format_of_msg(const recd_msg *m);
/* The descriptor whose model owns events without a format. */
const recd_format *msg_format_unformatted_events(void);

#endif
