/* SPDX-License-Identifier: MIT */
/* Growth of a recd_buf for writers that check the room inline (internal to librecd). */
#ifndef RECD_BASE_BUF_GROW_H
#define RECD_BASE_BUF_GROW_H

#include <stddef.h>

#include "recd/common.h"

/* recd_buf_reserve, never inlined: growth is rare, and its loop inlined into a hot writer makes
 * every call of that writer save and restore the registers the loop uses. */
int recd__buf_grow(recd_buf *b, size_t extra);

#endif
