/* SPDX-License-Identifier: MIT */
/* Internal: every format descriptor, those of files (recd_format_at) and those only recorded
 * through sessions whose files are another entry's, for the layers that look a message format's
 * hooks up (message model, JSON, CSV). Defined in formats/format_table.c. */
#ifndef RECD_FORMAT_LIST_H
#define RECD_FORMAT_LIST_H

#include <stdatomic.h>
#include <stddef.h>

#include "recd/format.h"

/* The format table's entries in their order, then the session-only entries. */
size_t recd_format__all_count(void);
const recd_format *recd_format__all_at(size_t i); /* NULL when i >= recd_format__all_count() */
/* recd_msg_format values stay below this (formats with a larger value are not indexed). */
#define RECD_MSG_FORMAT_SLOTS 16

/* recd_format__by_msg's index by message format (NULL: NONE, unused, or not built yet), filled
 * from the lists on first use. Atomic so that a reader racing the building is defined; a relaxed
 * load is a plain load. Read it through recd_format__by_msg. */
extern _Atomic(const recd_format *) recd_format__msg_slots[RECD_MSG_FORMAT_SLOTS];
/* recd_format__by_msg for an empty slot: builds the index once (any thread), then answers. */
const recd_format *recd_format__by_msg_built(recd_msg_format f);

/* The descriptor (file or session-only) of a message format; NULL for NONE and unknown values.
 * Inline, one compare and one load once built: recd_msg_free() and the wire's block path (a
 * format's hooks, ->wire) ask it for every message. */
static inline const recd_format *recd_format__by_msg(recd_msg_format f)
{
    if ((size_t)f >= RECD_MSG_FORMAT_SLOTS)
        return NULL;
    const recd_format *d = atomic_load_explicit(&recd_format__msg_slots[f], memory_order_relaxed);
    return d ? d : recd_format__by_msg_built(f);
}

#endif
