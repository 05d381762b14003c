/* SPDX-License-Identifier: MIT */
/* Recycled large byte buffers for the writer's batches (see buffer_pool.h). */
#include "buffer_pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An empty pooled buffer of at least need bytes: an idle one (grown if need be), else a new one.
 * Empty (no data) when out of memory. */
static recd_buf take_pooled(buffer_pool *p, size_t need)
{
    recd_buf big = {0};
    if (p->count) {
        big = p->idle[--p->count];
        p->bytes -= big.cap;
    }
    if (big.cap < need) {
        size_t cap = need > BUFFER_POOL_SIZE ? need : BUFFER_POOL_SIZE;
        uint8_t *d = realloc(big.data, cap);
        if (!d) {
            free(big.data);
            return (recd_buf){0};
        }
        big.data = d;
        big.cap = cap;
    }
    big.len = 0;
    return big;
}

int buffer_pool_reserve(buffer_pool *p, recd_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -ENOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    if (need < BUFFER_POOL_MIN || b->cap >= BUFFER_POOL_SIZE)
        return recd_buf_reserve(b, extra); /* small, or already pooled: plain growth */
    recd_buf big = take_pooled(p, need);
    if (!big.data)
        return recd_buf_reserve(b, extra);
    if (b->len)
        memcpy(big.data, b->data, b->len);
    big.len = b->len;
    free(b->data);
    *b = big;
    return 0;
}

void buffer_pool_prepare(buffer_pool *p, recd_buf *b, size_t hint)
{
    if (b->len || hint <= b->cap)
        return;
    if (hint < BUFFER_POOL_MIN) {
        (void)recd_buf_reserve(b, hint);
        return;
    }
    recd_buf big = take_pooled(p, BUFFER_POOL_SIZE);
    if (!big.data)
        return;
    free(b->data);
    *b = big;
}

void buffer_pool_release(buffer_pool *p, recd_buf *b)
{
    if (b->cap >= BUFFER_POOL_SIZE && p->count < BUFFER_POOL_SLOTS &&
        p->bytes + b->cap <= BUFFER_POOL_MAX_BYTES) {
        b->len = 0;
        p->idle[p->count++] = *b;
        p->bytes += b->cap;
    } else {
        free(b->data);
    }
    memset(b, 0, sizeof *b);
}

void buffer_pool_free(buffer_pool *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->idle[i].data);
    memset(p, 0, sizeof *p);
}
