/* SPDX-License-Identifier: MIT */
/* Internal: every format descriptor, those of files (recd_format_at) and those only recorded
 * through sessions whose files are another entry's, for the layers that look a message format's
 * hooks up (message model, JSON, CSV). Defined in formats/format_table.c. */
#ifndef RECD_FORMAT_LIST_H
#define RECD_FORMAT_LIST_H

#include <stddef.h>

#include "recd/format.h"

/* The format table's entries in their order, then the session-only entries. */
size_t recd_format__all_count(void);
const recd_format *recd_format__all_at(size_t i); /* NULL when i >= recd_format__all_count() */
/* recd_msg_format values stay below this (formats with a larger value are not indexed). */
#define RECD_MSG_FORMAT_SLOTS 16

/* The descriptor (file or session-only) of a message format; NULL for NONE and unknown values.
 * Constant time: recd_msg_free() asks it for every message. */
const recd_format *recd_format__by_msg(recd_msg_format f);

#endif
