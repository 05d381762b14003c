/* SPDX-License-Identifier: MIT */
/* Internal: the message model's table of formats, one entry per recd_msg_format with what differs
 * between them in the model: name, file extension, and what a state or event owns (how it is
 * freed and deep-copied). Each entry lives with its format's model code (msg_samp.c,
 * msg_recap.c, formats/carla/carla_msg.c); msg.c only looks entries up. The wire's own table is
 * wire/wire_formats.h. */
#ifndef RECD_MSG_FORMATS_H
#define RECD_MSG_FORMATS_H

#include "recd/message.h"

typedef struct msg_format {
    recd_msg_format format;
    const char *name;      /* "samp-onfoot", ...: the configuration's and JSON's "format" */
    const char *extension; /* of its files, without the dot */
    /* What a STATE or EVENT of the format owns beyond the message itself; NULL: nothing (for
     * events: the format has none). *_free releases it; *_copy deep-copies it from src into dst,
     * a plain copy of src so far: 0, or -ENOMEM with dst's pointer set to NULL. */
    void (*state_free)(recd_msg *m);
    int (*state_copy)(recd_msg *dst, const recd_msg *src);
    void (*event_free)(recd_msg *m);
    int (*event_copy)(recd_msg *dst, const recd_msg *src);
} msg_format;

/* Room for every recd_msg_format value (msg_formats.c checks that the enum fits). */
#define MSG_FORMAT_SLOTS 8

/* The entries, in msg_formats.c, indexed by recd_msg_format (NULL: NONE and unused slots). */
extern const msg_format *const msg_format_table[MSG_FORMAT_SLOTS];

/* The entry of f, or NULL for RECD_MSG_FMT_NONE and values outside the enum. */
static inline const msg_format *msg_format_of(recd_msg_format f)
{
    return (size_t)f < MSG_FORMAT_SLOTS ? msg_format_table[f] : NULL;
}

/* The entry that owns m's payload: its format's, where an event without a format is a Recap
 * event (events came from Recap sessions only before CARLA's, and a builder may leave the format
 * unset). Inline: recd_msg_free() asks it for every message a decoder hands on. */
static inline const msg_format *msg_format_of_msg(const recd_msg *m)
{
    if (m->type == RECD_MSG_EVENT && m->format == RECD_MSG_FMT_NONE)
        return msg_format_table[RECD_MSG_FMT_RECAP];
    return msg_format_of(m->format);
}

#endif
