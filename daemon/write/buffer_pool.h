/* SPDX-License-Identifier: MIT */
/* Recycled large byte buffers for the writer's batches (loop thread only). A busy session fills
 * one flush.buffer_size batch per flush; growing each from a few hundred bytes by doubling, then
 * freeing it after the write, costs more (realloc copies, fresh pages, mmap/munmap of the large
 * ones) than the bytes copied into it. Small batches, the common case of thousands of quiet
 * sessions, keep plain small allocations.
 *
 * Pooled buffers are fixed-size slots carved from slabs of BUFFER_POOL_SLAB bytes, the first one
 * faulted in ahead of the load (MADV_POPULATE_WRITE at start); once the slabs exist the steady
 * state touches no new memory. With huge_pages (limits.batch_huge_pages) slabs are mapped with
 * MADV_HUGEPAGE: one fault per 2 MiB where there were 512, but each zeroes 2 MiB at once, which
 * doubled the loop's CPU in S2 on the benchmark machine (docs/performance.md), so it is off by
 * default. Free slots are reused last-in first-out, so the
 * busy sessions cycle through the same few, cache-hot slots. Past BUFFER_POOL_SLAB_MAX, or where
 * mapping fails, buffers come from malloc as before. */
#ifndef RECD_DAEMON_BUFFER_POOL_H
#define RECD_DAEMON_BUFFER_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#define BUFFER_POOL_MIN (16u * 1024u)   /* a buffer that needs this much moves into the pool's */
#define BUFFER_POOL_SIZE (96u * 1024u) /* size of a pooled buffer (at least): flush.buffer_size's
                                          default of 64 KiB plus the message that crosses it, up
                                          to 32 KiB (a CARLA frame of 200 actors is 16.4 KB) */
#define BUFFER_POOL_SLOTS 64u
#define BUFFER_POOL_MAX_BYTES (16u << 20)    /* malloc'd memory the pool may hold while unused */
#define BUFFER_POOL_SLAB (4u << 20)          /* one mapping: two huge pages, 42 slots */
#define BUFFER_POOL_SLAB_MAX 128u            /* slabs at most (512 MiB), then malloc */
#define BUFFER_POOL_SLAB_SLOTS (BUFFER_POOL_SLAB / BUFFER_POOL_SIZE)

typedef struct buffer_pool {
    recd_buf idle[BUFFER_POOL_SLOTS]; /* malloc'd buffers of at least BUFFER_POOL_SIZE */
    size_t count;
    size_t bytes; /* capacity held by idle buffers */
    uint8_t *slabs[BUFFER_POOL_SLAB_MAX];
    size_t nslabs;
    uint8_t **free_slots; /* stack of unused slots, room for every slot of every slab */
    size_t nfree;
    size_t slots_cap;
    size_t slab_faults; /* slabs mapped (tests, logs) */
    bool huge_pages;    /* limits.batch_huge_pages: MADV_HUGEPAGE on new slabs */
} buffer_pool;

/* Makes room for extra more bytes in b. Once b needs BUFFER_POOL_MIN bytes it moves into a pooled
 * buffer (its bytes are copied once); smaller needs grow b as recd_buf_reserve() does. A slot
 * that is outgrown is traded for a malloc'd buffer. 0 or -ENOMEM. */
int buffer_pool_reserve(buffer_pool *p, recd_buf *b, size_t extra);
/* Gives an empty b room for about hint bytes ahead of use, so that it does not grow by copies. A
 * hint of BUFFER_POOL_MIN or more gets a pooled buffer: a free slot, else a new one (grown like
 * any pooled buffer if the batch outgrows it). The writer calls this when a batch's first bytes
 * arrive, with the size the session's last batch reached: a session that went quiet takes
 * nothing, and one that slowed down holds one pooled buffer until its next flush, whose smaller
 * size becomes the next hint. Best effort: b may be left as it was. */
void buffer_pool_prepare(buffer_pool *p, recd_buf *b, size_t hint);
/* Takes b's memory back into the pool when it is a slot, or a pooled size with room, else frees
 * it. b is left empty. Every batch buffer must be given back here (never to free()): it may be
 * a slot. */
void buffer_pool_release(buffer_pool *p, recd_buf *b);
/* Maps one slab and faults it in ahead of use (start-up): 0 or -ENOMEM. */
int buffer_pool_preload(buffer_pool *p);
void buffer_pool_free(buffer_pool *p);

#endif
