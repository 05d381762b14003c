/* SPDX-License-Identifier: MIT */
/* Growth of a recd_buf for writers that check the room inline, and of a plain array of items
 * (internal to librecd). */
#ifndef RECD_BASE_BUF_GROW_H
#define RECD_BASE_BUF_GROW_H

#include <stddef.h>

#include "recd/common.h"

/* recd_buf_reserve, never inlined: growth is rare, and its loop inlined into a hot writer makes
 * every call of that writer save and restore the registers the loop uses. */
int recd__buf_grow(recd_buf *b, size_t extra);

/* Room for item n of items, an array of *cap items of size bytes: when n == *cap it doubles (to
 * first items the first time). The array to use from now on, or NULL when out of memory (items
 * is then unchanged and still owned by the caller). */
void *recd__array_room(void *items, size_t *cap, size_t n, size_t size, size_t first);

#endif
