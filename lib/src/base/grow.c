/* SPDX-License-Identifier: MIT */
/* recd__array_room (base/buf_grow.h): the doubling growth of a plain array of items. */
#include "base/buf_grow.h"

#include <stdint.h>
#include <stdlib.h>

void *recd__array_room(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t want = *cap ? *cap * 2 : first;
    if (want < *cap || (size && want > SIZE_MAX / size))
        return NULL;
    void *grown = realloc(items, want * size);
    if (grown)
        *cap = want;
    return grown;
}
