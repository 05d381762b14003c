/* Recycled large byte buffers for the writer's batches (see buffer_pool.h). */
#include "buffer_pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int buffer_pool_reserve(buffer_pool *p, recd_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return -ENOMEM;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    if (need < BUFFER_POOL_MIN || b->cap >= BUFFER_POOL_SIZE)
        return recd_buf_reserve(b, extra); /* small, or already pooled: plain growth */
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
            return recd_buf_reserve(b, extra);
        }
        big.data = d;
        big.cap = cap;
    }
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
    if (p->count) {
        free(b->data);
        *b = p->idle[--p->count];
        p->bytes -= b->cap;
        b->len = 0;
        return;
    }
    uint8_t *d = malloc(BUFFER_POOL_SIZE);
    if (!d)
        return;
    free(b->data);
    *b = (recd_buf){.data = d, .cap = BUFFER_POOL_SIZE};
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
