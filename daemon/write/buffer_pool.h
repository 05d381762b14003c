/* SPDX-License-Identifier: MIT */
/* Recycled large byte buffers for the writer's batches (loop thread only). A busy session fills
 * one flush.buffer_size batch per flush; growing each from a few hundred bytes by doubling, then
 * freeing it after the write, costs more (realloc copies, fresh pages, mmap/munmap of the large
 * ones) than the bytes copied into it. Small batches, the common case of thousands of quiet
 * sessions, keep plain small allocations. */
#ifndef RECD_DAEMON_BUFFER_POOL_H
#define RECD_DAEMON_BUFFER_POOL_H

#include <stddef.h>

#include "recd/common.h"

#define BUFFER_POOL_MIN (16u * 1024u)   /* a buffer that needs this much moves into the pool's */
#define BUFFER_POOL_SIZE (72u * 1024u) /* size of a pooled buffer (at least): flush.buffer_size's
                                          default of 64 KiB plus the message that crosses it */
#define BUFFER_POOL_SLOTS 64u
#define BUFFER_POOL_MAX_BYTES (16u << 20)    /* memory the pool may hold while unused */

typedef struct buffer_pool {
    recd_buf idle[BUFFER_POOL_SLOTS];
    size_t count;
    size_t bytes; /* capacity held by idle buffers */
} buffer_pool;

/* Makes room for extra more bytes in b. Once b needs BUFFER_POOL_MIN bytes it moves into a pooled
 * buffer (its bytes are copied once); smaller needs grow b as recd_buf_reserve() does. 0 or
 * -ENOMEM. */
int buffer_pool_reserve(buffer_pool *p, recd_buf *b, size_t extra);
/* Gives an empty b room for about hint bytes ahead of use, so that it does not grow by copies. A
 * hint of BUFFER_POOL_MIN or more gets a pooled buffer: an idle one, else a new one (grown like
 * any pooled buffer if the batch outgrows it). The writer calls this when a batch's first bytes
 * arrive, with the size the session's last batch reached: a session that went quiet takes
 * nothing, and one that slowed down holds one pooled buffer until its next flush, whose smaller
 * size becomes the next hint. Best effort: b may be left as it was. */
void buffer_pool_prepare(buffer_pool *p, recd_buf *b, size_t hint);
/* Takes b's memory back into the pool when it is a pooled size and there is room, else frees it.
 * b is left empty. */
void buffer_pool_release(buffer_pool *p, recd_buf *b);
void buffer_pool_free(buffer_pool *p);

#endif
